#include "vigil/model/cuda/forest_layout.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/cuda/random_forest.h"
#include "vigil/model/lightgbm_text.h"
#include "vigil/model/model_file.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/tree_shap.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::cuda {
namespace {

using ::testing::HasSubstr;

std::vector<float> ToFloat(const std::vector<double>& row) {
  return std::vector<float>(row.begin(), row.end());
}

float MarginWalkingForestDepth(const ForestLayout& layout, const float* x) {
  float margin = layout.base_margin;
  for (size_t t = 0; t < layout.num_trees(); ++t) {
    uint32_t i = layout.trees[t].root;
    for (uint32_t d = 0; d < layout.max_depth(); ++d) {
      const ForestNode node = layout.NodeAt(i);
      i = StepFrom(i, node, ExpandedSlot(x, layout.num_inputs, NodeSlot(node.word)));
    }
    margin += std::bit_cast<float>(layout.units[i]);
  }
  return margin;
}

// The layout's walk (the kernels' step, run on the host) against the CPU predictor, bit for bit,
// and its path-wise TreeSHAP against the CPU explainer.
void ExpectLayoutMatchesCpu(std::shared_ptr<const TreeEnsemble> model,
                            const std::vector<double>& rows, size_t n) {
  const std::vector<std::string>& columns = model->feature_names;
  const size_t width = columns.size();
  auto layout = ForestLayout::Build(*model);
  ASSERT_OK(layout);
  auto predictor = CpuPredictor::Create(model, columns, "test columns");
  ASSERT_OK(predictor);
  auto explainer = TreeShapExplainer::Create(model, columns, "test columns");
  ASSERT_OK(explainer);
  std::vector<double> want(n);
  predictor->MarginsBatch(rows, n, absl::MakeSpan(want));
  std::vector<double> shap_want(width + 1), shap_got(width + 1);
  for (size_t i = 0; i < n; ++i) {
    const std::vector<double> row(rows.begin() + static_cast<ptrdiff_t>(i * width),
                                  rows.begin() + static_cast<ptrdiff_t>((i + 1) * width));
    const std::vector<float> x = ToFloat(row);
    const float got = layout->Margin(x.data());
    ASSERT_EQ(static_cast<double>(got), want[i]) << "row " << i;  // the same bits
    // The kernels walk a tree as many steps as the deepest tree of its group: every tree may be
    // walked the forest's depth.
    ASSERT_EQ(MarginWalkingForestDepth(*layout, x.data()), got) << "row " << i;
    explainer->Explain(row, absl::MakeSpan(shap_want));
    layout->ShapValues(x.data(), absl::MakeSpan(shap_got));
    double sum = 0;
    for (size_t f = 0; f <= width; ++f) {
      ASSERT_NEAR(shap_got[f], shap_want[f], 1e-9 * std::max(1.0, std::abs(shap_want[f])))
          << "row " << i << " feature " << f;
      sum += shap_got[f];
    }
    // SHAP values add up to the margin (local accuracy).
    EXPECT_NEAR(sum, want[i], 1e-4 * std::max(1.0, std::abs(want[i]))) << "row " << i;
  }
}

TEST(ForestLayout, HandModelMatchesTheCpuBackend) {
  auto loaded = LoadXgboostJson(vigil::testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(loaded);
  const double nan = std::nan("");
  const std::vector<double> rows = {1, 0, 1.5, 1, 2, -1, nan, 0, 2, nan, 2, 7, nan, nan, 2, -0.5};
  ExpectLayoutMatchesCpu(std::make_shared<const TreeEnsemble>(*loaded), rows, rows.size() / 2);
}

TEST(ForestLayout, SiblingsAreAdjacentAndLeavesStepToThemselves) {
  auto loaded = LoadXgboostJson(vigil::testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(loaded);
  auto layout = ForestLayout::Build(*loaded);
  ASSERT_OK(layout);
  // Tree 0 breadth-first: a<1.5 | leaf 0.25, b<-0.5 | leaf -0.125, leaf 0.5: two full nodes, a
  // full leaf above the deepest level, two compact leaves on it as an odd last pair, l _ r (9
  // units; it fits the first line whole, so it starts at 0). Tree 1: one leaf, full (2 units): only the trees as deep as the
  // deepest have compact leaves.
  ASSERT_EQ(layout->units.size(), 12u);
  ASSERT_EQ(layout->num_trees(), 2u);
  ASSERT_EQ(layout->trees.size(), kTreeHeaderGroup);  // padded
  EXPECT_EQ(layout->trees[0].root, 0u);
  EXPECT_EQ(layout->trees[0].depth, 2u);
  EXPECT_EQ(layout->trees[1].root, 10u);
  EXPECT_EQ(layout->trees[1].depth, 0u);
  EXPECT_EQ(layout->trees[2].depth, 0u);
  const ForestNode root = layout->NodeAt(0), leaf = layout->NodeAt(2), b = layout->NodeAt(4);
  EXPECT_EQ(root.word & 0xFFFFu, 2u);     // left child right after the root, full children
  EXPECT_EQ(NodeSlot(root.word), 0u);     // input a, missing left: slot 2a
  EXPECT_EQ(b.word & 0xFFFFu, 2u);        // compact children at units 6 and 8 (an odd last pair)
  EXPECT_EQ(NodeSlot(b.word), 3u);        // input b, missing right: slot 2b + 1
  EXPECT_EQ(leaf.word, LeafWord(2));      // the -inf slot, offset 0
  EXPECT_EQ(leaf.value, 0.25f);
  EXPECT_EQ(std::bit_cast<float>(layout->units[6]), -0.125f);
  EXPECT_EQ(std::bit_cast<float>(layout->units[8]), 0.5f);
  EXPECT_EQ(layout->units[7], 0u);  // the gap of the odd pair
  EXPECT_EQ(std::bit_cast<float>(layout->units[10]), 0.0625f);  // tree 1's leaf
  EXPECT_EQ(layout->units[11], LeafWord(2));
  // A full leaf steps to itself; missing values read -inf or +inf by the node's default side.
  const float x[] = {std::nanf(""), 7.0f};
  EXPECT_EQ(StepFrom(2, leaf, ExpandedSlot(x, 2, NodeSlot(leaf.word))), 2u);
  EXPECT_EQ(StepFrom(0, root, ExpandedSlot(x, 2, 0)), 2u);  // missing: left
  EXPECT_EQ(StepFrom(0, root, 1.5f), 4u);                    // not below the threshold: right
  EXPECT_EQ(StepFrom(4, b, 7.0f), 8u);                       // right is always left + 2
  EXPECT_EQ(StepFrom(4, b, -1.0f), 6u);
  EXPECT_EQ(ExpandedSlot(x, 2, 1), std::numeric_limits<float>::infinity());
  EXPECT_EQ(ExpandedSlot(x, 2, 2), 7.0f);
  EXPECT_EQ(ExpandedSlot(x, 2, 4), -std::numeric_limits<float>::infinity());
  // Paths: 4 leaves; the single-leaf tree's path has no elements.
  EXPECT_EQ(layout->num_paths(), 4u);
  EXPECT_EQ(layout->base_margin, 0.0f);
}

// A complete depth-8 tree: 255 full nodes and 256 compact leaves (766 units); each tree starts 8
// bytes into a 128-byte line, so that its levels from the fifth on start on lines.
TEST(ForestLayout, LevelsOfCompleteTreesStartOnLines) {
  vigil::testing::RandomForestSpec spec;
  spec.depth = 8;
  spec.trees = 5;
  auto layout = ForestLayout::Build(vigil::testing::RandomForest(spec));
  ASSERT_OK(layout);
  ASSERT_EQ(layout->num_trees(), 5u);
  EXPECT_EQ(layout->trees.size(), 8u);
  for (size_t t = 0; t < 5; ++t) {
    SCOPED_TRACE(absl::StrCat("tree ", t));
    const uint32_t root = layout->trees[t].root;
    EXPECT_EQ(root % kLineUnits, 2u);
    EXPECT_EQ(layout->trees[t].depth, 8u);
    if (t > 0) {
      EXPECT_LE(root - layout->trees[t - 1].root, 766u + kLineUnits);
    }
    // Walk the left spine: level L's first node is at root + 2 * (2^L - 1) units.
    uint32_t i = root;
    for (uint32_t level = 0; level < 8; ++level) {
      EXPECT_EQ(i, root + 2 * ((1u << level) - 1)) << "level " << level;
      if (level >= 4) {
        EXPECT_EQ(i % kLineUnits, 0u) << "level " << level;
      }
      i = StepFrom(i, layout->NodeAt(i), -std::numeric_limits<float>::infinity());
    }
    EXPECT_EQ(i, root + 2 * 255);  // the first compact leaf
    EXPECT_EQ(i % kLineUnits, 0u);
  }
  EXPECT_EQ(layout->units.size(), layout->trees[4].root + 766u);
}

// Depths 1 to 12, complete and ragged trees, missing values and inputs equal to thresholds.
TEST(ForestLayout, RandomModelsMatchTheCpuBackend) {
  for (int depth = 1; depth <= 12; ++depth) {
    vigil::testing::RandomForestSpec spec;
    spec.depth = depth;
    spec.trees = depth <= 8 ? 40 : 8;
    spec.features = 12;
    spec.early_leaf = depth % 2 == 0 ? 0.0 : 0.25;
    spec.zero_cover = depth == 5 ? 0.2 : 0.0;
    spec.seed = static_cast<uint64_t>(depth);
    SCOPED_TRACE(absl::StrCat("depth ", depth));
    auto model = std::make_shared<const TreeEnsemble>(vigil::testing::RandomForest(spec));
    ASSERT_OK(model->Validate());
    const size_t n = 40;
    const std::vector<double> rows =
        vigil::testing::RandomRows(*model, n, 12, 0.1, 0.1, 100 + spec.seed);
    ExpectLayoutMatchesCpu(model, rows, n);
  }
}

TEST(ForestLayout, TheDemoModelMatchesTheCpuBackend) {
  auto loaded = LoadModelFile(vigil::testing::TestDataPath("models/demo_model.json"));
  ASSERT_OK(loaded);
  std::shared_ptr<const TreeEnsemble> model = *loaded;
  const size_t width = model->feature_names.size();
  const std::vector<double> rows = vigil::testing::ThresholdRows(*model, 200, width, 0.05, 3);
  ExpectLayoutMatchesCpu(model, rows, 200);
}

TEST(ForestLayout, TreesDeeperThanTwelveLevelsMatchTheCpuBackend) {
  vigil::testing::RandomForestSpec spec;
  spec.depth = 13;
  spec.trees = 2;
  spec.early_leaf = 0.15;
  auto model = vigil::testing::RandomForest(spec);
  auto layout = ForestLayout::Build(model);
  ASSERT_OK(layout);
  ASSERT_GT(layout->max_depth(), 12u);
  const std::vector<double> rows = vigil::testing::RandomRows(model, 20, 32, 0.1, 0.1, 5);
  ExpectLayoutMatchesCpu(std::make_shared<const TreeEnsemble>(model), rows, 20);
}

TEST(ForestLayout, PathsAreGroupedByQuadratureWidth) {
  vigil::testing::RandomForestSpec spec;
  spec.depth = 12;
  spec.trees = 3;
  spec.features = 40;
  auto layout = ForestLayout::Build(vigil::testing::RandomForest(spec));
  ASSERT_OK(layout);
  EXPECT_EQ(layout->num_paths(), 3u * 4096u);
  EXPECT_EQ(layout->group_begin.back(), layout->num_paths());
  for (size_t g = 0; g < kShapWidths.size(); ++g) {
    for (uint32_t p = layout->group_begin[g]; p < layout->group_begin[g + 1]; ++p) {
      const uint32_t elements = layout->path_element_begin[p + 1] - layout->path_element_begin[p];
      EXPECT_LE((elements + 1) / 2, static_cast<uint32_t>(kShapWidths[g]));
      if (g > 0) {
        EXPECT_GT((elements + 1) / 2, static_cast<uint32_t>(kShapWidths[g - 1]));
      }
    }
  }
}

TEST(ForestLayout, RefusesWhatTheKernelsDoNotTake) {
  auto lightgbm = LoadLightGbmText(vigil::testing::kLightGbmThreeTrees, "model.txt");
  ASSERT_OK(lightgbm);
  EXPECT_THAT(ForestLayout::Build(*lightgbm).status(),
              vigil::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("LightGBM model (double thresholds)")));

  auto multi = vigil::testing::RandomForest({});
  multi.num_groups = 2;
  multi.base_margin = {0, 0};
  multi.tree_group.back() = 1;
  multi.link = ModelLink::kSoftmax;
  EXPECT_THAT(ForestLayout::Build(multi).status(),
              vigil::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 groups")));
}

TEST(ForestLayout, QuadratureIntegratesPolynomialsExactly) {
  const ShapQuadrature& q = ShapQuadrature::Get();
  for (size_t g = 0; g < kShapWidths.size(); ++g) {
    const int width = kShapWidths[g];
    for (int degree = 0; degree < 2 * width; ++degree) {
      double sum = 0;
      for (int i = 0; i < width; ++i) {
        sum += q.w[g][static_cast<size_t>(i)] * std::pow(q.t[g][static_cast<size_t>(i)], degree);
      }
      EXPECT_NEAR(sum, 1.0 / (degree + 1), 1e-12) << "width " << width << " degree " << degree;
    }
  }
}

}  // namespace
}  // namespace vigil::cuda
