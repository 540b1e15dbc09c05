#include "vigil/drift/measured_null.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(MeasuredNull, CompressKeepsTheExtremesAndEvenlySpacedOrderStatistics) {
  std::vector<double> scores;
  for (int i = 0; i < 10'000; ++i) scores.push_back(10'000 - i);
  const std::vector<double> kept = MeasuredNull::Compress(scores);
  ASSERT_EQ(kept.size(), MeasuredNull::kMaxScores);
  EXPECT_EQ(kept.front(), 1);
  EXPECT_EQ(kept.back(), 10'000);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_NEAR(kept[1000], 5003, 3);
  EXPECT_EQ(MeasuredNull::Compress({3, 1, 2}), (std::vector<double>{1, 2, 3}));
}

TEST(MeasuredNull, JsonRoundTrip) {
  MeasuredNull n;
  n.feature_schema_version = "vigil.features.v1";
  n.weights = {0.5, 0.25, 0.25};
  n.pseudo_count = 0.5;
  MeasuredNull::Window w;
  w.spec = {"short", std::chrono::seconds(60), std::chrono::seconds(10), std::chrono::seconds(0)};
  w.evaluations = 3;
  w.scores["amount"] = {0.01, 0.02, 0.5};
  n.windows.push_back(w);
  ASSERT_OK_AND_ASSIGN(MeasuredNull back, MeasuredNull::Parse(n.ToJson(), "null.json"));
  EXPECT_EQ(back.feature_schema_version, "vigil.features.v1");
  EXPECT_EQ(back.weights.kl, 0.5);
  ASSERT_EQ(back.windows.size(), 1u);
  EXPECT_EQ(back.windows[0].spec.name, "short");
  EXPECT_EQ(back.windows[0].spec.size, std::chrono::seconds(60));
  EXPECT_EQ(back.windows[0].spec.slide, std::chrono::seconds(10));
  EXPECT_EQ(back.windows[0].evaluations, 3u);
  EXPECT_THAT(back.windows[0].scores["amount"], ::testing::ElementsAre(0.01, 0.02, 0.5));
}

TEST(MeasuredNull, ErrorsNameTheMember) {
  EXPECT_THAT(MeasuredNull::Parse("[]", "f"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(MeasuredNull::Parse(R"({"format":"other"})", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format")));
  const std::string head =
      R"({"format":"vigil.drift-null.v1","feature_schema_version":"v","weights":{"kl":0.4,"js":0.35,"psi":0.25},"pseudo_count":0.5,)";
  EXPECT_THAT(MeasuredNull::Parse(head + R"("windows":[{"name":"short","size_s":60,"slide_s":10,"half_life_s":0,"evaluations":1,"subjects":{"a":[-1]}}]})", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("windows[0].subjects.a")));
  EXPECT_THAT(MeasuredNull::Parse(head + R"("windows":[{"name":"short","slide_s":10,"half_life_s":0,"evaluations":1,"subjects":{}}]})", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("windows[0].size_s")));
  EXPECT_THAT(MeasuredNull::Load("/nonexistent/null.json"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace vigil::drift
