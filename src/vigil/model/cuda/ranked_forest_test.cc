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
#include "vigil/model/cuda/testing_random_forest.h"
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
  // inputs and the leaves'); the largest offset 1, but 9 offset bits (kRankedMinOffsetBits: an
  // input's 128 staged values take 512 bytes); bins are staged shifted by 11, low bits all ones.
  EXPECT_EQ(ranked->thresholds, (std::vector<float>{1.5f, -0.5f}));
  EXPECT_EQ(ranked->threshold_begin, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(ranked->offset_bits, 9u);
  EXPECT_EQ(ranked->slot_bits, 2u);
  const uint32_t a = ranked->words[0], leaf = ranked->words[1], b = ranked->words[2];
  EXPECT_EQ(RankedInput(a, 9, 2), 0u);
  EXPECT_EQ(a & kRankedMissingLeft, kRankedMissingLeft);  // a missing: left
  EXPECT_EQ(RankedInput(b, 9, 2), 1u);
  EXPECT_EQ(RankedStagedOffset(b, 9, 2), 512u);  // input 1's staged values
  EXPECT_EQ(b & kRankedMissingLeft, 0u);  // b missing: right
  EXPECT_EQ(RankedInput(leaf, 9, 2), 2u);  // the leaves' slot, always staged as bin 0
  EXPECT_EQ(RankedStagedOffset(leaf, 9, 2), 1024u);
  const uint32_t ones = (1u << 11) - 1;
  EXPECT_EQ(RankedStagedBin(0, 9, 2), ones);
  EXPECT_EQ(RankedStep(1, leaf, ones, 9), 1u);  // a leaf steps to itself
  EXPECT_EQ(ranked->leaf_value[1], 0.25f);
  EXPECT_EQ(ranked->leaf_value[0], 0.0f);
  // Tree 0 at node 0, 2 deep; tree 1 (one leaf) at node 5; padded to sixteen, as the roots'
  // words.
  std::vector<uint32_t> header(16, 0), roots(16, 0);
  header[0] = 2;
  header[1] = 5u << 8;
  roots[0] = a;
  roots[1] = ranked->words[5];
  EXPECT_EQ(ranked->tree_header, header);
  EXPECT_EQ(ranked->root_word, roots);
  // Staged: the count of thresholds at or below the value, shifted over ones; a missing value
  // all ones.
  const float nan = std::nanf("");
  const float x[] = {1.5f, nan};
  EXPECT_EQ(ranked->Staged(x, 2, 0), 1u << 11 | ones);
  EXPECT_EQ(RankedStep(0, a, 1u << 11 | ones, 9), 2u);  // 1.5 is not below 1.5: right
  const float below[] = {std::nextafter(1.5f, 0.0f), nan};
  EXPECT_EQ(ranked->Staged(below, 2, 0), ones);
  EXPECT_EQ(RankedStep(0, a, ones, 9), 1u);
  EXPECT_EQ(ranked->Staged(x, 2, 1), kMissingStaged);
  EXPECT_EQ(RankedStep(2, b, kMissingStaged, 9), 4u);  // b's default: right
  EXPECT_EQ(RankedStep(0, a, kMissingStaged, 9), 1u);  // a's default: left
  const float at[] = {0.0f, -0.5f}, under[] = {0.0f, -1.0f};
  EXPECT_EQ(RankedStep(2, b, ranked->Staged(at, 2, 1), 9), 4u);  // -0.5 is not below -0.5
  EXPECT_EQ(RankedStep(2, b, ranked->Staged(under, 2, 1), 9), 3u);
  EXPECT_EQ(ranked->Staged(x, 2, 2), ones);
  // The walk: x (a = 1.5: right to b; b missing: right) ends on tree 0's last leaf.
  EXPECT_EQ(ranked->Margin(*layout, x), layout->Margin(x));
}

// Every word's test, exhaustively over small fields: a present value goes left exactly when its
// bin is below the node's rank, whatever the word's offset and input bits; a missing one as the
// word's bit 31 says.
TEST(RankedForest, TheStepComparesBinWithRank) {
  const uint32_t ob = 9, sb = 3, shift = ob + sb;
  for (uint32_t rank = 0; rank < 40; ++rank) {
    for (uint32_t low : {0u, 1u, 511u, (5u << ob) | 7u, (1u << shift) - 1}) {
      for (uint32_t missing_left : {0u, kRankedMissingLeft}) {
        const uint32_t word = missing_left | rank << shift | low;
        const uint32_t offset = low & ((1u << ob) - 1);
        for (uint32_t bin = 0; bin < 41; ++bin) {
          ASSERT_EQ(RankedStep(100, word, RankedStagedBin(bin, ob, sb), ob),
                    100 + offset + (bin < rank ? 0 : 1))
              << "rank " << rank << " bin " << bin << " low " << low;
        }
        ASSERT_EQ(RankedStep(100, word, kMissingStaged, ob),
                  100 + offset + (missing_left != 0 ? 0 : 1));
      }
    }
  }
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
