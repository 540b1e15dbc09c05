#include "vigil/model/lightgbm_text.h"

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

TEST(LightGbmText, LoadsTreesWithLeavesAfterInternalNodes) {
  auto m = LoadLightGbmText(testing::kLightGbmThreeTrees, "model.txt");
  ASSERT_OK(m);
  EXPECT_EQ(m->format, ModelFormat::kLightGbm);
  EXPECT_EQ(m->link, ModelLink::kSigmoid);
  EXPECT_EQ(m->sigmoid_scale, 2.0);
  EXPECT_THAT(m->feature_names, ::testing::ElementsAre("a", "b"));
  ASSERT_EQ(m->num_trees(), 3u);
  EXPECT_EQ(m->num_nodes(), 5u + 1 + 3);
  // Tree 0: internal nodes 0, 1 then leaves 2, 3, 4 (LightGBM's ~0, ~1, ~2).
  EXPECT_EQ(m->left[0], 2);
  EXPECT_EQ(m->right[0], 1);
  EXPECT_EQ(m->left[1], 3);
  EXPECT_EQ(m->right[1], 4);
  EXPECT_EQ(m->missing[0], MissingType::kNone);
  EXPECT_EQ(m->default_left[0], 1);
  EXPECT_EQ(m->missing[1], MissingType::kNaN);
  EXPECT_EQ(m->default_left[1], 0);
  EXPECT_EQ(m->value[4], 0.5);
  EXPECT_EQ(m->cover[0], 20);
  EXPECT_EQ(m->value[5], 0.0625);  // tree 1: one leaf
  EXPECT_EQ(m->missing[6], MissingType::kZero);
  EXPECT_EQ(m->base_margin, std::vector<double>{0.0});
}

TEST(LightGbmText, RefusesCategoricalSplitsAndTruncatedFiles) {
  EXPECT_THAT(LoadLightGbmText(absl::StrReplaceAll(testing::kLightGbmThreeTrees,
                                                   {{"decision_type=2 8", "decision_type=3 8"}}),
                               "model.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unsupported: categorical split in tree 0")));
  const std::string text = testing::kLightGbmThreeTrees;
  EXPECT_THAT(LoadLightGbmText(text.substr(0, text.find("end of trees")), "model.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no 'end of trees'")));
  EXPECT_THAT(
      LoadLightGbmText(
          absl::StrReplaceAll(testing::kLightGbmThreeTrees,
                              {{"leaf_value=0.25 -0.125 0.5", "leaf_value=0.25 -0.125"}}),
          "model.txt"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("model.txt:21: LightGBM model: 'leaf_value' has 2 values, expected 3")));
  EXPECT_THAT(
      LoadLightGbmText(
          absl::StrReplaceAll(testing::kLightGbmThreeTrees,
                              {{"objective=binary sigmoid:2", "objective=lambdarank"}}),
          "model.txt"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unsupported: LightGBM objective")));
}

}  // namespace
}  // namespace vigil
