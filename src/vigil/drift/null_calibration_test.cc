#include "vigil/drift/null_calibration.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace vigil::drift {
namespace {

// Decile-like reference cells: missing, below, ten bins, above (CellLayout's layout).
std::vector<double> DecileReference() {
  std::vector<double> counts = {500, 0};
  for (int i = 0; i < 10; ++i) counts.push_back(10'000);
  counts.push_back(0);
  return counts;
}

// A no-drift window of n rows drawn independently of the calibration's own draws.
std::vector<double> DrawWindow(const std::vector<double>& reference, int n, std::mt19937_64& rng) {
  std::discrete_distribution<int> cell(reference.begin(), reference.end());
  std::vector<double> cells(reference.size(), 0.0);
  for (int i = 0; i < n; ++i) cells[static_cast<size_t>(cell(rng))] += 1;
  return cells;
}

TEST(NullCalibration, ScoreOfTheReferenceItselfIsZero) {
  NullCalibration null(DecileReference(), {});
  std::vector<double> same = DecileReference();
  EXPECT_NEAR(null.Score(same, 100'500), 0, 1e-12);
  // Scaling a window to an effective size changes the smoothing's weight, not the proportions.
  std::vector<double> half = same;
  for (double& c : half) c /= 2;
  EXPECT_NEAR(null.Score(half, 100'500), 0, 1e-12);
  EXPECT_GT(null.Score(half, 50'250), 0);  // the pseudo-count weighs more on a smaller window
}

TEST(NullCalibration, SmallWindowsAreNoisyAndTheCalibrationKnowsIt) {
  NullCalibration null(DecileReference(), {});
  std::mt19937_64 rng(7);
  // The mean no-drift score at 100 rows is about 0.1 (sampling noise alone); at 10,000 rows
  // it is some 20 times smaller. The same raw score is ordinary for one, alarming for the other.
  double mean100 = 0, mean10k = 0;
  for (int i = 0; i < 400; ++i) {
    mean100 += null.Score(DrawWindow(DecileReference(), 100, rng), 100) / 400;
    mean10k += null.Score(DrawWindow(DecileReference(), 10'000, rng), 10'000) / 400;
  }
  EXPECT_GT(mean100, 0.06);
  EXPECT_LT(mean100, 0.15);
  EXPECT_LT(mean10k, mean100 / 20);
  EXPECT_GT(null.Sf(mean100, 100), 0.2);
  EXPECT_LT(null.Sf(mean100, 10'000), 1e-12);
}

TEST(NullCalibration, SurvivalIsMonotoneAndBounded) {
  NullCalibration null(DecileReference(), {});
  double previous = 1.0;
  for (double s = 0; s < 1.0; s += 0.01) {
    const double p = null.Sf(s, 300);
    EXPECT_GT(p, 0);
    EXPECT_LE(p, 1);
    EXPECT_LE(p, previous + 1e-15) << s;
    previous = p;
  }
  EXPECT_LT(null.Sf(0.5, 300), 1e-10);  // far in the fitted tail
  EXPECT_EQ(null.Sf(0, 300), 1.0);
}

// The calibration's promise: on fresh no-drift windows (other draws than its own), the
// fraction with Sf <= a is about a; in the fitted tail at most about a (the fit is conservative).
TEST(NullCalibration, FalseAlarmRatesMatchTheCalibrationOnFreshNullWindows) {
  for (int n : {100, 300, 1000}) {
    NullCalibration null(DecileReference(), {});
    std::mt19937_64 rng(1234 + static_cast<uint64_t>(n));
    constexpr int kTrials = 20'000;
    int below_5e2 = 0, below_1e2 = 0, below_1e3 = 0;
    for (int i = 0; i < kTrials; ++i) {
      const double p = null.Sf(null.Score(DrawWindow(DecileReference(), n, rng), n), n);
      below_5e2 += p <= 0.05;
      below_1e2 += p <= 0.01;
      below_1e3 += p <= 0.001;
    }
    // Binomial standard deviations: 0.05 → 154, 0.01 → 14, 0.001 → 4.5 (of 20,000).
    // The calibration's own 2,000 draws add about 10% (at 0.05) and 22% (at 0.01) of noise.
    EXPECT_NEAR(below_5e2, 1000, 250) << "n = " << n;
    EXPECT_LE(below_1e2, 290) << "n = " << n;
    EXPECT_GE(below_1e2, 200 / 3) << "n = " << n;
    EXPECT_LE(below_1e3, 40) << "n = " << n;
  }
}

TEST(NullCalibration, AValueTrainingNeverSawIsRareNotImpossible) {
  // A constant feature: everything in one bin, nothing missing, nothing outside.
  NullCalibration null({0, 0, 200'000, 0}, {});
  const std::vector<double> one_new = {0, 0, 99, 1};
  const std::vector<double> ten_new = {0, 0, 90, 10};
  const double p1 = null.Sf(null.Score(one_new, 100), 100);
  const double p10 = null.Sf(null.Score(ten_new, 100), 100);
  EXPECT_GT(p1, 1e-8);
  EXPECT_LT(p1, 0.05);
  EXPECT_LT(p10, p1 * 1e-6);
}

TEST(NullCalibration, DeterministicForASeed) {
  NullCalibration a(DecileReference(), {}), b(DecileReference(), {});
  NullCalibrationOptions other;
  other.seed = 99;
  NullCalibration c(DecileReference(), other);
  EXPECT_EQ(a.Sf(0.05, 500), b.Sf(0.05, 500));
  EXPECT_NE(a.Sf(0.04, 500), c.Sf(0.04, 500));
}

TEST(DriftScoreWeights, Validate) {
  EXPECT_TRUE(DriftScoreWeights{}.Validate().ok());
  EXPECT_FALSE((DriftScoreWeights{-1, 0, 0}).Validate().ok());
  EXPECT_FALSE((DriftScoreWeights{0, 0, 0}).Validate().ok());
  EXPECT_FALSE((DriftScoreWeights{NAN, 1, 0}).Validate().ok());
  EXPECT_DOUBLE_EQ((DriftScoreWeights{}.Score({1, 2, 3})), 0.4 + 0.7 + 0.75);
}

}  // namespace
}  // namespace vigil::drift

namespace vigil::drift {
namespace {

TEST(NullCalibration, MeasureIsBinnedDivergencesWithTheReferencePrecomputed) {
  const std::vector<double> ref = {500, 0, 7, 30'000, 1, 12'000, 0};
  NullCalibration null(ref, {});
  for (const std::vector<double>& live : std::vector<std::vector<double>>{
           {0, 0, 0, 100, 0, 40, 0}, {3, 1, 0, 0, 0, 1, 9}, {500, 0, 7, 30'000, 1, 12'000, 0}}) {
    double n = 0;
    for (double c : live) n += c;
    const Divergences want = BinnedDivergences(ref, live, 0.5);
    const Divergences got = null.Measure(live, n);
    EXPECT_NEAR(got.kl, want.kl, 1e-12);
    EXPECT_NEAR(got.js, want.js, 1e-12);
    EXPECT_NEAR(got.psi, want.psi, 1e-12);
  }
}

}  // namespace
}  // namespace vigil::drift
