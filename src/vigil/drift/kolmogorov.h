// The distribution of the two-sided one-sample Kolmogorov–Smirnov statistic D_n for finite n,
// as scipy.stats.kstwo computes it (Simard & L'Ecuyer's choice of method by n and x: the
// Ruben–Gambino closed forms at the ends, the Durbin matrix (Marsaglia–Tsang–Wang; scipy uses
// Pomeranz's equally exact recursion in part of the small-n range), the Pelz–Good series, and
// twice the exact one-sided Smirnov tail). ks_2samp's asymptotic
// p-value is KolmogorovSf(round(n1 n2 / (n1 + n2)), d).
//
// Thread safety: pure functions.
#ifndef VIGIL_DRIFT_KOLMOGOROV_H_
#define VIGIL_DRIFT_KOLMOGOROV_H_

#include <cstdint>

namespace vigil::drift {

// Pr(D_n^+ >= x), the one-sided Smirnov tail, exact (Birnbaum–Tingey sum in log space).
double SmirnovSf(uint64_t n, double x);
// Pr(D_n > x). REQUIRES: n >= 1.
double KolmogorovSf(uint64_t n, double x);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_KOLMOGOROV_H_
