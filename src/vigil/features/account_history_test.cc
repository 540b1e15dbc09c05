#include "vigil/features/account_history.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "vigil/features/account_state.h"

namespace vigil {
namespace {

constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z
constexpr int64_t kDay = kMicrosPerDay;

TEST(AccountHistory, AmountsGiveMedianQuantileAndLastIncoming) {
  AccountHistory h;
  EXPECT_TRUE(std::isnan(h.Median(true)));
  EXPECT_TRUE(std::isnan(h.Quantile(false, 5)));
  EXPECT_TRUE(std::isnan(h.last_in_amount()));
  for (int i = 1; i <= 10; ++i) h.Observe(7, /*out=*/true, kBase + i, 100.0 * i, 32);
  // The ring keeps the last 8 outgoing amounts: 300..1000.
  EXPECT_DOUBLE_EQ(h.Median(true), 650);
  EXPECT_DOUBLE_EQ(h.Quantile(true, 300), 0.5 / 8);   // equal to the smallest
  EXPECT_DOUBLE_EQ(h.Quantile(true, 2000), 1.0);
  EXPECT_DOUBLE_EQ(h.Quantile(true, 1), 0.0);
  EXPECT_TRUE(std::isnan(h.Median(false)));
  h.Observe(8, /*out=*/false, kBase + 20 * kMicrosPerSecond, 42.5, 32);
  h.Observe(9, /*out=*/false, kBase + 30 * kMicrosPerSecond, 17, 32);
  EXPECT_DOUBLE_EQ(h.last_in_amount(), 17);
  EXPECT_DOUBLE_EQ(h.Median(false), (42.5 + 17) / 2);
  EXPECT_EQ(h.last_in_seconds(), HistorySeconds(kBase + 30 * kMicrosPerSecond));
}

TEST(AccountHistory, PairsCountBothDirectionsAndDegreesUseTheirWindow) {
  AccountHistory h;
  h.Observe(1, true, kBase, 10, 32);
  h.Observe(1, true, kBase + kDay, 10, 32);
  h.Observe(1, false, kBase + 2 * kDay, 10, 32);
  h.Observe(2, true, kBase + 40 * kDay, 10, 32);
  const int64_t t = kBase + 50 * kDay;
  const PairSummary* p = h.Find(1, t);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->out_count, 2);
  EXPECT_EQ(p->in_count, 1);
  EXPECT_EQ(p->first_out, HistorySeconds(kBase));
  EXPECT_EQ(p->last_out, HistorySeconds(kBase + kDay));
  EXPECT_EQ(h.Find(3, t), nullptr);
  const AccountHistory::Degrees d = h.DegreesAt(t);
  EXPECT_EQ(d.out_30d, 1);  // only 2 within 30 days
  EXPECT_EQ(d.out_90d, 2);
  EXPECT_EQ(d.in_30d, 0);
  EXPECT_EQ(d.in_90d, 1);
  // Ninety days after its last activity a pair is forgotten, by queries and by the next update.
  EXPECT_EQ(h.Find(1, kBase + 92 * kDay), nullptr);
  EXPECT_NE(h.Find(1, kBase + 92 * kDay - kMicrosPerSecond), nullptr);
  h.Observe(1, true, kBase + 93 * kDay, 10, 32);
  p = h.Find(1, kBase + 93 * kDay);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->out_count, 1) << "the pair starts again";
  EXPECT_EQ(p->in_count, 0);
  EXPECT_EQ(h.pairs().size(), 2u);
}

// A late query (t before the newest payment observed) counts a pair only for a payment known to
// lie in its window: the first or the last, not one assumed between them.
TEST(AccountHistory, ALateQueryCountsOnlyPaymentsKnownInItsWindow) {
  AccountHistory h;
  h.Observe(1, true, kBase, 10, 32);                // day 0
  h.Observe(1, true, kBase + 40 * kDay, 10, 32);    // day 40
  h.Observe(2, true, kBase + 35 * kDay, 10, 32);    // day 35
  h.Observe(2, true, kBase + 41 * kDay, 10, 32);    // day 41
  // At day 39, the 30-day window is (day 9, day 39]: pair 1's known payments (days 0 and 40)
  // are both outside; pair 2's first (day 35) is inside.
  const AccountHistory::Degrees d = h.DegreesAt(kBase + 39 * kDay);
  EXPECT_EQ(d.out_30d, 1);
  EXPECT_EQ(d.out_90d, 2);  // day 0 is within 90 days
}

TEST(AccountHistory, AFullHistoryForgetsTheLeastRecentlyActive) {
  AccountHistory h;
  for (uint32_t c = 0; c < 4; ++c) h.Observe(c, true, kBase + c * kDay, 1, 4);
  h.Observe(0, false, kBase + 5 * kDay, 1, 4);  // 0 is now the most recent
  h.Observe(9, true, kBase + 6 * kDay, 1, 4);   // full: 1 (day 1) is forgotten
  const int64_t t = kBase + 7 * kDay;
  EXPECT_EQ(h.pairs().size(), 4u);
  EXPECT_NE(h.Find(0, t), nullptr);
  EXPECT_EQ(h.Find(1, t), nullptr);
  EXPECT_NE(h.Find(2, t), nullptr);
  EXPECT_NE(h.Find(9, t), nullptr);
  EXPECT_EQ(h.DegreesAt(t).out_30d, 4) << "saturates at the bound";
}

TEST(AccountHistory, EncodingRoundTripsAndRejectsDamage) {
  AccountHistory h;
  for (uint32_t c = 0; c < 5; ++c) {
    h.Observe(c, c % 2 == 0, kBase + c * kDay, 10.0 + c, 32);
  }
  std::string bytes;
  h.EncodeTo(&bytes);
  AccountHistory back;
  std::string_view in = bytes;
  ASSERT_TRUE(back.DecodeFrom(&in));
  EXPECT_TRUE(in.empty());
  const int64_t t = kBase + 10 * kDay;
  EXPECT_EQ(back.pairs().size(), 5u);
  EXPECT_DOUBLE_EQ(back.Median(true), h.Median(true));
  EXPECT_DOUBLE_EQ(back.last_in_amount(), h.last_in_amount());
  EXPECT_EQ(back.DegreesAt(t).in_30d, h.DegreesAt(t).in_30d);
  EXPECT_EQ(back.DegreesAt(t).out_90d, h.DegreesAt(t).out_90d);
  EXPECT_EQ(back.newest(), h.newest());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{10}, bytes.size() - 1}) {
    AccountHistory damaged;
    std::string_view short_in(bytes.data(), cut);
    EXPECT_FALSE(damaged.DecodeFrom(&short_in)) << cut;
  }
  std::string bad_version = bytes;
  bad_version[0] = 9;
  std::string_view bv = bad_version;
  EXPECT_FALSE(AccountHistory().DecodeFrom(&bv));
}

TEST(AccountHistory, TravelsWithTheAccountStateEncoding) {
  AccountState s;
  AccountSnapshot snap;
  s.Apply(AccountEvent{kBase, 100, 3, Direction::kOut, false}, ApplyOptions{}, &snap);
  s.mutable_history().Observe(3, true, kBase, 1.0, 32);
  std::string bytes;
  s.EncodeTo(&bytes);
  auto back = AccountState::Decode(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_NE(back->history().Find(3, kBase), nullptr);
  EXPECT_EQ(back->history().Find(3, kBase)->out_count, 1);
  bytes.pop_back();
  EXPECT_FALSE(AccountState::Decode(bytes).ok());
}

}  // namespace
}  // namespace vigil
