#include "vigil/features/account_state.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::StatusIs;

constexpr int64_t kHour = kMicrosPerHour;
constexpr ApplyOptions kLateness{600 * kMicrosPerSecond, 32};
constexpr int64_t kT0 = 1'661'990'400'000'000;  // 2022-09-01Z

AccountEvent Out(int64_t t, int64_t micros, uint32_t cp) {
  return AccountEvent{kT0 + t, micros, cp, Direction::kOut, false};
}
AccountEvent In(int64_t t, int64_t micros, uint32_t cp) {
  return AccountEvent{kT0 + t, micros, cp, Direction::kIn, true};
}

TEST(AccountState, DropsHistoryBeyondSevenDaysButRemembersLastActivity) {
  AccountState s;
  AccountSnapshot snap;
  for (int i = 0; i < 100; ++i) s.Apply(Out(i * kHour, 1, 7), kLateness, &snap);
  EXPECT_EQ(snap.windows[2].out_count, 100);
  s.Apply(In(1000 * kHour, 5, 8), kLateness, &snap);  // 30 days later
  EXPECT_EQ(snap.windows[2].out_count, 0);
  EXPECT_EQ(snap.windows[2].in_count, 1);
  EXPECT_EQ(snap.distinct_counterparties_7d, 1);
  EXPECT_EQ(snap.previous_activity_us, kT0 + 99 * kHour);
  EXPECT_EQ(s.num_events(), 1u);  // the 100 old events are gone
}

TEST(AccountState, AmountStatsFollowTheEwmaRecurrence) {
  AccountState s;
  EXPECT_TRUE(std::isnan(s.UpdateAmountStats(100, 0.5)));  // no history
  EXPECT_TRUE(std::isnan(s.UpdateAmountStats(200, 0.5)));  // one earlier amount only
  // After 100 then 200 with alpha 0.5: mean = 150, var = 0.5 * (0 + 100 * 50) = 2500, sd = 50.
  EXPECT_DOUBLE_EQ(s.ewma_mean(), 150);
  EXPECT_DOUBLE_EQ(s.ewma_std(), 50);
  EXPECT_DOUBLE_EQ(s.UpdateAmountStats(250, 0.5), 2.0);  // (250 - 150) / 50
}

TEST(AccountState, EncodingRoundTripsAndRebuildsTotals) {
  AccountState s;
  AccountSnapshot before;
  for (int i = 0; i < 50; ++i) {
    s.Apply(i % 3 == 0 ? In(i * kHour / 2, 10 + i, i % 5) : Out(i * kHour / 2, 7 * i, i % 4),
            kLateness, &before);
  }
  s.UpdateAmountStats(12.5, 0.1);
  std::string bytes;
  s.EncodeTo(&bytes);
  ASSERT_OK_AND_ASSIGN(AccountState restored, AccountState::Decode(bytes));
  EXPECT_EQ(restored.frontier(), s.frontier());
  EXPECT_DOUBLE_EQ(restored.ewma_mean(), s.ewma_mean());
  AccountSnapshot a, b;
  s.Apply(Out(26 * kHour, 3, 2), kLateness, &a);
  restored.Apply(Out(26 * kHour, 3, 2), kLateness, &b);
  for (int w = 0; w < kNumWindows; ++w) {
    EXPECT_EQ(a.windows[w].in_count, b.windows[w].in_count);
    EXPECT_EQ(a.windows[w].out_sum_cents, b.windows[w].out_sum_cents);
    EXPECT_EQ(a.windows[w].near_threshold_count, b.windows[w].near_threshold_count);
  }
  EXPECT_EQ(a.fan_out_7d, b.fan_out_7d);
  EXPECT_EQ(a.distinct_counterparties_24h, b.distinct_counterparties_24h);
}

TEST(AccountState, EncodingKeepsTheAccountRiskAndReadsVersion3WithoutIt) {
  AccountState s;
  AccountSnapshot snap;
  s.Apply(Out(kHour, 1, 1), kLateness, &snap);
  AccountAlertThresholds t;
  t.rule_hits = 1;
  const int64_t bucket = 5 * 24 * kHour;
  ASSERT_TRUE(s.mutable_risk().Record(kHour, bucket, 0.25, true, 42, t).alert);
  std::string bytes;
  s.EncodeTo(&bytes);
  ASSERT_OK_AND_ASSIGN(AccountState restored, AccountState::Decode(bytes));
  EXPECT_EQ(restored.risk(), s.risk());
  // The restored risk remembers the alert: the same payment again is answered alike, another
  // one within the window raises none.
  EXPECT_TRUE(restored.mutable_risk().Record(kHour, bucket, 0.25, true, 42, t).alert);
  EXPECT_FALSE(restored.mutable_risk().Record(2 * kHour, bucket, 0.25, true, 43, t).alert);

  // Version 3 wrote no risk after the long memory.
  std::string v3 = bytes.substr(0, bytes.size() - 36);
  v3[0] = 3;
  ASSERT_OK_AND_ASSIGN(AccountState old, AccountState::Decode(v3));
  EXPECT_TRUE(old.risk().empty());
  EXPECT_EQ(old.num_events(), 1u);
  // Trailing bytes are refused.
  EXPECT_THAT(AccountState::Decode(bytes + "x"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(AccountState, DecodeRejectsDamagedBytes) {
  AccountState s;
  AccountSnapshot snap;
  s.Apply(Out(kHour, 1, 1), kLateness, &snap);
  std::string bytes;
  s.EncodeTo(&bytes);
  EXPECT_THAT(AccountState::Decode(bytes.substr(0, bytes.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss));
  std::string wrong_version = bytes;
  wrong_version[0] = 9;
  EXPECT_THAT(AccountState::Decode(wrong_version), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(AccountState::Decode(""), StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(AccountState, BuildsAndDropsTheCounterpartyIndexWithActivity) {
  AccountState s;
  AccountSnapshot snap;
  for (int i = 0; i < 30; ++i) s.Apply(Out(i * kHour, 1, i % 7), kLateness, &snap);
  EXPECT_TRUE(s.indexed());  // 30 events in the 7-day window > kIndexAbove
  EXPECT_EQ(snap.fan_out_7d, 7);
  // Eight days on the window holds one event again: the index goes away, answers stay right.
  s.Apply(In(30 * kHour + 8 * 24 * kHour, 1, 3), kLateness, &snap);
  EXPECT_FALSE(s.indexed());
  EXPECT_EQ(snap.fan_out_7d, 0);
  EXPECT_EQ(snap.fan_in_7d, 1);
}

}  // namespace
}  // namespace vigil
