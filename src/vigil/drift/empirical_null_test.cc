#include "vigil/drift/empirical_null.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace vigil::drift {
namespace {

TEST(EmpiricalNull, BodyIsTheEmpiricalSurvival) {
  std::vector<double> scores;
  for (int i = 1; i <= 999; ++i) scores.push_back(i);  // 1..999, shuffled order is irrelevant
  const EmpiricalNull null(scores, 0.1, 1.0);
  EXPECT_DOUBLE_EQ(null.Sf(0), 1.0);
  EXPECT_NEAR(null.Sf(500), (500.0 + 1) / 1000, 1e-3);  // 500..999 are >= 500
  EXPECT_DOUBLE_EQ(null.mean(), 500);
  EXPECT_DOUBLE_EQ(null.tail_threshold(), 900);  // the 90% quantile
}

// The body is read from a table at 256 equal steps between the smallest score and u: at the
// steps it is the exact count, between them it lies between the counts at the step's two ends
// (ties and clumps included, where a step holds hundreds of equal scores or none).
TEST(EmpiricalNull, BodyStaysWithinTheExactCountsAtItsSteps) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> spread(-3, 1.5);
  std::vector<double> scores;
  for (int i = 0; i < 1500; ++i) scores.push_back(spread(rng));
  for (int i = 0; i < 400; ++i) scores.push_back(0.02);  // a clump of ties
  for (int i = 0; i < 100; ++i) scores.push_back(std::round(spread(rng) * 100) / 100);
  const EmpiricalNull null(scores, 0.1, 1.0);
  const auto scan = [&](double s) {
    double at_least = 0;
    for (double z : scores) at_least += z >= s;
    return (at_least + 1) / static_cast<double>(scores.size() + 1);
  };
  const double lo = null.lowest(), u = null.tail_threshold();
  const double step = (u - lo) / 256;
  for (int b = 0; b <= 256; ++b) {
    const double at = b == 256 ? u : lo + b / (256 / (u - lo));
    EXPECT_NEAR(null.Sf(at), scan(at), 1e-6) << "step " << b;
  }
  std::vector<double> probes = scores;
  for (double z : scores) {
    probes.push_back(std::nextafter(z, 0.0));
    probes.push_back(std::nextafter(z, 1.0));
  }
  for (double s : probes) {
    if (s > u) continue;  // the fitted tail
    if (s <= lo) {
      EXPECT_EQ(null.Sf(s), 1.0) << s;
      continue;
    }
    const double b = std::floor((s - lo) / step);
    const double p = null.Sf(s);
    EXPECT_LE(p, scan(lo + b * step) + 1e-6) << s;
    EXPECT_GE(p, scan(std::min(u, lo + (b + 1) * step)) - 1e-6) << s;
  }
  EXPECT_EQ(null.Sf(-1), 1.0);
}

TEST(EmpiricalNull, ExponentialDataGetsAnExponentialTail) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> e(2.0);  // mean 0.5: P(X >= x) = exp(-2x)
  std::vector<double> scores;
  for (int i = 0; i < 20'000; ++i) scores.push_back(e(rng));
  const EmpiricalNull null(scores, 0.1, 1.0);
  EXPECT_NEAR(null.tail_scale(), 0.5, 0.05);
  EXPECT_LT(null.tail_shape(), 0.05);
  // Far beyond the sample (P = 1e-9 at x = 10.36): within a factor of 10.
  const double x = -std::log(1e-9) / 2;
  EXPECT_GT(null.Sf(x), 1e-10);
  EXPECT_LT(null.Sf(x), 1e-8);
}

TEST(EmpiricalNull, HeavyTailsAreNotExtrapolatedAsExponential) {
  // Pareto with tail index 3 (xi = 1/3): P(X >= x) = x^-3 for x >= 1.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> scores;
  for (int i = 0; i < 20'000; ++i) scores.push_back(std::pow(1 - u(rng), -1.0 / 3));
  const EmpiricalNull null(scores, 0.1, 1.0);
  EXPECT_NEAR(null.tail_shape(), 1.0 / 3, 0.12);
  // At x = 100, P = 1e-6: an exponential fit would claim a vanishing probability.
  EXPECT_GT(null.Sf(100), 1e-7);
  EXPECT_LT(null.Sf(100), 1e-4);
}

TEST(EmpiricalNull, AlmostConstantScoresUseTheFallbackScale) {
  std::vector<double> scores(1000, 0.25);
  scores.back() = 0.3;
  const EmpiricalNull null(scores, 0.1, 0.01);
  EXPECT_EQ(null.tail_scale(), 0.01);
  EXPECT_NEAR(null.Sf(0.35), null.Sf(0.2500001) * std::exp(-0.1 / 0.01), 1e-12);
}

}  // namespace
}  // namespace vigil::drift
