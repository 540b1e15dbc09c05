#include "vigil/synth/internal/samplers.h"

#include <cmath>

namespace vigil::synth::internal {

double Normal(Rng& rng) {
  double u;
  double v;
  double s;
  do {
    u = 2.0 * rng.Uniform() - 1.0;
    v = 2.0 * rng.Uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  return u * std::sqrt(-2.0 * std::log(s) / s);
}

double LogNormal(Rng& rng, double median, double sigma) {
  return median * std::exp(sigma * Normal(rng));
}

double Exponential(Rng& rng, double mean) {
  // 1 - U is in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - rng.Uniform());
}

double Pareto(Rng& rng, double x_min, double alpha) {
  return x_min * std::exp(-std::log(1.0 - rng.Uniform()) / alpha);
}

int64_t Poisson(Rng& rng, double mean) {
  if (mean <= 0.0) return 0;
  if (mean < 30.0) {
    const double limit = std::exp(-mean);
    int64_t k = 0;
    double product = rng.Uniform();
    while (product > limit) {
      ++k;
      product *= rng.Uniform();
    }
    return k;
  }
  const double x = std::nearbyint(mean + std::sqrt(mean) * Normal(rng));
  return x < 0.0 ? 0 : static_cast<int64_t>(x);
}

}  // namespace vigil::synth::internal
