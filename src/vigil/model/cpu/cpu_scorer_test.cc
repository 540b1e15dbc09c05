#include "vigil/model/cpu/cpu_scorer.h"

#include <cmath>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(CpuScorer, ScoresAreTheModelsProbabilitiesAndExplainGivesReasons) {
  auto schema = FeatureSchema::Create("t.v1", {"b", "a"});
  ASSERT_OK(schema);
  auto model = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(model);
  auto shared = std::make_shared<const TreeEnsemble>(*model);
  auto scorer = CpuScorer::Create(shared, **schema, "m@1");
  ASSERT_OK(scorer);
  EXPECT_EQ((*scorer)->model_version(), "m@1");
  EXPECT_EQ((*scorer)->row_width(), 2u);
  // Rows (b, a): a = 1 → margin 0.3125; a = 2, b = -1 → -0.0625 (testing_models.h).
  const std::vector<double> rows = {0, 1, -1, 2};
  std::vector<double> scores(2);
  ASSERT_OK((*scorer)->Score(rows, 2, absl::MakeSpan(scores)));
  EXPECT_EQ(scores[0], 1.0f / (1.0f + std::exp(-0.3125f)));
  EXPECT_EQ(scores[1], 1.0f / (1.0f + std::exp(0.0625f)));
  auto reasons = (*scorer)->Explain(absl::MakeConstSpan(&rows[2], 2), 5);
  ASSERT_OK(reasons);
  ASSERT_EQ(reasons->size(), 2u);
  EXPECT_EQ((*reasons)[0].kind, Reason::Kind::kModel);
  EXPECT_EQ((*reasons)[0].code, "b");  // |-0.234375| > |-0.109375| (reason_codes_test.cc)
  EXPECT_NEAR((*reasons)[0].contribution, -0.234375, 1e-12);
}

TEST(CpuScorer, AttributionCoversEveryFeatureAndSumsToTheMargin) {
  auto schema = FeatureSchema::Create("t.v1", {"b", "a"});
  ASSERT_OK(schema);
  auto model = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(model);
  auto scorer = CpuScorer::Create(std::make_shared<const TreeEnsemble>(*model), **schema, "m@1");
  ASSERT_OK(scorer);
  // Row (b, a) = (-1, 2): margin -0.0625, b contributes -0.234375 (reason_codes_test.cc).
  const std::vector<double> row = {-1, 2};
  auto a = (*scorer)->Attribute(row);
  ASSERT_OK(a);
  ASSERT_EQ(a->features.size(), 2u);
  double sum = a->bias;
  for (const FeatureAttribution& f : a->features) sum += f.contribution;
  EXPECT_NEAR(sum, -0.0625, 1e-12);
  EXPECT_NEAR(a->margin, -0.0625, 1e-6);
  EXPECT_NEAR(a->score, 1.0 / (1.0 + std::exp(0.0625)), 1e-6);
  for (const FeatureAttribution& f : a->features) {
    if (f.feature == "b") {
      EXPECT_EQ(f.value, -1);
      EXPECT_NEAR(f.contribution, -0.234375, 1e-12);
    } else {
      EXPECT_EQ(f.feature, "a");
      EXPECT_EQ(f.value, 2);
    }
  }
  EXPECT_THAT((*scorer)->Attribute(std::vector<double>{1}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rows of 2")));
}

TEST(CpuScorer, RefusesModelsWithoutOneProbability) {
  auto schema = FeatureSchema::Create("t.v1", {"a", "b"});
  ASSERT_OK(schema);
  auto model = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(model);
  TreeEnsemble regression = *model;
  regression.objective = "reg:squarederror";
  regression.link = ModelLink::kIdentity;
  EXPECT_THAT(
      CpuScorer::Create(std::make_shared<const TreeEnsemble>(regression), **schema, "r").status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("'reg:squarederror' does not give one probability")));
  auto other = FeatureSchema::Create("t.v2", {"x"});
  ASSERT_OK(other);
  EXPECT_THAT(
      CpuScorer::Create(std::make_shared<const TreeEnsemble>(*model), **other, "m").status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("a, b")));
}

}  // namespace
}  // namespace vigil
