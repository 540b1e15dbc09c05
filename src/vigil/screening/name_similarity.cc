#include "vigil/screening/name_similarity.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstddef>
#include <string_view>
#include <vector>

#include "vigil/screening/jaro_winkler.h"

namespace vigil::screening {
namespace {

constexpr double kLengthRatioCutoff = 0.9;
constexpr double kLengthPenaltyWeight = 0.3;
constexpr double kUnmatchedCandidateWeight = 0.15;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The phonetic class of a token's first byte (name_similarity.h); callers pass non-empty tokens.
char PhoneticClass(std::string_view token) {
  char c = token.front();
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  switch (c) {
    case 'A':
    case 'E':
    case 'I':
    case 'O':
    case 'U':
    case 'Y':
      return 'A';
    case 'B':
    case 'F':
    case 'P':
    case 'V':
      return 'B';
    case 'C':
    case 'G':
    case 'J':
    case 'K':
    case 'Q':
    case 'S':
    case 'X':
    case 'Z':
      return 'C';
    case 'D':
    case 'T':
      return 'D';
    case 'M':
    case 'N':
      return 'M';
    case 'H':
    case 'W':
      return 'H';
    default:  // L, R and every non-letter stand for themselves.
      return c;
  }
}

double PairScore(std::string_view q, std::string_view c) {
  double score = JaroWinklerSimilarity(q, c);
  const double ratio = static_cast<double>(std::min(q.size(), c.size())) /
                       static_cast<double>(std::max(q.size(), c.size()));
  if (ratio < kLengthRatioCutoff) score *= 1.0 - (1.0 - ratio) * kLengthPenaltyWeight;
  return score;
}

struct ScoredPair {
  double score;
  unsigned query;
  unsigned candidate;
};

}  // namespace

std::vector<std::string_view> SplitTokens(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

char FirstLetterClass(std::string_view token) { return token.empty() ? 0 : PhoneticClass(token); }

double TokenPairSimilarity(std::string_view query_token, std::string_view candidate_token) {
  if (query_token.empty() || candidate_token.empty() ||
      PhoneticClass(query_token) != PhoneticClass(candidate_token)) {
    return 0.0;
  }
  return PairScore(query_token, candidate_token);
}

double AlignedTokenSimilarity(absl::Span<const size_t> query_lengths,
                              absl::Span<const size_t> candidate_lengths,
                              absl::FunctionRef<double(size_t, size_t)> pair) {
  size_t query_length = 0, candidate_length = 0;
  for (size_t q : query_lengths) query_length += q;
  for (size_t c : candidate_lengths) candidate_length += c;
  if (query_length == 0 || candidate_length == 0) return 0.0;

  // Names have a handful of tokens: pairs and used-flags live on the stack up to 64 pairs and
  // 64 tokens a side, so a screening search allocates nothing per candidate.
  constexpr size_t kInlinePairs = 64;
  std::array<ScoredPair, kInlinePairs> inline_pairs;
  std::vector<ScoredPair> heap_pairs;
  ScoredPair* pairs = inline_pairs.data();
  const size_t max_pairs = query_lengths.size() * candidate_lengths.size();
  if (max_pairs > kInlinePairs) {
    heap_pairs.resize(max_pairs);
    pairs = heap_pairs.data();
  }
  size_t n = 0;
  for (unsigned i = 0; i < query_lengths.size(); ++i) {
    if (query_lengths[i] == 0) continue;
    for (unsigned j = 0; j < candidate_lengths.size(); ++j) {
      if (candidate_lengths[j] == 0) continue;
      const double score = pair(i, j);
      if (score < 0) continue;  // different phonetic classes: never paired
      pairs[n++] = {score, i, j};
    }
  }
  // Stable, so that equal scores keep (query, candidate) index order.
  std::stable_sort(pairs, pairs + n,
                   [](const ScoredPair& x, const ScoredPair& y) { return x.score > y.score; });

  std::vector<bool> query_used, candidate_used;
  const bool small = query_lengths.size() <= 64 && candidate_lengths.size() <= 64;
  uint64_t query_mask = 0, candidate_mask = 0;
  if (!small) {
    query_used.resize(query_lengths.size());
    candidate_used.resize(candidate_lengths.size());
  }
  double weighted_sum = 0.0;
  size_t matched_candidate_length = 0;
  for (size_t k = 0; k < n; ++k) {
    const ScoredPair& p = pairs[k];
    if (small) {
      const uint64_t qb = uint64_t{1} << p.query, cb = uint64_t{1} << p.candidate;
      if ((query_mask & qb) != 0 || (candidate_mask & cb) != 0) continue;
      query_mask |= qb;
      candidate_mask |= cb;
    } else {
      if (query_used[p.query] || candidate_used[p.candidate]) continue;
      query_used[p.query] = true;
      candidate_used[p.candidate] = true;
    }
    const size_t c_size = candidate_lengths[p.candidate];
    weighted_sum += p.score * static_cast<double>(query_lengths[p.query] + c_size);
    matched_candidate_length += c_size;
  }
  const double mean = weighted_sum / static_cast<double>(query_length + matched_candidate_length);
  const double matched_fraction =
      static_cast<double>(matched_candidate_length) / static_cast<double>(candidate_length);
  return mean * (1.0 - (1.0 - matched_fraction) * kUnmatchedCandidateWeight);
}

double TokenSimilarity(absl::Span<const std::string_view> query_tokens,
                       absl::Span<const std::string_view> candidate_tokens) {
  constexpr size_t kInline = 16;
  std::array<size_t, kInline> q_inline, c_inline;
  std::vector<size_t> q_heap, c_heap;
  size_t* q_lengths = q_inline.data();
  size_t* c_lengths = c_inline.data();
  if (query_tokens.size() > kInline) {
    q_heap.resize(query_tokens.size());
    q_lengths = q_heap.data();
  }
  if (candidate_tokens.size() > kInline) {
    c_heap.resize(candidate_tokens.size());
    c_lengths = c_heap.data();
  }
  for (size_t i = 0; i < query_tokens.size(); ++i) q_lengths[i] = query_tokens[i].size();
  for (size_t j = 0; j < candidate_tokens.size(); ++j) c_lengths[j] = candidate_tokens[j].size();
  return AlignedTokenSimilarity(
      absl::MakeConstSpan(q_lengths, query_tokens.size()),
      absl::MakeConstSpan(c_lengths, candidate_tokens.size()), [&](size_t i, size_t j) {
        const std::string_view q = query_tokens[i], c = candidate_tokens[j];
        return PhoneticClass(q) == PhoneticClass(c) ? PairScore(q, c) : -1.0;
      });
}

}  // namespace vigil::screening
