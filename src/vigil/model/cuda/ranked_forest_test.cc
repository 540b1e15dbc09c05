// The ranked walk itself is checked against the CPU predictor with the layout's, on the same
// models (forest_layout_test.cc, ExpectLayoutMatchesCpu); here: ranks, bins, the search, limits.
#include "vigil/model/cuda/ranked_forest.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/cuda/random_forest.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cuda {
namespace {

using ::testing::HasSubstr;

TEST(RankedForest, HandModelRanksAndBins) {
  auto loaded = LoadXgboostJson(vigil::testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(loaded);
  auto layout = ForestLayout::Build(*loaded);
  ASSERT_OK(layout);
  auto ranked = RankedForest::Build(*layout);
  ASSERT_OK(ranked);
  // Tree 0: a<1.5 | leaf, b<-0.5 | leaf, leaf. One threshold per input; 3 slots (2 bits: the
  // inputs and the leaves'), the largest offset 1 (1 bit); bins are staged shifted by 3.
  EXPECT_EQ(ranked->thresholds, (std::vector<float>{1.5f, -0.5f}));
  EXPECT_EQ(ranked->threshold_begin, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(ranked->offset_bits, 1u);
  EXPECT_EQ(ranked->slot_bits, 2u);
  const uint32_t root = ranked->words[0], leaf = ranked->words[1], b = ranked->words[2];
  EXPECT_EQ(RankedInput(root, 1, 2), 0u);
  EXPECT_EQ(root & kRankedMissingLeft, kRankedMissingLeft);  // a missing: left
  EXPECT_EQ(RankedInput(b, 1, 2), 1u);
  EXPECT_EQ(b & kRankedMissingLeft, 0u);  // b missing: right
  EXPECT_EQ(RankedInput(leaf, 1, 2), 2u);  // the leaves' slot, always staged 0
  EXPECT_EQ(RankedStep(1, leaf, 0, 1, 2), 1u);  // a leaf steps to itself
  EXPECT_EQ(ranked->leaf_value[1], 0.25f);
  EXPECT_EQ(ranked->leaf_value[0], 0.0f);
  // Tree 0 at node 0, 2 deep; tree 1 (one leaf) at node 5; padded to sixteen.
  std::vector<uint32_t> header(16, 0);
  header[0] = 2;
  header[1] = 5u << 8;
  EXPECT_EQ(ranked->tree_header, header);
  // Staged: the count of thresholds at or below the value, shifted; a missing value all ones.
  const float nan = std::nanf("");
  const float x[] = {1.5f, nan};
  EXPECT_EQ(ranked->Staged(x, 2, 0), 1u << 3);  // 1.5 is not below 1.5: right
  EXPECT_EQ(RankedStep(0, root, 1u << 3, 1, 2), 2u);
  const float below[] = {std::nextafter(1.5f, 0.0f), nan};
  EXPECT_EQ(ranked->Staged(below, 2, 0), 0u);
  EXPECT_EQ(RankedStep(0, root, 0, 1, 2), 1u);
  EXPECT_EQ(ranked->Staged(x, 2, 1), kMissingStaged);
  EXPECT_EQ(RankedStep(2, b, kMissingStaged, 1, 2), 4u);     // b's default: right
  EXPECT_EQ(RankedStep(0, root, kMissingStaged, 1, 2), 1u);  // a's default: left
  const float at[] = {0.0f, -0.5f}, under[] = {0.0f, -1.0f};
  EXPECT_EQ(RankedStep(2, b, ranked->Staged(at, 2, 1), 1, 2), 4u);  // -0.5 is not below -0.5
  EXPECT_EQ(RankedStep(2, b, ranked->Staged(under, 2, 1), 1, 2), 3u);
  EXPECT_EQ(ranked->Staged(x, 2, 2), 0u);
}

// The kernel's search of the threshold tree counts as the sorted array does: at thresholds, at
// their neighbours, between them, beyond both ends and at the infinities, for inputs with 0 to
// hundreds of thresholds.
TEST(RankedForest, TheSearchTreeCountsAsTheSortedThresholds) {
  vigil::testing::RandomForestSpec spec;
  spec.depth = 7;
  spec.trees = 30;
  spec.features = 40;  // some inputs with few thresholds or none
  spec.early_leaf = 0.3;
  auto layout = ForestLayout::Build(vigil::testing::RandomForest(spec));
  ASSERT_OK(layout);
  auto ranked = RankedForest::Build(*layout);
  ASSERT_OK(ranked);
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t f = 0; f < layout->num_inputs; ++f) {
    const uint32_t begin = ranked->threshold_begin[f], end = ranked->threshold_begin[f + 1];
    ASSERT_EQ(ranked->search_height[f], static_cast<uint32_t>(std::bit_width(end - begin)));
    std::vector<float> probes = {-inf, inf, -2.0f, 2.0f, 0.0f};
    for (uint32_t k = begin; k < end; ++k) {
      const float t = ranked->thresholds[k];
      probes.insert(probes.end(), {t, std::nextafter(t, -inf), std::nextafter(t, inf)});
    }
    for (float v : probes) {
      const auto want = static_cast<uint32_t>(
          std::upper_bound(ranked->thresholds.begin() + begin, ranked->thresholds.begin() + end, v) -
          (ranked->thresholds.begin() + begin));
      ASSERT_EQ(ranked->SearchBin(f, v), want) << "input " << f << " value " << v;
    }
  }
}

TEST(RankedForest, RefusesWhatDoesNotFitFourBytes) {
  // Depth 15: left children up to 32,767 nodes on (15 offset bits), 33 slots (6 bits) and about
  // 2,000 distinct thresholds an input (11 or 12 bits), with the missing bit 33 or 34.
  vigil::testing::RandomForestSpec spec;
  spec.depth = 15;
  spec.trees = 2;
  auto layout = ForestLayout::Build(vigil::testing::RandomForest(spec));
  ASSERT_OK(layout);
  EXPECT_THAT(RankedForest::Build(*layout).status(),
              vigil::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("more than 31")));
}

}  // namespace
}  // namespace vigil::cuda
