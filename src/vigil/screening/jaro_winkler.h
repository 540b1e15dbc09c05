// Jaro and Jaro-Winkler similarity over bytes, as jellyfish (jamesturk/jellyfish) and
// smetrics (xrash/smetrics) define them; testdata/name_matching/jellyfish_testdata holds the
// reference values. Callers pass normalized ASCII: a multi-byte UTF-8 character counts as
// several characters.
//
// Strings of up to 64 bytes are compared without allocating; longer ones allocate two flag
// vectors per call.
#ifndef VIGIL_SCREENING_JARO_WINKLER_H_
#define VIGIL_SCREENING_JARO_WINKLER_H_

#include <string_view>

namespace vigil::screening {

// Jaro similarity in [0, 1]: with m the characters of a that equal a not yet matched character
// of b at most max(|a|, |b|) / 2 - 1 positions away (each matched once, scanning a left to
// right and b from the left of the window), and t half the matched characters that differ
// when both sides' matches are read in order,
//   (m / |a| + m / |b| + (m - t) / m) / 3, or 0 when m = 0.
// Two empty strings are identical (1.0; jellyfish says 0); one empty string gives 0.
double JaroSimilarity(std::string_view a, std::string_view b);

// Jaro-Winkler: the Jaro similarity j, raised to j + l * prefix_scale * (1 - j) when j > 0.7,
// where l is the length of the common prefix counted up to max_prefix bytes.
// prefix_scale * max_prefix must be at most 1 for the result to stay in [0, 1].
double JaroWinklerSimilarity(std::string_view a, std::string_view b, double prefix_scale = 0.1,
                             int max_prefix = 4);

// Jaro-Winkler (scale 0.1, prefix 4) with jellyfish's long_tolerance adjustment: when both
// strings are longer than 4 bytes, m > l + 1 and 2m >= min(|a|, |b|) + l, the result w is raised
// to w + (1 - w) * (m - l - 1) / (|a| + |b| - 2l + 2). Only applied above the 0.7 threshold.
double JaroWinklerLongToleranceSimilarity(std::string_view a, std::string_view b);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_JARO_WINKLER_H_
