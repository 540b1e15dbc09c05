#include "vigil/model/tree_ensemble.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(BindFeatures, MapsModelFeaturesToSchemaColumns) {
  auto m = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(m);
  auto schema = FeatureSchema::Create("s.v1", {"z", "b", "a"});
  ASSERT_OK(schema);
  auto columns = BindFeatures(*m, **schema);
  ASSERT_OK(columns);
  EXPECT_THAT(*columns, ::testing::ElementsAre(2u, 1u));
}

TEST(BindFeatures, MismatchListsMissingAndUnusedFeatures) {
  auto m = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(m);
  auto schema = FeatureSchema::Create("s.v2", {"a", "c", "d"});
  ASSERT_OK(schema);
  EXPECT_THAT(
      BindFeatures(*m, **schema),
      StatusIs(
          absl::StatusCode::kFailedPrecondition,
          HasSubstr("model features missing from feature schema s.v2 (1): b; feature schema s.v2 "
                    "features the model does not use: c, d")));
}

TEST(TreeEnsembleValidate, RejectsBrokenStructure) {
  auto m = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  ASSERT_OK(m);
  TreeEnsemble bad = *m;
  bad.left[2] = 0;  // back to the root: a cycle
  EXPECT_THAT(bad.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reached twice")));
  bad = *m;
  bad.right[0] = 5;  // into tree 1
  EXPECT_THAT(bad.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside the tree")));
  bad = *m;
  bad.tree_group[1] = 1;
  EXPECT_THAT(bad.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("output group 1")));
  bad = *m;
  bad.value[1] = std::nan("");
  EXPECT_THAT(bad.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("non-finite")));
}

}  // namespace
}  // namespace vigil
