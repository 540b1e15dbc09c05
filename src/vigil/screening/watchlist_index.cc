#include "vigil/screening/watchlist_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "vigil/screening/jaro_winkler.h"
#include "vigil/screening/name_similarity.h"

namespace vigil::screening {
namespace {

// Trigrams of "^token$", with the token's first-letter class, are hashed into this many
// buckets: collisions are rare and only cost a spurious pair check.
constexpr uint32_t kTrigramBuckets = 1u << 18;
// Query tokens of at most this many bytes are compared with every vocabulary token of at most
// kShortToken bytes with the same first byte, besides those sharing trigrams: a substitution
// in the middle of a 3-byte token leaves it no trigram in common with the original ("mhm" and
// "mnm" score 0.8), and longer tokens keep one.
constexpr size_t kShortQuery = 3;
constexpr size_t kShortToken = 4;
// Query tokens beyond this many are scored but not used to find candidates (names with more
// tokens than this are rare; the mask is one word).
constexpr size_t kMaxMaskedTokens = 32;

uint32_t Symbol(char c) {
  if (c >= 'a' && c <= 'z') return static_cast<uint32_t>(c - 'a' + 1);
  if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0' + 27);
  return 0;  // the padding, and any byte a normalizer would not leave
}

// Calls f(bucket) for each trigram of "^token$" (a token of one byte has one: "^a$"). The
// bucket also depends on the token's first-letter class (FirstLetterClass): tokens of different
// classes are never paired, so they need not share postings.
template <typename F>
void ForEachTrigram(std::string_view token, F&& f) {
  const size_t n = token.size() + 2;
  const uint32_t salt = static_cast<uint8_t>(FirstLetterClass(token)) * 50653u;  // 37^3
  auto at = [&](size_t i) -> uint32_t { return i == 0 || i == n - 1 ? 0 : Symbol(token[i - 1]); };
  for (size_t i = 0; i + 3 <= n; ++i) {
    const uint32_t t = (at(i) * 37 + at(i + 1)) * 37 + at(i + 2) + salt;
    f((t * 2654435761u) >> 14 & (kTrigramBuckets - 1));
  }
}

bool IsBicShaped(std::string_view s) {
  if (s.size() != 8 && s.size() != 11) return false;
  for (size_t i = 0; i < 6; ++i) {
    if (s[i] < 'A' || s[i] > 'Z') return false;
  }
  for (size_t i = 6; i < s.size(); ++i) {
    const char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// Compressed sparse rows: the ids listed under each key 0..n-1.
struct Postings {
  std::vector<uint32_t> offsets;  // size keys + 1
  std::vector<uint32_t> ids;

  // "pairs" is (key, id); keys < key_count.
  static Postings From(size_t key_count, std::vector<std::pair<uint32_t, uint32_t>> pairs) {
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    Postings p;
    p.offsets.assign(key_count + 1, 0);
    for (const auto& [key, id] : pairs) ++p.offsets[key + 1];
    for (size_t k = 0; k < key_count; ++k) p.offsets[k + 1] += p.offsets[k];
    p.ids.reserve(pairs.size());
    for (const auto& kv : pairs) p.ids.push_back(kv.second);
    return p;
  }
  const uint32_t* begin(uint32_t key) const { return ids.data() + offsets[key]; }
  const uint32_t* end(uint32_t key) const { return ids.data() + offsets[key + 1]; }
  size_t bytes() const { return (offsets.capacity() + ids.capacity()) * sizeof(uint32_t); }
};

// Per-thread working memory of a search, sized to the largest index searched on the thread.
struct SearchScratch {
  uint32_t token_epoch = 0;  // one per query token (trigram counts)
  uint32_t search_epoch = 0;  // one per search (answers, names)
  std::vector<uint32_t> token_stamp;  // per vocabulary token: epoch of its last count
  std::vector<uint16_t> token_count;  // shared trigrams with the current query token
  std::vector<uint32_t> touched_tokens;

  // The query tokens each vocabulary token answers, as linked lists in "answers".
  struct Answer {
    uint32_t next;  // index + 1 in answers; 0 ends the list
    uint32_t query_token;
    float score;
  };
  std::vector<uint32_t> answer_stamp;  // per vocabulary token: search_epoch when it has answers
  std::vector<uint32_t> answer_head;   // per vocabulary token: index + 1 of its first answer
  std::vector<Answer> answers;

  // Names touched by this search: a bitmap (a 100,000-entry list's names fit in a few dozen
  // KiB, so membership stays in cache), and the touched names' vowel-insensitive marks, which
  // only names from vowel-uncertain scripts or queries get.
  std::vector<uint64_t> touched_bits;
  struct VowelMark {
    uint32_t mask = 0;      // query tokens whose vowel-insensitive key the name holds
    bool whole_key = false;  // the whole name's vowel-insensitive key matched
  };
  absl::flat_hash_map<uint32_t, VowelMark> vowel_marks;
  std::vector<uint32_t> touched_names;
  std::vector<float> bounds;  // step 2's bound of touched_names[k], for those the walk bounded

  std::vector<std::pair<uint32_t, float>> answered;  // (vocabulary id, pair score), one token
  std::vector<uint64_t> volume;                      // postings behind each query token
  std::vector<std::vector<uint32_t>> answered_lists;  // per query token: answering vocabulary
  std::vector<float> best;                           // per query token, for one name
  std::vector<float> weights;                        // per query token: its share of the bytes
  std::vector<std::string_view> query_tokens, candidate_keys;
  std::vector<uint32_t> order;  // query tokens by postings, most first
  std::vector<size_t> query_lengths, candidate_lengths;

  // Pair scores of the first kCachedTokens query tokens against vocabulary tokens, for one
  // search: NaN until computed; -1 for tokens in different phonetic classes.
  static constexpr size_t kCachedTokens = 8;
  std::vector<uint32_t> pair_stamp;  // per vocabulary token: search_epoch of its cached scores
  std::vector<double> pair_cache;    // kCachedTokens per vocabulary token
  double* CachedPairs(uint32_t v) {
    double* row = pair_cache.data() + static_cast<size_t>(v) * kCachedTokens;
    if (pair_stamp[v] != search_epoch) {
      pair_stamp[v] = search_epoch;
      std::fill(row, row + kCachedTokens, std::numeric_limits<double>::quiet_NaN());
    }
    return row;
  }
  std::vector<WatchlistMatch> matches;

  void Begin(size_t vocabulary, size_t name_count) {
    if (++search_epoch == 0) {  // wrapped: forget every stamp
      std::fill(answer_stamp.begin(), answer_stamp.end(), 0);
      std::fill(pair_stamp.begin(), pair_stamp.end(), 0);
      search_epoch = 1;
    }
    if (token_stamp.size() < vocabulary) {
      token_stamp.resize(vocabulary, 0);
      token_count.resize(vocabulary, 0);
      answer_stamp.resize(vocabulary, 0);
      answer_head.resize(vocabulary, 0);
      pair_stamp.resize(vocabulary, 0);
      pair_cache.resize(vocabulary * kCachedTokens);
    }
    if (touched_bits.size() < (name_count + 63) / 64) touched_bits.resize((name_count + 63) / 64, 0);
    touched_names.clear();
    vowel_marks.clear();
    answers.clear();
  }
  // Starts counting trigrams for a new query token.
  void NextToken() {
    if (++token_epoch == 0) {
      std::fill(token_stamp.begin(), token_stamp.end(), 0);
      token_epoch = 1;
    }
    touched_tokens.clear();
  }
  void AddAnswer(uint32_t vocabulary_id, uint32_t query_token, float score) {
    if (answer_stamp[vocabulary_id] != search_epoch) {
      answer_stamp[vocabulary_id] = search_epoch;
      answer_head[vocabulary_id] = 0;
    }
    answers.push_back({answer_head[vocabulary_id], query_token, score});
    answer_head[vocabulary_id] = static_cast<uint32_t>(answers.size());
  }
  // Adds "name" to the touched names; false when it was touched already.
  bool Touch(uint32_t name) {
    uint64_t& word = touched_bits[name >> 6];
    const uint64_t bit = uint64_t{1} << (name & 63);
    if ((word & bit) != 0) return false;
    word |= bit;
    touched_names.push_back(name);
    return true;
  }
  // Clears the bitmap for the next search (touched names only: the bitmap stays all zero).
  void Untouch() {
    for (uint32_t name : touched_names) touched_bits[name >> 6] = 0;
  }
};

SearchScratch& ThreadScratch() {
  thread_local SearchScratch scratch;
  return scratch;
}

// A token's letters as a thermometer code: two bits per letter a..z (bits 0-51), 01 for one
// occurrence and 11 for two or more; popcount of the AND of two signatures' low 52 bits is then
// the number of letters the two tokens can match with counts capped at 2. Bits 52-59 hold the
// length (255 for 255 or more); the top bit marks a token with a letter three or more times (or
// a digit), for which the cap would undercount: no letter bound is taken from such signatures.
// Bits set in x, without the libgcc call __builtin_popcountll makes without -mpopcnt.
size_t PopCount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<size_t>((x * 0x0101010101010101ULL) >> 56);
}

size_t SignatureLength(uint64_t sig) { return static_cast<size_t>(sig >> 52 & 0xff); }

uint64_t LetterSignature(std::string_view token) {
  uint8_t counts[26] = {};
  bool inexact = false;
  for (char c : token) {
    if (c >= 'a' && c <= 'z') {
      if (++counts[c - 'a'] >= 3) inexact = true;
    } else {
      inexact = true;
    }
  }
  uint64_t sig = inexact ? uint64_t{1} << 63 : 0;
  sig |= static_cast<uint64_t>(std::min<size_t>(token.size(), 255)) << 52;
  for (int l = 0; l < 26; ++l) {
    if (counts[l] >= 1) sig |= uint64_t{1} << (2 * l);
    if (counts[l] >= 2) sig |= uint64_t{2} << (2 * l);
  }
  return sig;
}

// An upper bound of TokenPairSimilarity for tokens of lengths a and b, from the letters the two
// can have in common (the Jaro matches are at most that many), a common prefix of at most
// "prefix" bytes (Winkler's boost) and the length penalty.
double PairSimilarityBound(size_t a, uint64_t a_sig, size_t b, uint64_t b_sig, size_t prefix) {
  size_t m = std::min(a, b);
  if (((a_sig | b_sig) >> 63) == 0) {
    constexpr uint64_t kLetters = (uint64_t{1} << 52) - 1;
    m = std::min<size_t>(m, PopCount(a_sig & b_sig & kLetters));
  }
  if (m == 0) return 0.0;
  const double jaro = (static_cast<double>(m) / a + static_cast<double>(m) / b + 1.0) / 3.0;
  const double jw = jaro + 0.1 * static_cast<double>(std::min<size_t>(prefix, 4)) * (1.0 - jaro);
  const double r = static_cast<double>(std::min(a, b)) / static_cast<double>(std::max(a, b));
  return r < 0.9 ? jw * (1.0 - 0.3 * (1.0 - r)) : jw;
}

// Trigrams a vocabulary token must share with a query token of "trigrams" trigrams (its
// length) to be scored: one up to 6 bytes, where one substitution already destroys three of
// at most six; then a quarter. Measured against a full scan on the SDN sample
// (watchlist_index_test.cc): every pair scoring 0.88 or more shares this many.
size_t NeededTrigrams(size_t trigrams) { return trigrams <= 6 ? 1 : (trigrams + 3) / 4; }

// The concatenation of the tokens' vowel-insensitive keys, in name order: "abd allah" and
// "abdullah" both give "bdllh".
std::string WholeKey(const std::vector<std::string>& tokens) {
  std::string joined;
  for (const std::string& t : tokens) joined += t;
  return VowelInsensitiveKey(joined);
}

}  // namespace

struct WatchlistIndex::Data {
  IndexOptions options;

  struct Name {
    uint32_t entry;
    uint32_t name_index;
    uint32_t token_begin;  // into name_tokens
    uint16_t token_count;
    bool vowels_uncertain;
  };
  std::vector<Name> names;
  std::vector<uint32_t> name_tokens;  // vocabulary ids, in name order

  std::vector<std::string> vocabulary;
  std::vector<std::string> vocabulary_keys;  // VowelInsensitiveKey of each token
  // Per token, read together before its bytes: LetterSignature and the first 4 bytes.
  struct TokenHead {
    uint64_t signature;
    char first[4];
  };
  std::vector<TokenHead> vocabulary_heads;
  absl::flat_hash_map<std::string_view, uint32_t> token_ids;  // views into vocabulary
  Postings token_names;                                       // vocabulary id -> names
  // The same postings with each name's first tokens inline, so that a search bounds a name's
  // score while reading the postings front to back (step 2), without a lookup per name.
  struct NameRef {
    static constexpr uint32_t kNone = UINT32_MAX;      // no token in this slot
    static constexpr uint32_t kMore = UINT32_MAX - 1;  // slot 3: the name has more tokens
    uint32_t name;
    uint32_t tokens[4];
  };
  std::vector<NameRef> name_refs;  // in token_names order
  Postings trigram_tokens;                                    // trigram bucket -> vocabulary ids
  // Tokens of at most kShortToken bytes by first byte (kShortQuery).
  std::vector<std::vector<uint32_t>> short_tokens{256};

  absl::flat_hash_map<std::string, std::vector<uint32_t>> key_tokens;  // key -> vocabulary ids
  // key -> the vowel-uncertain names holding a token with that key
  absl::flat_hash_map<std::string, std::vector<uint32_t>> uncertain_key_names;
  bool has_uncertain_names = false;  // some name came from a vowel-uncertain script
  absl::flat_hash_map<std::string, std::vector<uint32_t>> whole_keys;  // whole key -> names
  std::vector<std::string> name_whole_keys;                            // per name

  class NameSearch;  // SearchName's steps

  // Identifier key -> (entry, position in its identifiers).
  absl::flat_hash_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> identifiers;

  // Scores name n against the query, both ways when either side is vowel-uncertain.
  double Score(uint32_t n, const NormalizedName& query, absl::Span<const std::string_view> q_tokens,
               absl::Span<const std::string_view> q_keys, const std::string& q_whole,
               SearchScratch& s) const {
    const Name& name = names[n];
    const uint32_t* tokens = name_tokens.data() + name.token_begin;
    s.query_lengths.resize(q_tokens.size());
    for (size_t i = 0; i < q_tokens.size(); ++i) s.query_lengths[i] = q_tokens[i].size();
    s.candidate_lengths.resize(name.token_count);
    for (uint32_t k = 0; k < name.token_count; ++k) {
      s.candidate_lengths[k] = SignatureLength(vocabulary_heads[tokens[k]].signature);
      if (s.candidate_lengths[k] == 255) s.candidate_lengths[k] = vocabulary[tokens[k]].size();
    }
    // Pair scores are cached per (query token, vocabulary token) for the whole search: the
    // candidates of one query share most of their tokens.
    double score = AlignedTokenSimilarity(s.query_lengths, s.candidate_lengths,
                                          [&](size_t i, size_t k) -> double {
      const uint32_t v = tokens[k];
      double* cached = i < SearchScratch::kCachedTokens ? &s.CachedPairs(v)[i] : nullptr;
      if (cached != nullptr && !std::isnan(*cached)) return *cached;
      const std::string_view q = q_tokens[i];
      const std::string& c = vocabulary[v];
      const double pair =
          FirstLetterClass(q) == FirstLetterClass(c) ? TokenPairSimilarity(q, c) : -1.0;
      if (cached != nullptr) *cached = pair;
      return pair;
    });
    if (query.vowels_uncertain || name.vowels_uncertain) {
      s.candidate_keys.clear();
      for (uint32_t k = 0; k < name.token_count; ++k) {
        s.candidate_keys.push_back(vocabulary_keys[name_tokens[name.token_begin + k]]);
      }
      double by_keys = TokenSimilarity(q_keys, s.candidate_keys);
      if (!q_whole.empty() && q_whole == name_whole_keys[n]) by_keys = 1.0;
      score = std::max(score, by_keys * options.vowel_insensitive_weight);
    }
    return score;
  }

  size_t Bytes() const {
    size_t b = names.capacity() * sizeof(Name) + name_tokens.capacity() * sizeof(uint32_t) +
               vocabulary_heads.capacity() * sizeof(TokenHead) +
               token_names.bytes() + trigram_tokens.bytes() +
               name_refs.capacity() * sizeof(NameRef);
    auto str = [](const std::string& s) {
      return sizeof(std::string) + (s.capacity() > 15 ? s.capacity() + 1 : 0);
    };
    for (const std::string& v : vocabulary) b += str(v);
    for (const std::string& v : vocabulary_keys) b += str(v);
    for (const std::string& v : name_whole_keys) b += str(v);
    b += token_ids.capacity() * (sizeof(std::string_view) + sizeof(uint32_t) + 1);
    for (const auto& [k, v] : key_tokens) b += str(k) + v.capacity() * sizeof(uint32_t);
    b += key_tokens.capacity() * (sizeof(std::string) + sizeof(std::vector<uint32_t>) + 1);
    for (const auto& [k, v] : whole_keys) b += str(k) + v.capacity() * sizeof(uint32_t);
    for (const auto& [k, v] : uncertain_key_names) b += str(k) + v.capacity() * sizeof(uint32_t);
    b += uncertain_key_names.capacity() * (sizeof(std::string) + sizeof(std::vector<uint32_t>) + 1);
    b += whole_keys.capacity() * (sizeof(std::string) + sizeof(std::vector<uint32_t>) + 1);
    for (const auto& [k, v] : identifiers) {
      b += str(k) + v.capacity() * sizeof(std::pair<uint32_t, uint32_t>);
    }
    b += identifiers.capacity() * (sizeof(std::string) + sizeof(std::vector<uint32_t>) + 1);
    return b;
  }
};

std::string NormalizeIdentifier(std::string_view identifier) {
  std::string out;
  out.reserve(identifier.size());
  for (char c : identifier) {
    if (c == ' ' || c == '.' || c == '-' || c == '/' || c == '\t') continue;
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const WatchlistIndex>> WatchlistIndex::Build(
    std::shared_ptr<const Watchlist> list, std::shared_ptr<const NameNormalizer> normalizer,
    IndexOptions options) {
  if (list == nullptr || normalizer == nullptr) {
    return absl::InvalidArgumentError("WatchlistIndex::Build: list and normalizer are required");
  }
  auto data = std::make_unique<Data>();
  data->options = options;
  std::vector<std::pair<uint32_t, uint32_t>> token_name_pairs;
  absl::flat_hash_map<std::string, uint32_t> ids;
  NormalizedName normalized;

  const std::vector<WatchlistEntry>& entries = list->entries();
  for (uint32_t e = 0; e < entries.size(); ++e) {
    const WatchlistEntry& entry = entries[e];
    for (uint32_t k = 0; k <= entry.aliases.size(); ++k) {
      normalizer->NormalizeInto(k == 0 ? entry.name : entry.aliases[k - 1], normalized);
      if (normalized.tokens.empty()) continue;
      const uint32_t n = static_cast<uint32_t>(data->names.size());
      const size_t token_count = std::min<size_t>(normalized.tokens.size(), UINT16_MAX);
      data->names.push_back({e, k, static_cast<uint32_t>(data->name_tokens.size()),
                             static_cast<uint16_t>(token_count), normalized.vowels_uncertain});
      for (size_t t = 0; t < token_count; ++t) {
        const std::string& token = normalized.tokens[t];
        auto [it, inserted] = ids.try_emplace(token, static_cast<uint32_t>(data->vocabulary.size()));
        if (inserted) data->vocabulary.push_back(token);
        data->name_tokens.push_back(it->second);
        token_name_pairs.emplace_back(it->second, n);
      }
      data->name_whole_keys.push_back(WholeKey(normalized.tokens));
      if (data->name_whole_keys.back().size() >= 3) {
        data->whole_keys[data->name_whole_keys.back()].push_back(n);
      }
    }
    for (uint32_t i = 0; i < entry.identifiers.size(); ++i) {
      const std::string key = NormalizeIdentifier(entry.identifiers[i]);
      if (key.empty()) continue;
      data->identifiers[key].emplace_back(e, i);
      if (key.size() == 11 && IsBicShaped(key)) {
        data->identifiers[key.substr(0, 8)].emplace_back(e, i);
      }
    }
  }
  for (auto& [key, hits] : data->identifiers) {
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               hits.end());
  }

  const size_t vocabulary_size = data->vocabulary.size();
  data->token_names = Postings::From(vocabulary_size, std::move(token_name_pairs));
  data->name_refs.reserve(data->token_names.ids.size());
  for (uint32_t n : data->token_names.ids) {
    const Data::Name& name = data->names[n];
    Data::NameRef ref{n, {Data::NameRef::kNone, Data::NameRef::kNone, Data::NameRef::kNone,
                          Data::NameRef::kNone}};
    for (uint32_t k = 0; k < name.token_count && k < 4; ++k) {
      ref.tokens[k] = data->name_tokens[name.token_begin + k];
    }
    if (name.token_count > 4) ref.tokens[3] = Data::NameRef::kMore;
    data->name_refs.push_back(ref);
  }
  std::vector<std::pair<uint32_t, uint32_t>> trigram_pairs;
  data->vocabulary_keys.reserve(vocabulary_size);
  for (uint32_t v = 0; v < vocabulary_size; ++v) {
    const std::string& token = data->vocabulary[v];
    ForEachTrigram(token, [&](uint32_t bucket) { trigram_pairs.emplace_back(bucket, v); });
    data->vocabulary_keys.push_back(VowelInsensitiveKey(token));
    Data::TokenHead head{LetterSignature(token), {0, 0, 0, 0}};
    std::memcpy(head.first, token.data(), std::min<size_t>(token.size(), 4));
    data->vocabulary_heads.push_back(head);
    if (token.size() <= kShortToken) {
      data->short_tokens[static_cast<uint8_t>(token[0])].push_back(v);
    }
    if (!data->vocabulary_keys.back().empty()) {
      data->key_tokens[data->vocabulary_keys.back()].push_back(v);
    }
  }
  data->trigram_tokens = Postings::From(kTrigramBuckets, std::move(trigram_pairs));
  for (uint32_t n = 0; n < data->names.size(); ++n) {
    const Data::Name& name = data->names[n];
    if (!name.vowels_uncertain) continue;
    data->has_uncertain_names = true;
    for (uint32_t k = 0; k < name.token_count; ++k) {
      const std::string& key = data->vocabulary_keys[data->name_tokens[name.token_begin + k]];
      if (key.empty()) continue;
      std::vector<uint32_t>& names = data->uncertain_key_names[key];
      if (names.empty() || names.back() != n) names.push_back(n);
    }
  }
  data->token_ids.reserve(vocabulary_size);
  for (uint32_t v = 0; v < vocabulary_size; ++v) data->token_ids.emplace(data->vocabulary[v], v);

  return std::shared_ptr<const WatchlistIndex>(
      new WatchlistIndex(std::move(list), std::move(normalizer), std::move(data)));
}

WatchlistIndex::WatchlistIndex(std::shared_ptr<const Watchlist> list,
                               std::shared_ptr<const NameNormalizer> normalizer,
                               std::unique_ptr<Data> data)
    : list_(std::move(list)), normalizer_(std::move(normalizer)), data_(std::move(data)) {}

WatchlistIndex::~WatchlistIndex() = default;

const std::string& WatchlistIndex::NameOf(const WatchlistMatch& match) const {
  const WatchlistEntry& entry = list_->entries()[match.entry];
  return match.name_index == 0 ? entry.name : entry.aliases[match.name_index - 1];
}

namespace {

// Keeps each entry's best match, sorts best first (ties: list order, then name order) and cuts
// to the options; appends to "out".
void FinishMatches(std::vector<WatchlistMatch>& matches, const SearchOptions& options,
                   std::vector<WatchlistMatch>& out) {
  std::sort(matches.begin(), matches.end(), [](const WatchlistMatch& a, const WatchlistMatch& b) {
    if (a.entry != b.entry) return a.entry < b.entry;
    if (a.score != b.score) return a.score > b.score;
    return a.name_index < b.name_index;
  });
  matches.erase(std::unique(matches.begin(), matches.end(),
                            [](const WatchlistMatch& a, const WatchlistMatch& b) {
                              return a.entry == b.entry;
                            }),
                matches.end());
  std::stable_sort(matches.begin(), matches.end(),
                   [](const WatchlistMatch& a, const WatchlistMatch& b) {
                     return a.score > b.score;
                   });
  if (matches.size() > options.max_hits) matches.resize(options.max_hits);
  out.insert(out.end(), matches.begin(), matches.end());
}

}  // namespace

void WatchlistIndex::ScanName(const NormalizedName& query, const SearchOptions& options,
                              std::vector<WatchlistMatch>& out) const {
  if (query.tokens.empty()) return;
  const Data& d = *data_;
  SearchScratch& s = ThreadScratch();
  s.Begin(d.vocabulary.size(), d.names.size());  // a new epoch: no pair score of another query
  std::vector<std::string_view> q_tokens(query.tokens.begin(), query.tokens.end());
  std::vector<std::string> q_key_strings;
  for (const std::string& t : query.tokens) q_key_strings.push_back(VowelInsensitiveKey(t));
  std::vector<std::string_view> q_keys(q_key_strings.begin(), q_key_strings.end());
  const std::string q_whole = WholeKey(query.tokens);
  std::vector<WatchlistMatch> matches;
  for (uint32_t n = 0; n < d.names.size(); ++n) {
    const double score = d.Score(n, query, q_tokens, q_keys, q_whole, s);
    if (score >= options.min_score) {
      matches.push_back({d.names[n].entry, d.names[n].name_index, score, false, 0});
    }
  }
  FinishMatches(matches, options, out);
}

// One SearchName call, in its steps: 1. the vocabulary tokens answering each query token;
// 2. the names holding them, each bounded from its tokens' answers without scoring it, with
// the query tokens whose postings cannot make a candidate skipped (max-score pruning), and the
// names sharing a vowel-insensitive key; 3. the candidates among them scored. Single-threaded:
// it works in the calling thread's SearchScratch.
class WatchlistIndex::Data::NameSearch {
 public:
  // "d", "query", "options", "s" and "spent" must outlive the NameSearch.
  // REQUIRES: !query.tokens.empty(); s.Begin() called for this search.
  NameSearch(const Data& d, const NormalizedName& query, const SearchOptions& options,
             SearchScratch& s, SearchCost& spent)
      : d_(d),
        io_(d.options),
        query_(query),
        options_(options),
        s_(s),
        spent_(spent),
        masked_(std::min(query.tokens.size(), kMaxMaskedTokens)),
        tau_(static_cast<float>(io_.token_min_similarity)),
        least_(options.min_score - io_.coverage_slack) {
    s.query_tokens.assign(query.tokens.begin(), query.tokens.end());
    for (const std::string& t : query.tokens) query_bytes_ += t.size();
  }

  // Appends the matches, best first, to "out".
  void Run(std::vector<WatchlistMatch>& out) {
    s_.volume.assign(masked_, 0);
    if (s_.answered_lists.size() < masked_) s_.answered_lists.resize(masked_);
    for (size_t i = 0; i < masked_; ++i) AnswerQueryToken(static_cast<uint32_t>(i));
    WalkEssentialPostings(FirstEssentialToken());
    TouchByVowelKeys();
    ScoreCandidates();
    FinishMatches(s_.matches, options_, out);
  }

 private:
  // Step 2's bound of one name: tau plus, over the query tokens i it answers, w_i * (s_i - tau),
  // s_i the best pair score among the name's tokens. Add() each of the name's tokens, then
  // Finish(); best[i] holds query token i's best score for the tokens set in seen_.
  class Bound {
   public:
    // "d" and "s" must outlive the Bound.
    Bound(const Data& d, SearchScratch& s, float tau) : d_(d), s_(s), tau_(tau) {}
    ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(uint32_t v) {
      if (s_.answer_stamp[v] != s_.search_epoch) return;
      for (uint32_t a = s_.answer_head[v]; a != 0; a = s_.answers[a - 1].next) {
        const SearchScratch::Answer& answer = s_.answers[a - 1];
        const uint32_t bit = 1u << answer.query_token;
        if ((seen_ & bit) == 0 || answer.score > s_.best[answer.query_token]) {
          s_.best[answer.query_token] = answer.score;
          seen_ |= bit;
        }
      }
    }
    ABSL_ATTRIBUTE_ALWAYS_INLINE double Finish() {
      float bound = tau_;
      for (uint32_t bits = seen_; bits != 0; bits &= bits - 1) {
        const int i = __builtin_ctz(bits);
        bound += s_.weights[i] * (s_.best[i] - tau_);
      }
      seen_ = 0;
      return static_cast<double>(bound);
    }
    // The bound of name "n" from all its tokens.
    ABSL_ATTRIBUTE_ALWAYS_INLINE double Of(uint32_t n) {
      const Name& name = d_.names[n];
      for (uint32_t k = 0; k < name.token_count; ++k) Add(d_.name_tokens[name.token_begin + k]);
      return Finish();
    }

   private:
    const Data& d_;
    SearchScratch& s_;
    const float tau_;
    uint32_t seen_ = 0;
  };

  // Step 1 for query token i: the vocabulary tokens scoring at least token_min_similarity
  // against it (itself, if in the vocabulary, at 1), into answered_lists[i] and the answers;
  // volume[i] gets the postings behind them. REQUIRES: volume and answered_lists sized.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void AnswerQueryToken(uint32_t i) {
    SearchScratch& s = s_;
    const std::string_view q = s.query_tokens[i];
    s.answered.clear();
    uint32_t exact = UINT32_MAX;
    if (auto it = d_.token_ids.find(q); it != d_.token_ids.end()) {
      exact = it->second;
      s.answered.push_back({exact, 1});
    }
    const uint16_t needed = CountSharedTrigrams(q);
    ScoreSharingTokens(q, exact, needed);
    s.answered_lists[i].clear();
    for (const auto& [v, pair] : s.answered) {
      s.AddAnswer(v, i, pair);
      s.answered_lists[i].push_back(v);
      s.volume[i] += d_.token_names.offsets[v + 1] - d_.token_names.offsets[v];
    }
  }

  // Counts, per vocabulary token, the trigrams it shares with "q" (touched_tokens lists those
  // counted); a short query also counts the short tokens of its first byte (kShortQuery) as
  // sharing enough. Returns how many are enough (NeededTrigrams).
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint16_t CountSharedTrigrams(std::string_view q) {
    SearchScratch& s = s_;
    const Postings& trigram_tokens = d_.trigram_tokens;
    size_t trigrams = 0;
    s.NextToken();
    ForEachTrigram(q, [&](uint32_t bucket) {
      ++trigrams;
      spent_.trigram_postings +=
          trigram_tokens.offsets[bucket + 1] - trigram_tokens.offsets[bucket];
      for (const uint32_t* v = trigram_tokens.begin(bucket); v != trigram_tokens.end(bucket); ++v) {
        if (s.token_stamp[*v] != s.token_epoch) {
          s.token_stamp[*v] = s.token_epoch;
          s.token_count[*v] = 0;
          s.touched_tokens.push_back(*v);
        }
        ++s.token_count[*v];
      }
    });
    const uint16_t needed = static_cast<uint16_t>(NeededTrigrams(trigrams));
    if (q.size() <= kShortQuery) {
      for (uint32_t v : d_.short_tokens[static_cast<uint8_t>(q[0])]) {
        if (s.token_stamp[v] != s.token_epoch) {
          s.token_stamp[v] = s.token_epoch;
          s.token_count[v] = needed;  // compared below, like a token sharing enough trigrams
          s.touched_tokens.push_back(v);
        } else if (s.token_count[v] < needed) {
          s.token_count[v] = needed;
        }
      }
    }
    return needed;
  }

  // Scores "q" against the touched tokens sharing "needed" trigrams (but "exact", answered
  // already); those at token_min_similarity or more go to s.answered.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void ScoreSharingTokens(std::string_view q, uint32_t exact,
                                                       uint16_t needed) {
    SearchScratch& s = s_;
    const uint64_t q_sig = LetterSignature(q);
    for (uint32_t v : s.touched_tokens) {
      if (s.token_count[v] < needed || v == exact) continue;
      // Length, letters and common prefix first (16 bytes per token); the token's bytes only
      // when they pass.
      const TokenHead& head = d_.vocabulary_heads[v];
      const size_t length = SignatureLength(head.signature);
      size_t prefix = 0;
      while (prefix < 4 && prefix < q.size() && prefix < length && q[prefix] == head.first[prefix]) {
        ++prefix;
      }
      if (length < 255 && PairSimilarityBound(q.size(), q_sig, length, head.signature, prefix) <
                              io_.token_min_similarity) {
        continue;
      }
      const std::string& token = d_.vocabulary[v];
      ++spent_.tokens_checked;
      const double pair = TokenPairSimilarity(q, token);
      if (pair >= io_.token_min_similarity) s.answered.push_back({v, static_cast<float>(pair)});
    }
  }

  // Step 2's pruning. A name's bound is tau + sum over the query tokens i it answers of
  // w_i * (s_i - tau). Query tokens are taken from the most to the least postings; while the
  // most a name could gain from the tokens taken so far stays below the bound asked for, a
  // name answering only those cannot be a candidate, so their postings are not walked: only
  // the remaining ("essential") tokens' postings are (max-score pruning, as in search engines).
  // Returns the index in s.order of the first essential token; sets each token's weight.
  size_t FirstEssentialToken() {
    SearchScratch& s = s_;
    const std::vector<std::string_view>& q_tokens = s.query_tokens;
    std::vector<uint32_t>& order = s.order;
    order.resize(masked_);
    for (uint32_t i = 0; i < masked_; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return s.volume[a] > s.volume[b]; });
    double reachable = tau_;  // the most a name answering only the skipped tokens can reach
    size_t first_essential = 0;
    while (first_essential < masked_) {
      const uint32_t i = order[first_essential];
      const double w = static_cast<double>(q_tokens[i].size()) / static_cast<double>(query_bytes_);
      if (reachable + w * (1.0 - tau_) >= least_) break;
      reachable += w * (1.0 - tau_);
      ++first_essential;
    }
    s.best.assign(masked_, 0.0f);
    s.weights.resize(masked_);
    for (size_t i = 0; i < masked_; ++i) {
      s.weights[i] = static_cast<float>(static_cast<double>(q_tokens[i].size()) /
                                        static_cast<double>(query_bytes_));
    }
    return first_essential;
  }

  // Step 2: touches the names holding an answer of the essential tokens, bounding each from
  // the tokens its posting carries inline (s.bounds[k] for s.touched_names[k]).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WalkEssentialPostings(size_t first_essential) {
    SearchScratch& s = s_;
    Bound bound(d_, s, tau_);
    s.bounds.clear();
    for (size_t k = first_essential; k < masked_; ++k) {
      for (uint32_t v : s.answered_lists[s.order[k]]) {
        const NameRef* end = d_.name_refs.data() + d_.token_names.offsets[v + 1];
        for (const NameRef* r = d_.name_refs.data() + d_.token_names.offsets[v]; r != end; ++r) {
          if (!s.Touch(r->name)) continue;
          if (r->tokens[3] == NameRef::kMore) {
            s.bounds.push_back(static_cast<float>(bound.Of(r->name)));
            continue;
          }
          for (uint32_t t : r->tokens) {
            if (t != NameRef::kNone) bound.Add(t);
          }
          s.bounds.push_back(static_cast<float>(bound.Finish()));
        }
      }
    }
  }

  // Step 2, vowel-insensitive: names sharing a token's key, or the whole name's key. A Latin
  // query meets only the names that came from such scripts, a query from one meets every name
  // holding the key; a Latin query against a list without such names skips the step (and its
  // allocations) entirely. Touched names get their vowel marks; the keys are kept for scoring.
  void TouchByVowelKeys() {
    SearchScratch& s = s_;
    const bool by_keys = query_.vowels_uncertain || d_.has_uncertain_names;
    if (by_keys) {
      q_key_strings_.reserve(query_.tokens.size());
      for (const std::string& t : query_.tokens) q_key_strings_.push_back(VowelInsensitiveKey(t));
      q_keys_.assign(q_key_strings_.begin(), q_key_strings_.end());
      q_whole_ = WholeKey(query_.tokens);
    }
    for (size_t i = 0; by_keys && i < masked_; ++i) {
      if (q_keys_[i].empty()) continue;
      if (query_.vowels_uncertain) {
        auto it = d_.key_tokens.find(q_key_strings_[i]);
        if (it == d_.key_tokens.end()) continue;
        for (uint32_t v : it->second) {
          for (const uint32_t* n = d_.token_names.begin(v); n != d_.token_names.end(v); ++n) {
            s.Touch(*n);
            s.vowel_marks[*n].mask |= 1u << i;
          }
        }
      } else {
        auto it = d_.uncertain_key_names.find(q_key_strings_[i]);
        if (it == d_.uncertain_key_names.end()) continue;
        for (uint32_t n : it->second) {
          s.Touch(n);
          s.vowel_marks[n].mask |= 1u << i;
        }
      }
    }
    if (q_whole_.size() >= 3) {
      if (auto it = d_.whole_keys.find(q_whole_); it != d_.whole_keys.end()) {
        for (uint32_t n : it->second) {
          if (!query_.vowels_uncertain && !d_.names[n].vowels_uncertain) continue;
          s.Touch(n);
          s.vowel_marks[n].whole_key = true;
        }
      }
    }
  }

  // Step 2's bound for each touched name, then step 3: candidates are scored into s.matches.
  // The bound weighs tokens by the query's bytes where the score weighs pairs by both sides'
  // bytes: coverage_slack absorbs the difference (checked against a full scan in
  // watchlist_index_test.cc). Vowel-insensitive candidates: the query bytes whose keys a name
  // shares, as a fraction f, must satisfy f + tau * (1 - f) >= least / vowel_insensitive_weight.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void ScoreCandidates() {
    SearchScratch& s = s_;
    const std::vector<std::string_view>& q_tokens = s.query_tokens;
    const double vowel_least = least_ / io_.vowel_insensitive_weight;
    auto share = [&](uint32_t mask) {
      size_t bytes = 0;
      for (size_t i = 0; i < masked_; ++i) {
        if (mask & (1u << i)) bytes += q_tokens[i].size();
      }
      return static_cast<double>(bytes) / static_cast<double>(query_bytes_);
    };
    Bound bound(d_, s, tau_);
    s.matches.clear();
    spent_.names_touched += s.touched_names.size();
    s.Untouch();
    for (size_t t = 0; t < s.touched_names.size(); ++t) {
      const uint32_t n = s.touched_names[t];
      // Names the vowel-insensitive keys touched after the walk are bounded here.
      const double name_bound = t < s.bounds.size() ? s.bounds[t] : bound.Of(n);
      bool candidate = name_bound >= least_;
      if (!candidate && !s.vowel_marks.empty()) {
        if (auto it = s.vowel_marks.find(n); it != s.vowel_marks.end()) {
          candidate = it->second.whole_key ||
                      share(it->second.mask) * (1.0 - tau_) + tau_ >= vowel_least;
        }
      }
      if (!candidate) continue;
      ++spent_.names_scored;
      const double score = d_.Score(n, query_, q_tokens, q_keys_, q_whole_, s);
      if (score >= options_.min_score) {
        s.matches.push_back({d_.names[n].entry, d_.names[n].name_index, score, false, 0});
      }
    }
  }

  const Data& d_;
  const IndexOptions& io_;
  const NormalizedName& query_;
  const SearchOptions& options_;
  SearchScratch& s_;
  SearchCost& spent_;
  const size_t masked_;  // query tokens used to find candidates
  const float tau_;      // token_min_similarity
  const double least_;   // the bound a candidate needs
  size_t query_bytes_ = 0;
  // The query tokens' vowel-insensitive keys and the whole name's; empty unless some name or
  // the query is vowel-uncertain.
  std::vector<std::string> q_key_strings_;
  std::vector<std::string_view> q_keys_;
  std::string q_whole_;
};

void WatchlistIndex::SearchName(const NormalizedName& query, const SearchOptions& options,
                                std::vector<WatchlistMatch>& out, SearchCost* cost) const {
  SearchCost local;
  SearchCost& spent = cost != nullptr ? *cost : local;
  if (query.tokens.empty()) return;
  SearchScratch& s = ThreadScratch();
  s.Begin(data_->vocabulary.size(), data_->names.size());
  Data::NameSearch(*data_, query, options, s, spent).Run(out);
}

void WatchlistIndex::SearchIdentifier(std::string_view identifier,
                                      std::vector<WatchlistMatch>& out) const {
  const std::string key = NormalizeIdentifier(identifier);
  if (key.empty()) return;
  const size_t first = out.size();
  auto add = [&](const std::string& k) {
    auto it = data_->identifiers.find(k);
    if (it == data_->identifiers.end()) return;
    for (const auto& [entry, position] : it->second) {
      bool seen = false;
      for (size_t i = first; i < out.size(); ++i) seen = seen || out[i].entry == entry;
      if (!seen) out.push_back({entry, 0, 1.0, true, position});
    }
  };
  add(key);
  if (key.size() == 11 && IsBicShaped(key)) add(key.substr(0, 8));
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const WatchlistMatch& a, const WatchlistMatch& b) { return a.entry < b.entry; });
}

WatchlistIndex::Stats WatchlistIndex::stats() const {
  Stats st;
  st.names = data_->names.size();
  st.vocabulary = data_->vocabulary.size();
  st.postings = data_->token_names.ids.size();
  st.identifiers = data_->identifiers.size();
  st.memory_bytes = data_->Bytes();
  return st;
}

}  // namespace vigil::screening
