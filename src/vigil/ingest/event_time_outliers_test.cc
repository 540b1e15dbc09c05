#include "vigil/ingest/event_time_outliers.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

constexpr int64_t kHour = int64_t{3600} * 1'000'000;
constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01
constexpr int64_t k2099 = 4'070'908'800'000'000;

// The lines judged outliers, every record coming out once and in order.
std::vector<int64_t> Outliers(const std::vector<int64_t>& times, EventTimeOutliers::Options o) {
  EventTimeOutliers filter(o);
  std::vector<int64_t> out;
  int64_t expected_line = 0;
  EventTimeOutliers::Record r;
  EventTimeOutliers::Verdict v;
  auto drain = [&] {
    while (filter.Pop(&r, &v)) {
      EXPECT_EQ(r.line, expected_line);
      EXPECT_EQ(r.raw, absl::StrCat("record ", r.line));
      ++expected_line;
      if (v.outlier) out.push_back(r.line);
    }
  };
  for (size_t i = 0; i < times.size(); ++i) {
    filter.Add(times[i], static_cast<int64_t>(i), absl::StrCat("record ", i));
    drain();
  }
  filter.Finish();
  drain();
  EXPECT_EQ(expected_line, static_cast<int64_t>(times.size()));
  return out;
}

std::vector<int64_t> Hourly(int n) {
  std::vector<int64_t> t;
  for (int i = 0; i < n; ++i) t.push_back(kBase + i * kHour);
  return t;
}

TEST(EventTimeOutliers, OneRecordDatedFarAheadIsAnOutlier) {
  std::vector<int64_t> t = Hourly(40);
  t[20] = k2099;
  EXPECT_EQ(Outliers(t, {}), (std::vector<int64_t>{20}));
}

TEST(EventTimeOutliers, AFewTogetherAreOutliersToo) {
  std::vector<int64_t> t = Hourly(40);
  t[10] = t[11] = t[12] = k2099;  // fewer than half of the eight neighbours on each side
  EXPECT_EQ(Outliers(t, {}), (std::vector<int64_t>{10, 11, 12}));
}

TEST(EventTimeOutliers, AtTheFileEdgesOneSideDecides) {
  std::vector<int64_t> t = Hourly(20);
  t[0] = k2099;
  t[19] = k2099;
  EXPECT_EQ(Outliers(t, {}), (std::vector<int64_t>{0, 19}));
}

// Two periods concatenated: the records after the jump are near those that follow them.
TEST(EventTimeOutliers, AJumpForGoodIsNotAnOutlier) {
  std::vector<int64_t> t = Hourly(40);
  for (size_t i = 20; i < t.size(); ++i) t[i] += 24 * 365 * kHour;
  EXPECT_TRUE(Outliers(t, {}).empty());
}

// A roughly ordered export (records up to days out of place) has no outliers.
TEST(EventTimeOutliers, UnorderedWithinTheBoundIsNotAnOutlier) {
  std::vector<int64_t> t = Hourly(60);
  for (size_t i = 0; i < t.size(); i += 7) t[i] += 24 * 20 * kHour;  // 20 days late
  EXPECT_TRUE(Outliers(t, {}).empty());
  EXPECT_FALSE(Outliers(t, {.max_lead = std::chrono::hours(24 * 10)}).empty());
}

TEST(EventTimeOutliers, ZeroLeadOnlyDelays) {
  std::vector<int64_t> t = Hourly(30);
  t[15] = k2099;
  EXPECT_TRUE(Outliers(t, {.max_lead = std::chrono::microseconds(0)}).empty());
}

// Fewer than four records on a side: no verdict (a short file says nothing of "around").
TEST(EventTimeOutliers, ShortFilesGiveNoVerdict) {
  EXPECT_TRUE(Outliers({}, {}).empty());
  EXPECT_TRUE(Outliers({k2099}, {}).empty());
  EXPECT_TRUE(Outliers({kBase, k2099, kBase + kHour}, {}).empty());
  std::vector<int64_t> t = Hourly(9);
  t[4] = k2099;  // four on each side
  EXPECT_EQ(Outliers(t, {}), (std::vector<int64_t>{4}));
}

// A collection of messages from several years: no side is close together, no verdict.
TEST(EventTimeOutliers, ScatteredFilesGiveNoVerdict) {
  std::vector<int64_t> t;
  for (int i = 0; i < 30; ++i) t.push_back(kBase + (i * 7919 % 30) * 24 * 90 * kHour);
  EXPECT_TRUE(Outliers(t, {}).empty());
}

TEST(EventTimeOutliers, KeepsKRecordsBack) {
  EventTimeOutliers filter({.neighbours = 3});
  EventTimeOutliers::Record r;
  EventTimeOutliers::Verdict v;
  for (int i = 0; i < 3; ++i) {
    filter.Add(kBase + i, i, "x");
    EXPECT_FALSE(filter.Pop(&r, &v));  // its three followers are not there yet
  }
  filter.Add(kBase + 3, 3, "x");
  ASSERT_TRUE(filter.Pop(&r, &v));
  EXPECT_EQ(r.line, 0);
  EXPECT_FALSE(v.has_before);
  EXPECT_TRUE(v.has_after);
  EXPECT_EQ(v.after_median_us, kBase + 2);
}

}  // namespace
}  // namespace vigil
