#include "vigil/drift/cell_layout.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/drift/binned.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::ElementsAre;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

FeatureReference Binned(std::vector<double> edges, std::vector<double> counts, uint64_t missing) {
  FeatureReference ref;
  double present = 0;
  for (double c : counts) present += c;
  ref.count = static_cast<uint64_t>(present) + missing;
  ref.missing = missing;
  auto bins = ReferenceBins::Create(std::move(edges), std::move(counts));
  EXPECT_TRUE(bins.ok()) << bins.status();
  ref.bins = *std::move(bins);
  return ref;
}

TEST(CellLayout, BinnedReferenceHasMissingBelowBinsAndAboveCells) {
  const FeatureReference ref = Binned({0, 1, 2, 4}, {5, 6, 7}, 3);
  const CellLayout layout(ref);
  EXPECT_EQ(layout.size(), 6u);
  EXPECT_THAT(layout.reference_counts(), ElementsAre(3, 0, 5, 6, 7, 0));
}

TEST(CellLayout, MissingIsCellZero) {
  const CellLayout layout(Binned({0, 1, 2, 4}, {5, 6, 7}, 3));
  EXPECT_EQ(layout.Cell(kNaN), 0u);
  EXPECT_EQ(layout.Cell(-kNaN), 0u);
  EXPECT_EQ(layout.Cell(std::nan("1")), 0u);
}

TEST(CellLayout, BelowTheFirstEdgeIsCellOne) {
  const CellLayout layout(Binned({0, 1, 2, 4}, {5, 6, 7}, 3));
  EXPECT_EQ(layout.Cell(-0.5), 1u);
  EXPECT_EQ(layout.Cell(-1e300), 1u);
  EXPECT_EQ(layout.Cell(-kInf), 1u);
  EXPECT_EQ(layout.Cell(std::nextafter(0.0, -1.0)), 1u);
}

TEST(CellLayout, BinsFollowNumpyHistogramWithTheLastBinClosed) {
  const CellLayout layout(Binned({0, 1, 2, 4}, {5, 6, 7}, 3));
  // Bin 0 = cell 2: [0, 1).
  EXPECT_EQ(layout.Cell(0.0), 2u);
  EXPECT_EQ(layout.Cell(-0.0), 2u);
  EXPECT_EQ(layout.Cell(0.5), 2u);
  EXPECT_EQ(layout.Cell(std::nextafter(1.0, 0.0)), 2u);
  // Bin 1 = cell 3: [1, 2).
  EXPECT_EQ(layout.Cell(1.0), 3u);
  EXPECT_EQ(layout.Cell(1.999), 3u);
  // Bin 2 = cell 4: [2, 4], closed at the top.
  EXPECT_EQ(layout.Cell(2.0), 4u);
  EXPECT_EQ(layout.Cell(3.5), 4u);
  EXPECT_EQ(layout.Cell(4.0), 4u);
}

TEST(CellLayout, AboveTheLastEdgeIsTheLastCell) {
  const CellLayout layout(Binned({0, 1, 2, 4}, {5, 6, 7}, 3));
  EXPECT_EQ(layout.Cell(std::nextafter(4.0, 5.0)), 5u);
  EXPECT_EQ(layout.Cell(4.5), 5u);
  EXPECT_EQ(layout.Cell(1e300), 5u);
  EXPECT_EQ(layout.Cell(kInf), 5u);
}

TEST(CellLayout, EveryCellIsInRange) {
  const CellLayout layout(Binned({-3, -1, 0, 0.5, 7}, {1, 2, 3, 4}, 0));
  EXPECT_EQ(layout.size(), 7u);
  for (double x = -10; x <= 10; x += 0.125) {
    const uint32_t cell = layout.Cell(x);
    EXPECT_LT(cell, layout.size()) << x;
    EXPECT_GE(cell, 1u) << x;
  }
  EXPECT_EQ(layout.Cell(-1), 3u);
  EXPECT_EQ(layout.Cell(0.25), 4u);
  EXPECT_EQ(layout.Cell(0.5), 5u);
  EXPECT_EQ(layout.Cell(7), 5u);
  EXPECT_EQ(layout.Cell(7.125), 6u);
}

TEST(CellLayout, SingleBinReference) {
  const CellLayout layout(Binned({0, 1}, {4}, 1));
  EXPECT_THAT(layout.reference_counts(), ElementsAre(1, 0, 4, 0));
  EXPECT_EQ(layout.Cell(-0.1), 1u);
  EXPECT_EQ(layout.Cell(0), 2u);
  EXPECT_EQ(layout.Cell(1), 2u);
  EXPECT_EQ(layout.Cell(1.1), 3u);
}

TEST(CellLayout, ConstantReferenceHasOneBinForTheValueItself) {
  const CellLayout layout(Binned({2.5, 2.5}, {10}, 1));
  EXPECT_EQ(layout.size(), 4u);
  EXPECT_THAT(layout.reference_counts(), ElementsAre(1, 0, 10, 0));
  EXPECT_EQ(layout.Cell(kNaN), 0u);
  EXPECT_EQ(layout.Cell(2.4), 1u);
  EXPECT_EQ(layout.Cell(std::nextafter(2.5, 0.0)), 1u);
  EXPECT_EQ(layout.Cell(2.5), 2u);
  EXPECT_EQ(layout.Cell(std::nextafter(2.5, 3.0)), 3u);
  EXPECT_EQ(layout.Cell(100), 3u);
}

TEST(CellLayout, ConstantZeroReferenceSeparatesTheOnesItNeverHad) {
  // A one-hot category that was always 0 in training.
  const CellLayout layout(Binned({0, 0}, {1000}, 0));
  EXPECT_EQ(layout.Cell(0), 2u);
  EXPECT_EQ(layout.Cell(1), 3u);
  EXPECT_EQ(layout.Cell(-1), 1u);
}

TEST(CellLayout, ReferenceWithoutPresentValuesHasMissingAndPresentCells) {
  FeatureReference ref;
  ref.count = 12;
  ref.missing = 12;
  const CellLayout layout(ref);
  EXPECT_EQ(layout.size(), 2u);
  EXPECT_THAT(layout.reference_counts(), ElementsAre(12, 0));
  EXPECT_EQ(layout.Cell(kNaN), 0u);
  EXPECT_EQ(layout.Cell(0), 1u);
  EXPECT_EQ(layout.Cell(-5), 1u);
  EXPECT_EQ(layout.Cell(1e300), 1u);
  EXPECT_EQ(layout.Cell(kInf), 1u);
}

TEST(CellLayout, EmptyReferenceHasTwoEmptyCells) {
  const CellLayout layout{FeatureReference{}};
  EXPECT_THAT(layout.reference_counts(), ElementsAre(0, 0));
  EXPECT_EQ(layout.Cell(3), 1u);
  EXPECT_EQ(layout.Cell(kNaN), 0u);
}

TEST(CellLayout, ReferenceCountsSumToTheReferenceRows) {
  const FeatureReference ref = Binned({0, 10, 20, 30, 40}, {7, 8, 9, 10}, 5);
  const CellLayout layout(ref);
  double total = 0;
  for (double c : layout.reference_counts()) total += c;
  EXPECT_EQ(total, static_cast<double>(ref.count));
  EXPECT_EQ(layout.reference_counts().front(), 5);
  EXPECT_EQ(layout.reference_counts()[1], 0);
  EXPECT_EQ(layout.reference_counts().back(), 0);
}

}  // namespace
}  // namespace vigil::drift
