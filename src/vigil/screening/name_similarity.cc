#include "vigil/screening/name_similarity.h"

#include <algorithm>
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

double TokenSimilarity(const std::vector<std::string_view>& query_tokens,
                       const std::vector<std::string_view>& candidate_tokens) {
  size_t query_length = 0, candidate_length = 0;
  for (std::string_view q : query_tokens) query_length += q.size();
  for (std::string_view c : candidate_tokens) candidate_length += c.size();
  if (query_length == 0 || candidate_length == 0) return 0.0;

  std::vector<ScoredPair> pairs;
  pairs.reserve(query_tokens.size() * candidate_tokens.size());
  for (unsigned i = 0; i < query_tokens.size(); ++i) {
    const std::string_view q = query_tokens[i];
    if (q.empty()) continue;
    const char q_class = PhoneticClass(q);
    for (unsigned j = 0; j < candidate_tokens.size(); ++j) {
      const std::string_view c = candidate_tokens[j];
      if (c.empty() || PhoneticClass(c) != q_class) continue;
      pairs.push_back({PairScore(q, c), i, j});
    }
  }
  // Stable, so that equal scores keep (query, candidate) index order.
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const ScoredPair& x, const ScoredPair& y) { return x.score > y.score; });

  std::vector<bool> query_used(query_tokens.size()), candidate_used(candidate_tokens.size());
  double weighted_sum = 0.0;
  size_t matched_candidate_length = 0;
  for (const ScoredPair& p : pairs) {
    if (query_used[p.query] || candidate_used[p.candidate]) continue;
    query_used[p.query] = true;
    candidate_used[p.candidate] = true;
    const size_t c_size = candidate_tokens[p.candidate].size();
    weighted_sum += p.score * static_cast<double>(query_tokens[p.query].size() + c_size);
    matched_candidate_length += c_size;
  }
  const double mean = weighted_sum / static_cast<double>(query_length + matched_candidate_length);
  const double matched_fraction =
      static_cast<double>(matched_candidate_length) / static_cast<double>(candidate_length);
  return mean * (1.0 - (1.0 - matched_fraction) * kUnmatchedCandidateWeight);
}

}  // namespace vigil::screening
