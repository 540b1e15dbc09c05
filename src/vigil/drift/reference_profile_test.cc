#include "vigil/drift/reference_profile.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

constexpr char kProfile[] = R"({"feature_schema_version": "vigil.features.v1", "rows": 10,
  "features": {
    "amount": {"count": 10, "missing": 1, "bin_edges": [0, 5, 10], "bin_counts": [4, 5],
               "mean": 4.5, "std": 2.9, "sample": [9, 0, 5, 2]},
    "flag": {"count": 10, "missing": 0, "bin_edges": [1, 1], "bin_counts": [10],
             "mean": 1, "std": 0, "sample": [1, 1]},
    "empty": {"count": 10, "missing": 10}}})";

TEST(ReferenceProfile, ReadsWhatTrainPyWrites) {
  ASSERT_OK_AND_ASSIGN(ReferenceProfile p, ReferenceProfile::Parse(kProfile, "ref.json"));
  EXPECT_EQ(p.feature_schema_version(), "vigil.features.v1");
  EXPECT_EQ(p.rows(), 10u);
  ASSERT_EQ(p.features().size(), 3u);
  const FeatureReference* amount = p.Find("amount");
  ASSERT_NE(amount, nullptr);
  EXPECT_EQ(amount->missing, 1u);
  ASSERT_TRUE(amount->bins.has_value());
  EXPECT_EQ(amount->bins->Bin(7), 1u);
  ASSERT_TRUE(amount->sample.has_value());
  EXPECT_THAT(amount->sample->sorted(), ::testing::ElementsAre(0, 2, 5, 9));
  const FeatureReference* flag = p.Find("flag");
  ASSERT_TRUE(flag != nullptr && flag->bins.has_value());  // a constant feature: one bin
  EXPECT_EQ(flag->bins->Bin(3), 0u);
  EXPECT_FALSE(p.Find("empty")->bins.has_value());
  EXPECT_EQ(p.Find("nope"), nullptr);
}

TEST(ReferenceProfile, ProblemsNameTheFeatureAndMember) {
  EXPECT_THAT(ReferenceProfile::Parse("[]", "r.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("r.json: $: not a JSON")));
  EXPECT_THAT(
      ReferenceProfile::Parse(R"({"feature_schema_version":"v","rows":1,"features":{"a":
          {"count":1,"missing":0,"bin_edges":[0,1],"bin_counts":[1],"mean":0,"std":0,
           "sample":["x"]}}})",
                              "r.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("features.a.sample: holds a non-number")));
  EXPECT_THAT(
      ReferenceProfile::Parse(R"({"feature_schema_version":"v","rows":1,"features":{"a":
          {"count":1,"missing":0,"bin_edges":[2,1],"bin_counts":[1],"mean":0,"std":0,
           "sample":[1]}}})",
                              "r.json"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("features.a: bins: edge 1")));
  EXPECT_THAT(ReferenceProfile::Parse(R"({"feature_schema_version":"v","rows":1,"features":{"a":
          {"count":1,"missing":3}}})",
                                      "r.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more missing values")));
  EXPECT_THAT(ReferenceProfile::Load("/nonexistent/ref.json"),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace vigil::drift
