#include "vigil/model/xgboost_json.h"

#include <cmath>
#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/testing_models.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(XgboostJson, LoadsTreesFeaturesAndObjective) {
  auto m = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(m);
  EXPECT_EQ(m->format, ModelFormat::kXgboost);
  EXPECT_EQ(m->objective, "binary:logistic");
  EXPECT_EQ(m->link, ModelLink::kSigmoid);
  EXPECT_THAT(m->feature_names, ::testing::ElementsAre("a", "b"));
  ASSERT_EQ(m->num_trees(), 2u);
  EXPECT_EQ(m->num_nodes(), 6u);
  EXPECT_EQ(m->Depth(0), 2);
  EXPECT_EQ(m->Depth(1), 0);
  EXPECT_EQ(m->base_margin, std::vector<double>{0.0});  // logit(0.5)
  // Root of tree 0: a < 1.5, missing left; its right child splits on b.
  EXPECT_EQ(m->feature[0], 0);
  EXPECT_EQ(m->threshold[0], 1.5);
  EXPECT_EQ(m->default_left[0], 1);
  EXPECT_EQ(m->feature[m->right[0]], 1);
  EXPECT_TRUE(m->is_leaf(static_cast<size_t>(m->left[0])));
  EXPECT_EQ(m->value[static_cast<size_t>(m->left[0])], 0.25);
  EXPECT_EQ(m->value[5], 0.0625);  // tree 1's only node
  EXPECT_EQ(m->cover[0], 20);
}

TEST(XgboostJson, BaseScoreBecomesAFloat32Logit) {
  const std::string json =
      absl::StrReplaceAll(testing::kXgboostTwoTrees, {{"\"5E-1\"", "\"2E-1\""}});
  auto m = LoadXgboostJson(json, "m.json");
  ASSERT_OK(m);
  // XGBoost 1.7: -logf(1.0f / 0.2f - 1.0f), in float32.
  EXPECT_EQ(m->base_margin[0], static_cast<double>(-std::log(1.0f / 0.2f - 1.0f)));
}

TEST(XgboostJson, RefusesWhatItDoesNotSupport) {
  EXPECT_THAT(
      LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                          {{"\"name\": \"gbtree\"", "\"name\": \"dart\""}}),
                      "m.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unsupported: booster 'dart'")));
  EXPECT_THAT(LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                                  {{"\"split_type\": [0, 0, 0, 0, 0]",
                                                    "\"split_type\": [1, 0, 0, 0, 0]"}}),
                              "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unsupported: categorical split in tree 0 node 0")));
  EXPECT_THAT(LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                                  {{"binary:logistic", "rank:pairwise"}}),
                              "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unsupported: objective 'rank:pairwise'")));
}

TEST(XgboostJson, MalformedModelsNameTheProblem) {
  EXPECT_THAT(LoadXgboostJson("{\"learner\": ", "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.json: XGBoost model")));
  EXPECT_THAT(LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                                  {{"\"right_children\": [2, -1, 4, -1, -1]",
                                                    "\"right_children\": [2, -1, 9, -1, -1]"}}),
                              "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("child index out of range")));
  EXPECT_THAT(LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                                  {{"\"right_children\": [2, -1, 4, -1, -1]",
                                                    "\"right_children\": [2, -1, 0, -1, -1]"}}),
                              "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reached twice")));
  EXPECT_THAT(LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                                  {{"\"split_indices\": [0, 0, 1, 0, 0]",
                                                    "\"split_indices\": [0, 0, 7, 0, 0]"}}),
                              "m.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("split feature 7")));
  EXPECT_THAT(
      LoadXgboostJson(absl::StrReplaceAll(testing::kXgboostTwoTrees,
                                          {{"\"tree_info\": [0, 0]", "\"tree_info\": [0]"}}),
                      "m.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tree_info: 1 entries")));
}

}  // namespace
}  // namespace vigil
