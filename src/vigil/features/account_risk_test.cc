#include "vigil/features/account_risk.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace vigil {
namespace {

constexpr int64_t kDay = 86'400'000'000;
constexpr int64_t kBucket = 5 * kDay;  // a 30-day window
constexpr int64_t kT0 = 1'700'000'000'000'000 / kBucket * kBucket;  // a bucket boundary

AccountAlertThresholds ScoreAt(double s) {
  AccountAlertThresholds t;
  t.score = s;
  return t;
}

AccountAlertThresholds HitsAt(uint32_t n) {
  AccountAlertThresholds t;
  t.rule_hits = n;
  return t;
}

TEST(AccountRiskTest, ScoreIsTheHighestInTheWindow) {
  AccountRisk r;
  EXPECT_TRUE(r.empty());
  const AccountAlertThresholds off;
  AccountStanding s = r.Record(kT0, kBucket, 0.2, false, 1, off);
  EXPECT_NEAR(s.score, 0.2, 1.0 / 65534);
  EXPECT_GE(s.score, 0.2);  // rounded up, never down
  s = r.Record(kT0 + kDay, kBucket, 0.7, false, 2, off);
  EXPECT_NEAR(s.score, 0.7, 1e-4);
  s = r.Record(kT0 + 2 * kDay, kBucket, 0.1, false, 3, off);
  EXPECT_NEAR(s.score, 0.7, 1e-4);  // a lower score does not lower the account's
  EXPECT_FALSE(s.alert);
  // The 0.7 (bucket 0) counts through bucket 5 and has left the window in bucket 6.
  EXPECT_NEAR(r.At(kT0 + 5 * kBucket, kBucket).score, 0.7, 1e-4);
  EXPECT_TRUE(std::isnan(r.At(kT0 + 6 * kBucket, kBucket).score));
  s = r.Record(kT0 + 6 * kBucket, kBucket, 0.05, false, 4, off);
  EXPECT_NEAR(s.score, 0.05, 1e-4);
}

TEST(AccountRiskTest, UnscoredPaymentsLeaveNoScore) {
  AccountRisk r;
  const AccountStanding s = r.Record(kT0, kBucket, std::nan(""), true, 1, {});
  EXPECT_TRUE(std::isnan(s.score));
  EXPECT_EQ(s.rule_hits, 1u);
}

TEST(AccountRiskTest, RuleHitsCountWithinTheWindow) {
  AccountRisk r;
  for (int i = 0; i < 4; ++i) r.Record(kT0 + i * kDay, kBucket, 0.0, i % 2 == 0, 10 + i, {});
  EXPECT_EQ(r.At(kT0 + 4 * kDay, kBucket).rule_hits, 2u);
  // Bucket 0's hits (days 0-4) are gone six buckets on; one more in bucket 1 stays.
  r.Record(kT0 + kBucket, kBucket, 0.0, true, 20, {});
  EXPECT_EQ(r.At(kT0 + 6 * kBucket, kBucket).rule_hits, 1u);
  EXPECT_EQ(r.At(kT0 + 7 * kBucket, kBucket).rule_hits, 0u);
}

TEST(AccountRiskTest, AlertsOncePerWindowOnScore) {
  AccountRisk r;
  const AccountAlertThresholds t = ScoreAt(0.5);
  EXPECT_FALSE(r.Record(kT0, kBucket, 0.4, false, 1, t).alert);
  AccountStanding s = r.Record(kT0 + kDay, kBucket, 0.6, false, 2, t);
  EXPECT_TRUE(s.alert);
  EXPECT_EQ(s.cause, AccountAlertCause::kScore);
  // Still over the threshold, and another payment over it: no second alert in the window.
  EXPECT_FALSE(r.Record(kT0 + 2 * kDay, kBucket, 0.9, false, 3, t).alert);
  EXPECT_FALSE(r.Record(kT0 + 5 * kBucket, kBucket, 0.9, false, 4, t).alert);
  // Six buckets after the alert's bucket the account may alert again; the 0.9 of bucket 5 is
  // still in its window.
  s = r.Record(kT0 + 6 * kBucket, kBucket, 0.1, false, 5, t);
  EXPECT_TRUE(s.alert);
  EXPECT_NEAR(s.score, 0.9, 1e-4);
}

TEST(AccountRiskTest, AlertsOnRuleHits) {
  AccountRisk r;
  const AccountAlertThresholds t = HitsAt(3);
  EXPECT_FALSE(r.Record(kT0, kBucket, 0.0, true, 1, t).alert);
  EXPECT_FALSE(r.Record(kT0 + kDay, kBucket, 0.0, false, 2, t).alert);
  EXPECT_FALSE(r.Record(kT0 + 2 * kDay, kBucket, 0.0, true, 3, t).alert);
  const AccountStanding s = r.Record(kT0 + 3 * kDay, kBucket, 0.0, true, 4, t);
  EXPECT_TRUE(s.alert);
  EXPECT_EQ(s.cause, AccountAlertCause::kRuleHits);
  EXPECT_EQ(s.rule_hits, 3u);
}

TEST(AccountRiskTest, ThresholdsOffNeverAlert) {
  AccountRisk r;
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(r.Record(kT0 + i, kBucket, 1.0, true, i + 1, {}).alert);
}

TEST(AccountRiskTest, RetryOfTheAlertingPaymentIsAnsweredAlike) {
  AccountRisk r;
  const AccountAlertThresholds t = HitsAt(2);
  r.Record(kT0, kBucket, 0.0, true, 1, t);
  const AccountStanding first = r.Record(kT0 + 1, kBucket, 0.0, true, 2, t);
  ASSERT_TRUE(first.alert);
  // The same payment again (its decision was never acknowledged): not counted twice, same alert.
  const AccountStanding retry = r.Record(kT0 + 1, kBucket, 0.0, true, 2, t);
  EXPECT_TRUE(retry.alert);
  EXPECT_EQ(retry.cause, AccountAlertCause::kRuleHits);
  EXPECT_EQ(retry.rule_hits, 2u);
  // Another payment does not alert again.
  EXPECT_FALSE(r.Record(kT0 + 2, kBucket, 0.0, true, 3, t).alert);
  // And once another payment was recorded, the alerting one is still answered alike.
  EXPECT_TRUE(r.Record(kT0 + 1, kBucket, 0.0, true, 2, t).alert);
}

TEST(AccountRiskTest, PaymentsOlderThanTheWindowChangeNothing) {
  AccountRisk r;
  r.Record(kT0 + 10 * kBucket, kBucket, 0.3, false, 1, {});
  const AccountStanding s = r.Record(kT0, kBucket, 0.99, true, 2, {});
  EXPECT_NEAR(s.score, 0.3, 1e-4);
  EXPECT_EQ(s.rule_hits, 0u);
  // A late payment inside the window folds into its own bucket.
  r.Record(kT0 + 7 * kBucket, kBucket, 0.8, true, 3, {});
  EXPECT_NEAR(r.At(kT0 + 10 * kBucket, kBucket).score, 0.8, 1e-4);
  EXPECT_NEAR(r.At(kT0 + 12 * kBucket, kBucket).score, 0.8, 1e-4);
  EXPECT_NEAR(r.At(kT0 + 13 * kBucket, kBucket).score, 0.3, 1e-4);
}

TEST(AccountRiskTest, TagsAreStableAndNonZero) {
  EXPECT_EQ(AccountRisk::TagOf("tx-1"), AccountRisk::TagOf("tx-1"));
  EXPECT_NE(AccountRisk::TagOf("tx-1"), AccountRisk::TagOf("tx-2"));
  EXPECT_NE(AccountRisk::TagOf(""), 0u);
  // FNV-1a of "a", fixed: a stored tag must mean the same payment after an upgrade.
  EXPECT_EQ(AccountRisk::TagOf("a"), 0xe40c292cu);
}

TEST(AccountRiskTest, EncodingRoundTripsAndRefusesMalformed) {
  AccountRisk r;
  r.Record(kT0, kBucket, 0.4, true, 7, HitsAt(1));
  r.Record(kT0 + 2 * kBucket, kBucket, 0.9, false, 8, HitsAt(1));
  std::string bytes;
  r.EncodeTo(&bytes);
  EXPECT_EQ(bytes.size(), 36u);
  bytes += "rest";
  std::string_view in = bytes;
  AccountRisk back;
  ASSERT_TRUE(back.DecodeFrom(&in));
  EXPECT_EQ(back, r);
  EXPECT_EQ(in, "rest");

  std::string_view short_in = std::string_view(bytes).substr(0, 35);
  EXPECT_FALSE(back.DecodeFrom(&short_in));
  EXPECT_EQ(short_in.size(), 35u);  // unchanged on failure
  std::string bad = bytes;
  bad[18] = 9;  // an alert cause that does not exist
  std::string_view bad_in = bad;
  EXPECT_FALSE(back.DecodeFrom(&bad_in));
}

// Against a brute-force recomputation over every payment kept in a list: the standing after
// each payment (highest quantized score, rule hits over the window's buckets) and the alerts.
TEST(AccountRiskTest, MatchesBruteForceOnRandomStreams) {
  std::mt19937_64 rng(29);
  for (int stream = 0; stream < 50; ++stream) {
    struct Payment {
      int64_t bucket;
      double score;
      bool hit;
    };
    std::vector<Payment> kept;
    AccountRisk r;
    AccountAlertThresholds t;
    t.score = std::uniform_real_distribution<double>(0.3, 0.95)(rng);
    t.rule_hits = static_cast<uint32_t>(rng() % 5);
    int64_t time = kT0;
    int64_t newest = -1, alert_bucket = -1;
    for (int i = 0; i < 300; ++i) {
      // Mostly forward by up to 4 days, sometimes back by up to 2 days (late).
      const int64_t step = static_cast<int64_t>(rng() % (4 * kDay));
      int64_t at = time + step;
      if (rng() % 8 == 0) at = time - static_cast<int64_t>(rng() % (2 * kDay));
      time = std::max(time, at);
      const double score = rng() % 10 == 0 ? std::nan("") : std::pow((rng() % 1000) / 1000.0, 3);
      const bool hit = rng() % 6 == 0;
      const AccountStanding got = r.Record(at, kBucket, score, hit, i + 1, t);

      const int64_t b = at / kBucket;
      newest = std::max(newest, b);
      if (b > newest - AccountRisk::kBuckets) kept.push_back({b, score, hit});
      double best = std::nan("");
      uint32_t hits = 0;
      for (const Payment& p : kept) {
        if (p.bucket <= newest - AccountRisk::kBuckets) continue;
        if (!std::isnan(p.score)) {
          const double q = std::ceil(p.score * 65534) / 65534;
          best = std::isnan(best) ? q : std::max(best, q);
        }
        hits += p.hit;
      }
      ASSERT_EQ(std::isnan(got.score), std::isnan(best)) << stream << " " << i;
      if (!std::isnan(best)) {
        ASSERT_NEAR(got.score, best, 1e-12) << stream << " " << i;
      }
      ASSERT_EQ(got.rule_hits, hits) << stream << " " << i;
      const bool over = (!std::isnan(best) && best >= t.score) ||
                        (t.rule_hits > 0 && hits >= t.rule_hits);
      const bool quiet = alert_bucket < 0 || newest - alert_bucket >= AccountRisk::kBuckets;
      const bool alert = over && quiet;
      if (alert) alert_bucket = newest;
      ASSERT_EQ(got.alert, alert) << stream << " " << i;
    }
  }
}

}  // namespace
}  // namespace vigil
