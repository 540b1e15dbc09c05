// WatchlistIndex: one Watchlist's names and identifiers, normalized once, with the inverted
// indexes that let a search score a small fraction of the list.
//
// Names. Every primary name and alias is normalized (NameNormalizer) into tokens; distinct
// tokens form the vocabulary. A search:
//  1. For each query token, finds the vocabulary tokens whose pair score (TokenPairSimilarity)
//     is at least IndexOptions::token_min_similarity: exact lookup, then the tokens sharing
//     enough padded character trigrams with it, checked by the pair score itself.
//  2. Bounds, for every name holding such a token, the score it could reach: answered query
//     tokens count with their best pair score, the others with token_min_similarity, weighted
//     by length. Names whose bound falls short of the minimum asked for are not scored.
//  3. Scores each candidate with TokenSimilarity (the same score as a full scan), keeps each
//     entry's best-scoring name, and returns entries at or above the minimum, best first.
// When the query or a name comes from a script whose transliteration leaves vowels out or
// guesses them (NormalizedName::vowels_uncertain), they are also compared by vowel-insensitive
// keys, token by token and as whole names; such a match scores at most
// IndexOptions::vowel_insensitive_weight, so that it asks for review, never a block on its own.
//
// Identifiers. BICs, IBANs, account, passport and registration numbers are matched exactly
// after removing spaces, dots, hyphens and slashes and upper-casing; a BIC also matches the
// other branches of its institution (its first 8 characters).
//
// The index finds what a full scan with the same scores finds, except in pathological cases
// of step 1 (a token pair scoring above the bound while sharing almost no trigram); the test
// compares the two on the labelled query set (watchlist_index_test.cc).
//
// Thread safety: immutable after Build; Search may run concurrently from any number of threads.
#ifndef VIGIL_SCREENING_WATCHLIST_INDEX_H_
#define VIGIL_SCREENING_WATCHLIST_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/screening/name_normalizer.h"
#include "vigil/screening/watchlist.h"

namespace vigil::screening {

struct IndexOptions {
  // Step 1: the least pair score for which a list token counts as answering a query token.
  double token_min_similarity = 0.70;
  // Step 2: a name is a candidate when sum_i w_i * v_i >= min_score - coverage_slack, w_i being
  // query token i's share of the query's bytes and v_i the best pair score of a name token
  // answering it, or token_min_similarity when none does.
  double coverage_slack = 0.03;
  // The most a vowel-insensitive match may score.
  double vowel_insensitive_weight = 0.94;
};

// One entry a search found.
struct WatchlistMatch {
  uint32_t entry = 0;       // position in watchlist().entries()
  uint32_t name_index = 0;  // 0: the primary name; k > 0: aliases[k - 1]
  double score = 0.0;       // in [0, 1]; 1 for identifier matches
  bool by_identifier = false;
  uint32_t identifier_index = 0;  // by_identifier: position in the entry's identifiers
};

struct SearchOptions {
  double min_score = 0.88;
  size_t max_hits = 10;
};

// What one search touched: the share of the list it looked at (benchmarks, docs).
struct SearchCost {
  size_t trigram_postings = 0;  // vocabulary entries of the query tokens' trigrams walked
  size_t tokens_checked = 0;  // vocabulary tokens whose pair score was computed
  size_t names_touched = 0;   // names holding an answering token
  size_t names_scored = 0;    // candidates scored with TokenSimilarity
};

class WatchlistIndex {
 public:
  // Normalizes every name of "list". Fails only on a normalizer that cannot run.
  static absl::StatusOr<std::shared_ptr<const WatchlistIndex>> Build(
      std::shared_ptr<const Watchlist> list, std::shared_ptr<const NameNormalizer> normalizer,
      IndexOptions options = {});
  ~WatchlistIndex();

  const Watchlist& watchlist() const { return *list_; }
  const NameNormalizer& normalizer() const { return *normalizer_; }
  // The entry's primary name (name_index 0) or alias.
  const std::string& NameOf(const WatchlistMatch& match) const;

  // Entries whose best name scores at least options.min_score against "query" (normalized by
  // normalizer()), best first (ties: list order), at most options.max_hits. Appends to "out".
  void SearchName(const NormalizedName& query, const SearchOptions& options,
                  std::vector<WatchlistMatch>& out, SearchCost* cost = nullptr) const;
  // The same by scoring every name: the reference the index is checked against.
  void ScanName(const NormalizedName& query, const SearchOptions& options,
                std::vector<WatchlistMatch>& out) const;
  // Entries listing "identifier" (score 1), in list order. Appends to "out".
  void SearchIdentifier(std::string_view identifier, std::vector<WatchlistMatch>& out) const;

  struct Stats {
    size_t names = 0;           // primary names and aliases with at least one token
    size_t vocabulary = 0;      // distinct tokens
    size_t postings = 0;        // (token, name) pairs
    size_t identifiers = 0;     // identifier keys
    size_t memory_bytes = 0;    // heap held by the index, the Watchlist excluded
  };
  Stats stats() const;

 private:
  struct Data;
  WatchlistIndex(std::shared_ptr<const Watchlist> list,
                 std::shared_ptr<const NameNormalizer> normalizer, std::unique_ptr<Data> data);

  std::shared_ptr<const Watchlist> list_;
  std::shared_ptr<const NameNormalizer> normalizer_;
  std::unique_ptr<Data> data_;
};

// An identifier as the index keys it: upper case, without spaces, dots, hyphens and slashes.
std::string NormalizeIdentifier(std::string_view identifier);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_WATCHLIST_INDEX_H_
