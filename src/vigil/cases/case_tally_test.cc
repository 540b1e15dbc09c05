#include "vigil/cases/case_tally.h"

#include <chrono>
#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace vigil::cases {
namespace {

// 2026-12-01T00:00:00Z
const UtcTime kDay0 = FromUnixMicros(1'796'083'200'000'000);

Case MakeCase(int n, std::vector<std::string> reasons, std::chrono::hours opened_after) {
  Case c;
  c.id = "case-" + std::to_string(n);
  c.subject = "ACC-" + std::to_string(n);
  c.opened = kDay0 + opened_after;
  c.updated = c.opened;
  c.alerts = 1;
  c.reasons = std::move(reasons);
  return c;
}

void CloseCase(Case& c, CaseOutcome outcome, std::chrono::hours after) {
  c.state = CaseState::kClosed;
  c.outcome = outcome;
  c.closed_at = c.opened + after;
}

TEST(CaseTallyTest, CountsPerDayOutcomesTimeToCloseAndFalsePositivesPerReason) {
  const CasePolicy policy;  // SLA 5 days
  CaseTally tally(kDay0 + std::chrono::hours(24 * 10), policy);
  Case a = MakeCase(1, {"velocity", "OFAC:7"}, std::chrono::hours(1));
  CloseCase(a, CaseOutcome::kFalsePositive, std::chrono::hours(2));  // closed day 0
  Case b = MakeCase(2, {"velocity"}, std::chrono::hours(3));
  CloseCase(b, CaseOutcome::kSuspiciousReported, std::chrono::hours(30));  // closed day 1
  Case c = MakeCase(3, {"velocity", "structuring"}, std::chrono::hours(26));
  c.state = CaseState::kInReview;  // unclosed, opened day 1, overdue at day 10
  Case d = MakeCase(4, {"structuring"}, std::chrono::hours(24 * 9 + 1));
  CloseCase(d, CaseOutcome::kFalsePositive, std::chrono::hours(10));  // closed day 9
  for (const Case* x : {&a, &b, &c, &d}) tally.Add(*x);
  const CaseTallyReport r = std::move(tally).Finish();

  EXPECT_EQ(r.cases, 4u);
  EXPECT_EQ(r.overdue, 1u);
  EXPECT_EQ(r.states[static_cast<size_t>(CaseState::kClosed)], 3u);
  EXPECT_EQ(r.states[static_cast<size_t>(CaseState::kInReview)], 1u);
  EXPECT_EQ(r.outcomes[0], 1u);
  EXPECT_EQ(r.outcomes[static_cast<size_t>(CaseOutcome::kFalsePositive)], 2u);
  EXPECT_EQ(r.outcomes[static_cast<size_t>(CaseOutcome::kSuspiciousReported)], 1u);
  // Close times 2, 10, 30 hours: median 10, p90 (rank 3) 30.
  EXPECT_DOUBLE_EQ(r.close_hours_median, 10);
  EXPECT_DOUBLE_EQ(r.close_hours_p90, 30);

  ASSERT_EQ(r.days.size(), 3u);
  EXPECT_EQ(r.days[0].day, "2026-12-01");
  EXPECT_EQ(r.days[0].opened, 2u);
  EXPECT_EQ(r.days[0].closed, 1u);
  EXPECT_EQ(r.days[0].opened_by_reason.at("velocity"), 2u);
  EXPECT_EQ(r.days[0].opened_by_reason.at("OFAC:7"), 1u);
  EXPECT_EQ(r.days[0].opened_by_reason.count("structuring"), 0u);
  EXPECT_EQ(r.days[1].day, "2026-12-02");
  EXPECT_EQ(r.days[1].opened, 1u);
  EXPECT_EQ(r.days[1].closed, 1u);
  EXPECT_EQ(r.days[2].day, "2026-12-10");
  EXPECT_EQ(r.days[2].opened, 1u);
  EXPECT_EQ(r.days[2].closed, 1u);

  ASSERT_EQ(r.reasons.size(), 3u);
  EXPECT_EQ(r.reasons[0].reason, "velocity");  // 3 cases
  EXPECT_EQ(r.reasons[0].cases, 3u);
  // velocity: closed a (false positive) and b (suspicious): 1 of 2.
  EXPECT_DOUBLE_EQ(r.reasons[0].false_positive_rate(), 0.5);
  EXPECT_EQ(r.reasons[1].reason, "structuring");
  EXPECT_EQ(r.reasons[1].cases, 2u);
  EXPECT_DOUBLE_EQ(r.reasons[1].false_positive_rate(), 1.0);  // c unclosed, d false positive
  EXPECT_EQ(r.reasons[2].reason, "OFAC:7");
  EXPECT_EQ(r.reasons[2].cases, 1u);
  EXPECT_EQ(r.reasons[2].outcomes[static_cast<size_t>(CaseOutcome::kFalsePositive)], 1u);
}

TEST(CaseTallyTest, CasesFallInTheBandOfTheirHighestScore) {
  CaseTally tally(kDay0, CasePolicy{});
  Case high = MakeCase(1, {"velocity"}, std::chrono::hours(0));
  high.max_score = 0.97;
  CloseCase(high, CaseOutcome::kFalsePositive, std::chrono::hours(1));
  Case top = MakeCase(2, {"velocity"}, std::chrono::hours(0));
  top.max_score = 1.0;  // the last band is closed above
  CloseCase(top, CaseOutcome::kSuspiciousReported, std::chrono::hours(1));
  Case low = MakeCase(3, {"velocity"}, std::chrono::hours(0));
  low.max_score = 0.05;
  Case rules = MakeCase(4, {"velocity"}, std::chrono::hours(0));  // max_score NaN
  for (const Case* c : {&high, &top, &low, &rules}) tally.Add(*c);
  const CaseTallyReport r = std::move(tally).Finish();
  EXPECT_EQ(r.bands[9].band, "0.9-1.0");
  EXPECT_EQ(r.bands[9].cases, 2u);
  EXPECT_DOUBLE_EQ(r.bands[9].false_positive_rate(), 0.5);
  EXPECT_EQ(r.bands[0].band, "0.0-0.1");
  EXPECT_EQ(r.bands[0].cases, 1u);
  EXPECT_TRUE(std::isnan(r.bands[0].false_positive_rate()));
  EXPECT_EQ(r.bands[10].band, "rules_only");
  EXPECT_EQ(r.bands[10].cases, 1u);
  EXPECT_EQ(r.bands[5].cases, 0u);
}

TEST(CaseTallyTest, NothingClosedHasNoRatesOrCloseTimes) {
  CaseTally tally(kDay0, CasePolicy{});
  tally.Add(MakeCase(1, {"velocity"}, std::chrono::hours(0)));
  const CaseTallyReport r = std::move(tally).Finish();
  EXPECT_TRUE(std::isnan(r.close_hours_median));
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_TRUE(std::isnan(r.reasons[0].false_positive_rate()));
}

}  // namespace
}  // namespace vigil::cases
