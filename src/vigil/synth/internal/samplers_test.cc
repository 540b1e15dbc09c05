#include "vigil/synth/internal/samplers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace vigil::synth::internal {
namespace {

constexpr int kDraws = 200000;

struct Moments {
  double mean = 0;
  double variance = 0;
};

template <typename Draw>
Moments Measure(Draw draw) {
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = draw();
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / kDraws;
  return {mean, sum_sq / kDraws - mean * mean};
}

TEST(Samplers, NormalHasZeroMeanUnitVariance) {
  Rng rng(1);
  const Moments m = Measure([&] { return Normal(rng); });
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.variance, 1.0, 0.02);
}

TEST(Samplers, LogNormalHasTheGivenMedian) {
  Rng rng(2);
  std::vector<double> xs(kDraws);
  for (double& x : xs) x = LogNormal(rng, 500.0, 1.4);
  std::nth_element(xs.begin(), xs.begin() + kDraws / 2, xs.end());
  EXPECT_NEAR(xs[kDraws / 2], 500.0, 15.0);
}

TEST(Samplers, ExponentialHasTheGivenMean) {
  Rng rng(3);
  const Moments m = Measure([&] { return Exponential(rng, 300.0); });
  EXPECT_NEAR(m.mean, 300.0, 3.0);
  EXPECT_NEAR(std::sqrt(m.variance), 300.0, 6.0);
}

TEST(Samplers, ParetoHasTheGivenScaleAndMean) {
  Rng rng(4);
  double min = 1e300;
  const Moments m = Measure([&] {
    const double x = Pareto(rng, 0.75, 3.0);
    min = std::min(min, x);
    return x;
  });
  EXPECT_GE(min, 0.75);
  EXPECT_NEAR(m.mean, 3.0 * 0.75 / 2.0, 0.02);
}

TEST(Samplers, PoissonHasTheGivenMeanBelowAndAboveTheSwitch) {
  // Mean 3 uses the exact product-of-uniforms method, mean 5000 the normal approximation.
  for (double mean : {0.2, 3.0, 29.0, 5000.0}) {
    Rng rng(5);
    const Moments m = Measure([&] { return static_cast<double>(Poisson(rng, mean)); });
    EXPECT_NEAR(m.mean, mean, 0.01 * mean + 0.01) << mean;
    EXPECT_NEAR(m.variance, mean, 0.03 * mean + 0.01) << mean;
  }
}

TEST(Samplers, PoissonOfZeroIsZero) {
  Rng rng(6);
  EXPECT_EQ(Poisson(rng, 0.0), 0);
}

}  // namespace
}  // namespace vigil::synth::internal
