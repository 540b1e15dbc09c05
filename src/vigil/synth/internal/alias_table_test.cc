#include "vigil/synth/internal/alias_table.h"

#include <vector>

#include "gtest/gtest.h"
#include "vigil/synth/internal/rng.h"

namespace vigil::synth::internal {
namespace {

TEST(AliasTable, DrawsInProportionToWeights) {
  const std::vector<double> weights = {1, 0, 3, 6, 0.5, 9.5};
  const AliasTable table(weights);
  ASSERT_EQ(table.size(), weights.size());
  Rng rng(1);
  std::vector<int> counts(weights.size(), 0);
  constexpr int kDraws = 400000;
  for (int i = 0; i < kDraws; ++i) ++counts[table.Sample(rng.Next())];
  for (size_t i = 0; i < weights.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(counts[i]) / kDraws, weights[i] / 20.0, 0.003) << i;
  }
  // Zero weights are never drawn, not merely rarely.
  EXPECT_EQ(counts[1], 0);
}

TEST(AliasTable, SingleEntryAlwaysDrawn) {
  const AliasTable table(std::vector<double>{0.25});
  Rng rng(2);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(table.Sample(rng.Next()), 0u);
  EXPECT_EQ(table.Sample(~uint64_t{0}), 0u);
}

TEST(AliasTable, SameBitsGiveSameIndex) {
  const AliasTable table(std::vector<double>{1, 2, 3, 4});
  for (uint64_t bits : {uint64_t{0}, uint64_t{12345}, ~uint64_t{0}}) {
    EXPECT_EQ(table.Sample(bits), table.Sample(bits));
    EXPECT_LT(table.Sample(bits), 4u);
  }
}

}  // namespace
}  // namespace vigil::synth::internal
