// Token-aligned Jaro-Winkler for names, after moov-io/watchman's BestPairsJaroWinkler
// (internal/stringscore, at d299005f; testdata/name_matching/watchman_jaro_winkler holds its
// expected scores).
//
// For query tokens q_1..q_n and candidate tokens c_1..c_k (lengths in bytes, |.|):
//
//  1. Each pair (q_i, c_j) whose first bytes fall in the same phonetic class is scored
//       s_ij = JW(q_i, c_j) * L_ij,
//     JW being JaroWinklerSimilarity with scale 0.1 and prefix 4, and L_ij the length penalty:
//     with r = min(|q_i|, |c_j|) / max(|q_i|, |c_j|), L_ij = 1 - 0.3 * (1 - r) when r < 0.9,
//     else 1. Classes (ASCII, case-insensitive): vowels and y {a e i o u y}, {b f p v},
//     {c g j k q s x z}, {d t}, {l}, {m n}, {r}, {h w}; any other byte is its own class. Pairs in
//     different classes are never matched.
//  2. The scored pairs are taken in descending score order (ties: lower i, then lower j); a
//     pair is kept when neither of its tokens is in a kept pair already. Each token is matched
//     at most once; query tokens left unmatched score 0.
//  3. A = sum over kept pairs of s_ij * (|q_i| + |c_j|), divided by
//     (sum of all |q_i|) + (sum of matched |c_j|): a length-weighted mean over the whole query
//     and the matched part of the candidate.
//  4. The result is A * (1 - 0.15 * (1 - f)), f being the matched fraction of the candidate's
//     bytes (sum of matched |c_j| / sum of all |c_j|): unmatched candidate tokens cost up to 15%,
//     so "john doe" scores "john doe" above "john bartholomew doe".
//
// The result is in [0, 1]; it is 0 when either side has no tokens (or only empty ones), and 1
// for identical token lists. It is not symmetric: the query's unmatched tokens weigh more than
// the candidate's. Tokens are compared as bytes, so callers pass normalized text (lower case,
// punctuation removed): watchman's test applies no other normalization, and "wei," against
// "wei" is a near match, not an exact one.
#ifndef VIGIL_SCREENING_NAME_SIMILARITY_H_
#define VIGIL_SCREENING_NAME_SIMILARITY_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace vigil::screening {

// The whitespace-separated tokens of "text" (ASCII space, tab, line feed, carriage return,
// vertical tab, form feed; runs of them count as one), as Go's strings.Fields splits ASCII
// text. The views point into "text".
std::vector<std::string_view> SplitTokens(std::string_view text);

// The score described above, of "candidate_tokens" (the indexed name) against "query_tokens"
// (the name searched for).
double TokenSimilarity(absl::Span<const std::string_view> query_tokens,
                       absl::Span<const std::string_view> candidate_tokens);

// Step 1's s_ij for one pair of tokens: 0 when either is empty or their first bytes are in
// different phonetic classes (they are never paired). TokenSimilarity of two one-token names
// is this value, times the 15% factor when the candidate's token is left unmatched.
double TokenPairSimilarity(std::string_view query_token, std::string_view candidate_token);

// TokenSimilarity from the tokens' lengths and their pair scores: pair(i, j) must return
// TokenPairSimilarity(query token i, candidate token j), or a negative value when the two are
// in different phonetic classes (never paired); it is not called for empty tokens. For callers
// that know pair scores already (a search caches them across candidates).
double AlignedTokenSimilarity(absl::Span<const size_t> query_lengths,
                              absl::Span<const size_t> candidate_lengths,
                              absl::FunctionRef<double(size_t, size_t)> pair);

// The phonetic class of a token's first byte (step 1), as a byte ('A' for vowels and y, 'B' for
// b f p v, ...); 0 for an empty token. Tokens of different classes are never paired.
char FirstLetterClass(std::string_view token);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_NAME_SIMILARITY_H_
