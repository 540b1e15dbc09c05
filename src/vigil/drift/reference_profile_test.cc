#include "vigil/drift/reference_profile.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
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

// tools/train.py's dispersion (window length in seconds → factor) and the model score's entry.
constexpr char kWithDispersion[] = R"({"feature_schema_version": "v", "rows": 10,
  "features": {
    "amount": {"count": 10, "missing": 0, "bin_edges": [0, 5, 10], "bin_counts": [5, 5],
               "mean": 5, "std": 2.9, "sample": [1, 9],
               "dispersion": {"3600": 4.0, "60": 1.5, "600": 2.0}}},
  "score": {"count": 10, "missing": 0, "bin_edges": [0, 0.5, 1], "bin_counts": [9, 1],
            "mean": 0.1, "std": 0.2, "sample": [0.01, 0.9]}})";

TEST(ReferenceProfile, DispersionIsInterpolatedInLogLengthAndHeldBeyondItsEnds) {
  ASSERT_OK_AND_ASSIGN(ReferenceProfile p, ReferenceProfile::Parse(kWithDispersion, "r.json"));
  const FeatureReference& amount = *p.Find("amount");
  ASSERT_EQ(amount.dispersion.size(), 3u);
  EXPECT_EQ(amount.dispersion.front(), std::make_pair(60.0, 1.5));  // sorted by length
  EXPECT_DOUBLE_EQ(amount.DispersionAt(60), 1.5);
  EXPECT_DOUBLE_EQ(amount.DispersionAt(600), 2.0);
  EXPECT_DOUBLE_EQ(amount.DispersionAt(10), 1.5);      // shorter than measured: the shortest's
  EXPECT_DOUBLE_EQ(amount.DispersionAt(86400), 4.0);   // longer: the longest's
  // Halfway between 600 s and 3600 s in log length: the geometric mean of 2 and 4.
  EXPECT_NEAR(amount.DispersionAt(std::sqrt(600.0 * 3600.0)), std::sqrt(8.0), 1e-12);
  EXPECT_DOUBLE_EQ(FeatureReference{}.DispersionAt(300), 1.0);  // not measured
  ASSERT_TRUE(p.score().has_value());
  EXPECT_EQ(p.score()->bins->Bin(0.7), 1u);
  EXPECT_TRUE(p.score()->dispersion.empty());
}

TEST(ReferenceProfile, BadDispersionNamesTheEntry) {
  const auto with = [](const std::string& dispersion) {
    return absl::StrCat(R"({"feature_schema_version":"v","rows":1,"features":{"a":
        {"count":1,"missing":1,"dispersion":)", dispersion, "}}}");
  };
  EXPECT_THAT(ReferenceProfile::Parse(with("[1]"), "r.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("features.a.dispersion: not an object")));
  EXPECT_THAT(ReferenceProfile::Parse(with(R"({"a minute": 2})"), "r.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key 'a minute' is not a window length in seconds")));
  EXPECT_THAT(ReferenceProfile::Parse(with(R"({"60": 0.5})"), "r.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("features.a.dispersion.60: not a number >= 1")));
  EXPECT_OK(ReferenceProfile::Parse(with(R"({"60": 1})"), "r.json"));
}

}  // namespace
}  // namespace vigil::drift
