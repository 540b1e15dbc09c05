#include "vigil/model/cpu/predictor.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/lightgbm_text.h"
#include "vigil/model/model_file.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/tree_shap.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::shared_ptr<const FeatureSchema> Schema(std::vector<std::string> names) {
  auto s = FeatureSchema::Create("test.v1", std::move(names));
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

CpuPredictor Make(absl::StatusOr<TreeEnsemble> model, const FeatureSchema& schema) {
  EXPECT_TRUE(model.ok()) << model.status();
  auto p = CpuPredictor::Create(std::make_shared<const TreeEnsemble>(*std::move(model)), schema);
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

TEST(CpuPredictor, XgboostHandModelFollowsFloat32LessThan) {
  // The schema has an extra column and a different order: binding maps names to columns.
  auto schema = Schema({"b", "unused", "a"});
  CpuPredictor p = Make(LoadXgboostJson(testing::kXgboostTwoTrees, "m.json"), *schema);
  const auto margin = [&](double a, double b) { return p.Margin({b, 99, a}); };
  EXPECT_EQ(margin(1.0, 0), 0.25 + 0.0625);   // a < 1.5: left
  EXPECT_EQ(margin(1.5, 0), 0.5 + 0.0625);    // not < 1.5: right; b = 0 is not < -0.5
  EXPECT_EQ(margin(2, -1), -0.125 + 0.0625);  // right, then b < -0.5
  EXPECT_EQ(margin(kNaN, 0), 0.25 + 0.0625);  // a missing: default left
  EXPECT_EQ(margin(2, kNaN), 0.5 + 0.0625);   // b missing: default right
  // 1.4999999999 rounds to 1.5f in float32, as XGBoost reads it: not < 1.5.
  EXPECT_EQ(margin(1.4999999999, 0), 0.5 + 0.0625);
  EXPECT_EQ(margin(1.4999, 0), 0.25 + 0.0625);
  double prob;
  const double m = margin(1.0, 0);
  p.Transform(absl::MakeConstSpan(&m, 1), absl::MakeSpan(&prob, 1));
  EXPECT_EQ(prob, 1.0f / (1.0f + std::exp(-0.3125f)));
}

// Infinite thresholds and inputs, missing values on both default sides: the compiled float32
// walk (which reads missing values as ±inf or an indicator) against the IR's own rule.
TEST(CpuPredictor, XgboostInfiniteThresholdsAndInputsFollowTheIrRule) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  TreeEnsemble m;
  m.format = ModelFormat::kXgboost;
  m.feature_names = {"a"};
  m.base_margin = {0};
  m.tree_begin = {0};
  int tree = 0;
  for (double threshold : {-kInf, kInf, 0.0}) {
    for (uint8_t default_left : {0, 1}) {
      const auto base = static_cast<int32_t>(m.num_nodes());
      m.feature.insert(m.feature.end(), {0, -1, -1});
      m.threshold.insert(m.threshold.end(), {threshold, 0, 0});
      m.left.insert(m.left.end(), {base + 1, -1, -1});
      m.right.insert(m.right.end(), {base + 2, -1, -1});
      m.default_left.insert(m.default_left.end(), {default_left, 0, 0});
      m.missing.insert(m.missing.end(), 3, MissingType::kNaN);
      // Leaf values are powers of two, so the margin spells out every tree's side.
      m.value.insert(m.value.end(), {0, 0, std::ldexp(1.0, tree++)});
      m.cover.insert(m.cover.end(), {2, 1, 1});
      m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
      m.tree_group.push_back(0);
    }
  }
  ASSERT_OK(m.Validate());
  auto model = std::make_shared<const TreeEnsemble>(m);
  auto p = CpuPredictor::Create(model, *Schema({"a"}));
  ASSERT_OK(p);
  const std::vector<double> inputs = {kNaN, -kInf, kInf, 0, -1, 1, 1e39, -1e39};
  std::vector<double> batch(inputs.size());
  p->MarginsBatch(inputs, inputs.size(), absl::MakeSpan(batch));
  for (size_t i = 0; i < inputs.size(); ++i) {
    double want = 0;
    for (size_t t = 0; t < m.num_trees(); ++t) {
      want += m.value[static_cast<size_t>(m.Next(m.tree_begin[t], inputs[i]))];
    }
    EXPECT_EQ(p->Margin({inputs[i]}), want) << "a = " << inputs[i];
    EXPECT_EQ(batch[i], want) << "a = " << inputs[i];
  }
}

TEST(CpuPredictor, LightGbmHandModelFollowsDoubleLessEqualAndMissingTypes) {
  auto schema = Schema({"a", "b"});
  CpuPredictor p = Make(LoadLightGbmText(testing::kLightGbmThreeTrees, "model.txt"), *schema);
  // Worked by hand from testing_models.h: tree 0 + tree 1 (0.0625) + tree 2.
  EXPECT_EQ(p.Margin({1.5, 1}), 0.25 + 0.0625 + 1);     // a <= 1.5; b <= 5
  EXPECT_EQ(p.Margin({kNaN, 0}), 0.25 + 0.0625 + 2);    // NaN reads as 0; b = 0 is "zero"
  EXPECT_EQ(p.Margin({2, -0.5}), -0.125 + 0.0625 + 1);  // b <= -0.5
  EXPECT_EQ(p.Margin({2, kNaN}), 0.5 + 0.0625 + 2);     // NaN: default right; NaN → 0 → zero
  EXPECT_EQ(p.Margin({2, 7}), 0.5 + 0.0625 + 2);
  EXPECT_EQ(p.Margin({2, 1e-36}), 0.5 + 0.0625 + 2);  // |b| <= 1e-35 counts as zero
  double prob;
  const double m = 1.3125;
  p.Transform(absl::MakeConstSpan(&m, 1), absl::MakeSpan(&prob, 1));
  EXPECT_DOUBLE_EQ(prob, 1.0 / (1.0 + std::exp(-2 * 1.3125)));  // sigmoid:2
}

TEST(CpuPredictor, BindingFailureIsAnError) {
  auto model = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(model);
  auto schema = Schema({"a"});
  EXPECT_THAT(CpuPredictor::Create(std::make_shared<const TreeEnsemble>(*model), *schema),
              vigil::testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                       ::testing::HasSubstr("missing from feature schema")));
}

// ---------------------------------------------------------------------------------------------
// Against python3-xgboost: random models (depth 1 to 10, 1 to 1000 trees, several objectives,
// missing values), written by tools/xgboost_oracle.py with the outputs xgboost computes.

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
};

Csv ReadCsv(const std::string& path, bool has_header) {
  Csv csv;
  std::ifstream in(path);
  std::string line;
  if (has_header && std::getline(in, line)) csv.header = absl::StrSplit(line, ',');
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (absl::string_view cell : absl::StrSplit(line, ',')) {
      double v = kNaN;
      if (!cell.empty()) {
        EXPECT_TRUE(absl::SimpleAtod(cell, &v)) << cell;
      }
      row.push_back(v);
    }
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

struct OracleCase {
  int seed, depth, trees;
  const char* objective;
  int train_rows = 2000;
};

class XgboostOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(XgboostOracle, MarginsEqualXgboostBitForBit) {
  const OracleCase& c = GetParam();
  char dir_template[] = "/tmp/vigil_xgb_oracle_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  ASSERT_NE(dir, nullptr);
  const std::string log = absl::StrCat(dir, "/oracle.log");
  const int rc = vigil::testing::RunProcess(
      "/usr/bin/python3",
      {testing::SourceDir() + "/tools/xgboost_oracle.py", dir, "--seed", std::to_string(c.seed),
       "--depth", std::to_string(c.depth), "--trees", std::to_string(c.trees), "--objective",
       c.objective, "--train-rows", std::to_string(c.train_rows)},
      log);
  ASSERT_EQ(rc, 0)
      << "tools/xgboost_oracle.py failed (scripts/setup installs python3-xgboost); see " << log;
  auto model = LoadModelFile(absl::StrCat(dir, "/model.json"));
  ASSERT_OK(model);
  const Csv rows = ReadCsv(absl::StrCat(dir, "/rows.csv"), true);
  const Csv margins = ReadCsv(absl::StrCat(dir, "/margins.csv"), false);
  const Csv probs = ReadCsv(absl::StrCat(dir, "/probs.csv"), false);
  const Csv contribs = ReadCsv(absl::StrCat(dir, "/contribs.csv"), false);
  ASSERT_EQ(rows.rows.size(), margins.rows.size());
  auto schema = Schema(rows.header);
  auto p = CpuPredictor::Create(*model, *schema);
  ASSERT_OK(p);
  const auto groups = static_cast<size_t>(p->num_groups());
  std::vector<double> flat;
  for (const auto& r : rows.rows) flat.insert(flat.end(), r.begin(), r.end());
  std::vector<double> batch(rows.rows.size() * groups);
  p->MarginsBatch(flat, rows.rows.size(), absl::MakeSpan(batch));
  std::vector<double> parallel(batch.size(), -1);
  p->MarginsBatchParallel(flat, rows.rows.size(), absl::MakeSpan(parallel), 3);
  auto shap = TreeShapExplainer::Create(*model, *schema);
  ASSERT_OK(shap);
  const size_t per_group = (*model)->feature_names.size() + 1;
  ASSERT_EQ(contribs.rows[0].size(), shap->output_size());
  double worst_shap = 0, worst_sum = 0;
  int max_depth = 0;
  for (size_t t = 0; t < (*model)->num_trees(); ++t)
    max_depth = std::max(max_depth, (*model)->Depth(t));
  EXPECT_LE(max_depth, c.depth);
  for (size_t i = 0; i < rows.rows.size(); ++i) {
    std::vector<double> m(groups), prob(groups);
    p->Margins(rows.rows[i], absl::MakeSpan(m));
    p->Transform(m, absl::MakeSpan(prob));
    ASSERT_EQ(margins.rows[i].size(), groups);
    for (size_t g = 0; g < groups; ++g) {
      // float32 sums in XGBoost's order: equal, not merely close.
      ASSERT_EQ(m[g], margins.rows[i][g]) << "row " << i << " group " << g;
      ASSERT_EQ(batch[i * groups + g], m[g]) << "row " << i << ": batch and single row differ";
      ASSERT_EQ(parallel[i * groups + g], m[g]) << "row " << i << ": parallel batch differs";
      ASSERT_NEAR(prob[g], probs.rows[i][g], 1e-6) << "row " << i << " group " << g;
    }
    std::vector<double> phi(shap->output_size());
    shap->Explain(rows.rows[i], absl::MakeSpan(phi));
    for (size_t g = 0; g < groups; ++g) {
      double sum = 0;
      for (size_t k = 0; k < per_group; ++k) {
        sum += phi[g * per_group + k];
        worst_shap = std::max(
            worst_shap, std::abs(phi[g * per_group + k] - contribs.rows[i][g * per_group + k]));
        // XGBoost 1.7 computes SHAP values in float32.
        ASSERT_NEAR(phi[g * per_group + k], contribs.rows[i][g * per_group + k], 1e-4)
            << "row " << i << " group " << g << " feature " << k;
      }
      // Local accuracy: the contributions add up to the margin (ours is float32, the sum double).
      worst_sum = std::max(worst_sum, std::abs(sum - m[g]));
      ASSERT_NEAR(sum, m[g], 1e-5 * std::max(1.0, std::abs(m[g]))) << "row " << i;
    }
  }
  RecordProperty("max_shap_difference", std::to_string(worst_shap));
  RecordProperty("max_sum_difference", std::to_string(worst_sum));
  std::cout << "max |shap - xgboost| = " << worst_shap << ", max |sum - margin| = " << worst_sum
            << "\n";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(RandomModels, XgboostOracle,
                         ::testing::Values(OracleCase{1, 1, 1, "binary:logistic"},
                                           OracleCase{2, 3, 60, "binary:logistic"},
                                           OracleCase{3, 6, 200, "reg:squarederror", 600},
                                           OracleCase{4, 10, 80, "binary:logistic"},
                                           OracleCase{5, 6, 1000, "binary:logistic", 500},
                                           OracleCase{6, 4, 20, "multi:softprob"}));

}  // namespace
}  // namespace vigil
