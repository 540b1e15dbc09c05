// Samplers: the continuous and discrete distributions the generator draws from, written against
// Rng so that every draw is reproducible with any standard library (std::*_distribution is not).
//
// They use libm's log, exp and sqrt. Those are deterministic on one platform; a different libm
// could differ in the last bit of a result, which in rare cases moves a rounded amount by one
// cent or a time by one minute. The synth target builds with -ffp-contract=off so that compilers
// do not fuse multiply-adds differently across architectures.
//
// Thread safety: stateless functions; the Rng argument is externally synchronized.
#ifndef VIGIL_SYNTH_INTERNAL_SAMPLERS_H_
#define VIGIL_SYNTH_INTERNAL_SAMPLERS_H_

#include <cstdint>

#include "vigil/synth/internal/rng.h"

namespace vigil::synth::internal {

// Standard normal, Marsaglia's polar method (the second variate is discarded: keeping it would
// make the samplers stateful).
double Normal(Rng& rng);

// Log-normal with the given median (= e^mu) and log-space standard deviation sigma.
// REQUIRES: median > 0, sigma >= 0.
double LogNormal(Rng& rng, double median, double sigma);

// Exponential with the given mean. REQUIRES: mean > 0.
double Exponential(Rng& rng, double mean);

// Pareto (type I) with scale x_min and shape alpha: P(X > x) = (x_min / x)^alpha for x >= x_min.
// The mean is alpha x_min / (alpha - 1) for alpha > 1. REQUIRES: x_min > 0, alpha > 0.
double Pareto(Rng& rng, double x_min, double alpha);

// Poisson with the given mean: exact (Knuth's product of uniforms) below a mean of 30, the
// normal approximation N(mean, mean) rounded and clamped at 0 above (its error there is far
// below the day-to-day variation the model cares about). REQUIRES: mean >= 0.
int64_t Poisson(Rng& rng, double mean);

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_SAMPLERS_H_
