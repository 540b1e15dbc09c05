#include "vigil/model/cuda/forest_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/cuda/testing_random_forest.h"
#include "vigil/model/cuda/ranked_forest.h"
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

// The layout's walk (the kernels' step, run on the host) and the ranked walk (RankedForest, the
// ranked kernels') against the CPU predictor, bit for bit, and the layout's path-wise TreeSHAP
// against the CPU explainer.
void ExpectLayoutMatchesCpu(std::shared_ptr<const TreeEnsemble> model,
                            const std::vector<double>& rows, size_t n) {
  const std::vector<std::string>& columns = model->feature_names;
  const size_t width = columns.size();
  auto layout = ForestLayout::Build(*model);
  ASSERT_OK(layout);
  auto ranked = RankedForest::Build(*layout);
  ASSERT_OK(ranked);
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
    ASSERT_EQ(ranked->Margin(*layout, x.data()), got) << "row " << i;
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
  // Tree 0 breadth-first: a<1.5 | leaf 0.25, b<-0.5 | leaf -0.125, leaf 0.5. Tree 1: one leaf.
  ASSERT_EQ(layout->nodes.size(), 6u);
  EXPECT_EQ(layout->tree_root, (std::vector<uint32_t>{0, 5}));
  EXPECT_EQ(layout->tree_depth, (std::vector<uint8_t>{2, 0}));
  EXPECT_EQ(layout->nodes[0].word & 0xFFFFu, 1u);  // left child right after the root
  EXPECT_EQ(NodeSlot(layout->nodes[0].word), 0u);  // input a, missing left: slot 2a
  EXPECT_EQ(layout->nodes[2].word & 0xFFFFu, 1u);  // node 2's children are 3 and 4
  EXPECT_EQ(NodeSlot(layout->nodes[2].word), 3u);  // input b, missing right: slot 2b + 1
  EXPECT_EQ(layout->nodes[1].word, LeafWord(2));   // the -inf slot, offset 0
  EXPECT_EQ(layout->nodes[1].value, 0.25f);
  // A leaf steps to itself; missing values read -inf or +inf by the node's default side.
  const float x[] = {std::nanf(""), 7.0f};
  EXPECT_EQ(StepFrom(1, layout->nodes[1], ExpandedSlot(x, 2, NodeSlot(layout->nodes[1].word))), 1u);
  EXPECT_EQ(StepFrom(0, layout->nodes[0], ExpandedSlot(x, 2, 0)), 1u);  // missing: left
  EXPECT_EQ(ExpandedSlot(x, 2, 1), std::numeric_limits<float>::infinity());
  EXPECT_EQ(ExpandedSlot(x, 2, 2), 7.0f);
  EXPECT_EQ(ExpandedSlot(x, 2, 4), -std::numeric_limits<float>::infinity());
  // Paths: 4 leaves; the single-leaf tree's path has no elements.
  EXPECT_EQ(layout->num_paths(), 4u);
  EXPECT_EQ(layout->base_margin, 0.0f);
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
  ASSERT_GT(*std::max_element(layout->tree_depth.begin(), layout->tree_depth.end()), 12);
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
