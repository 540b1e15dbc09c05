#include "vigil/features/feature_extractor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::StatusIs;

constexpr int64_t kMinute = 60 * kMicrosPerSecond;
constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z, a Thursday

FxRates TestRates() {
  auto fx = FxRates::Parse(
      "reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.5\nJPY,100\n", "test");
  EXPECT_TRUE(fx.ok()) << fx.status();
  return *std::move(fx);
}

Transaction MakeTx(int64_t t_us, const std::string& from, const std::string& to, int64_t cents,
                   const char* currency = "USD") {
  Transaction tx;
  tx.id = "t";
  tx.event_time = FromUnixMicros(t_us);
  tx.originator.bank_id = "B1";
  tx.originator.account_id = from;
  tx.beneficiary.bank_id = "B1";
  tx.beneficiary.account_id = to;
  tx.amount = Money(cents, 2, *Currency::FromCode(currency));
  tx.payment_format = PaymentFormat::kWire;
  return tx;
}

class Row {
 public:
  explicit Row(std::vector<double> v) : v_(std::move(v)) {}
  double operator[](const std::string& name) const {
    auto i = FeatureExtractor::Schema()->IndexOf(name);
    EXPECT_TRUE(i.has_value()) << name;
    return i ? v_[*i] : std::nan("");
  }

 private:
  std::vector<double> v_;
};

Row Process(FeatureExtractor& fe, const Transaction& tx) {
  std::vector<double> row(FeatureExtractor::Schema()->size(), -1);
  EXPECT_OK(fe.Process(tx, absl::MakeSpan(row)));
  return Row(std::move(row));
}

TEST(FeatureExtractor, SchemaIsVersionedAndPrefixed) {
  auto schema = FeatureExtractor::Schema();
  EXPECT_EQ(schema->version(), "vigil.features.v3");
  EXPECT_TRUE(schema->IndexOf("orig_out_count_24h").has_value());
  EXPECT_TRUE(schema->IndexOf("bene_fan_in_7d").has_value());
  EXPECT_TRUE(schema->IndexOf("payment_format_credit_card").has_value());
  EXPECT_TRUE(schema->IndexOf("cycle_length").has_value());
  // v2 keeps v1's 60 columns in their places and appends the long memory; v3 keeps v2's 86
  // and appends the counterparty risk.
  ASSERT_EQ(schema->size(), 98u);
  EXPECT_EQ(schema->names()[0], "amount_reporting");
  EXPECT_EQ(schema->names()[59], "bene_pass_through_ratio_24h");
  EXPECT_EQ(schema->names()[60], "pair_count_before");
  EXPECT_EQ(schema->names()[85], "bene_in_degree_90d");
  EXPECT_EQ(schema->names()[86], "orig_account_score");
  EXPECT_EQ(schema->names()[97], "bene_counterparties_with_rule_hits");
}

TEST(FeatureExtractor, WindowsCountBothSidesAndExpire) {
  FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  Process(fe, MakeTx(kBase, "A", "B", 10000));                       // 100 USD
  Process(fe, MakeTx(kBase + 30 * kMinute, "A", "C", 5000, "EUR"));  // 50 EUR = 100 USD
  Row r = Process(fe, MakeTx(kBase + 61 * kMinute, "A", "B", 20000));
  // The first payment (61 min ago) has left the 1h window but not the 24h one.
  EXPECT_EQ(r["orig_out_count_1h"], 2);
  EXPECT_DOUBLE_EQ(r["orig_out_sum_1h"], 300);
  EXPECT_EQ(r["orig_out_count_24h"], 3);
  EXPECT_DOUBLE_EQ(r["orig_out_sum_24h"], 400);
  EXPECT_EQ(r["orig_in_count_24h"], 0);
  EXPECT_EQ(r["bene_in_count_24h"], 2);
  EXPECT_DOUBLE_EQ(r["bene_in_sum_24h"], 300);
  EXPECT_EQ(r["orig_distinct_counterparties_24h"], 2);
  EXPECT_EQ(r["orig_fan_out_7d"], 2);
  EXPECT_EQ(r["bene_fan_in_7d"], 1);
  EXPECT_DOUBLE_EQ(r["orig_seconds_since_last_activity"], 31 * 60);
  EXPECT_DOUBLE_EQ(r["amount_reporting"], 200);
  EXPECT_EQ(r["hour_of_day"], 1);
  EXPECT_EQ(r["day_of_week"], 3);  // Thursday
  EXPECT_EQ(r["payment_format_wire"], 1);
  EXPECT_EQ(r["payment_format_ach"], 0);
  // Exactly 7 days after the first payment it is out of the 7d window (t - W < e is strict).
  Row later = Process(fe, MakeTx(kBase + 7 * 24 * 60 * kMinute, "A", "D", 100));
  EXPECT_EQ(later["orig_out_count_7d"], 3);
  EXPECT_EQ(later["orig_fan_out_7d"], 3);  // B (second payment), C, D
}

TEST(FeatureExtractor, NearThresholdRoundAmountAndPassThrough) {
  FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  Row in = Process(fe, MakeTx(kBase, "SRC", "MULE", 1'000'000));  // 10,000.00: at threshold
  EXPECT_EQ(in["bene_near_threshold_count_24h"], 0);              // [9000, 10000) excludes 10000
  EXPECT_EQ(in["is_round_amount"], 1);
  EXPECT_TRUE(std::isnan(in["orig_pass_through_ratio_24h"]));              // nothing came in
  Row out = Process(fe, MakeTx(kBase + kMinute, "MULE", "DST", 900'000));  // 9,000.00
  EXPECT_EQ(out["orig_near_threshold_count_24h"], 1);
  EXPECT_DOUBLE_EQ(out["orig_pass_through_ratio_24h"], 0.9);
  Row odd = Process(fe, MakeTx(kBase + 2 * kMinute, "MULE", "DST", 899'999));
  EXPECT_EQ(odd["is_round_amount"], 0);
  EXPECT_EQ(odd["orig_near_threshold_count_24h"], 1);  // 8,999.99 is below 90%
}

TEST(FeatureExtractor, CycleLengthFindsShortestReturnPath) {
  FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  // D -> A and C -> D exist; A -> B, B -> C: the payment B -> C closes nothing yet...
  Process(fe, MakeTx(kBase, "D", "A", 100));
  Process(fe, MakeTx(kBase + kMinute, "A", "B", 100));
  Row r3 = Process(fe, MakeTx(kBase + 2 * kMinute, "B", "C", 100));
  EXPECT_EQ(r3["cycle_length"], 0);  // C has paid nobody
  Process(fe, MakeTx(kBase + 3 * kMinute, "C", "D", 100));
  // A -> B again: B -> C -> D -> A returns to A in 3 hops: a 4-cycle.
  EXPECT_EQ(Process(fe, MakeTx(kBase + 4 * kMinute, "A", "B", 100))["cycle_length"], 4);
  // D -> A again: A -> B -> C -> D is 3 hops: also a 4-cycle; C -> D: D -> A -> B -> C.
  EXPECT_EQ(Process(fe, MakeTx(kBase + 5 * kMinute, "C", "D", 100))["cycle_length"], 4);
  // B -> A closes A -> B directly.
  EXPECT_EQ(Process(fe, MakeTx(kBase + 6 * kMinute, "B", "A", 100))["cycle_length"], 2);
  // Eight days later every edge has expired.
  EXPECT_EQ(Process(fe, MakeTx(kBase + 8 * 24 * 60 * kMinute, "A", "B", 100))["cycle_length"], 0);
}

TEST(FeatureExtractor, RejectsLateAndUnconvertibleWithoutSideEffects) {
  FxRates fx = TestRates();
  FeatureConfig config;
  config.allowed_lateness = std::chrono::minutes(5);
  FeatureExtractor fe(fx, config);
  std::vector<double> row(FeatureExtractor::Schema()->size());
  ASSERT_OK(fe.Process(MakeTx(kBase + 60 * kMinute, "A", "B", 100), absl::MakeSpan(row)));
  EXPECT_THAT(fe.Process(MakeTx(kBase + 54 * kMinute, "A", "B", 100), absl::MakeSpan(row)),
              StatusIs(absl::StatusCode::kOutOfRange, ::testing::HasSubstr("event_too_late")));
  EXPECT_THAT(fe.Process(MakeTx(kBase + 61 * kMinute, "A", "Z", 100, "GBP"), absl::MakeSpan(row)),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("GBP")));
  EXPECT_EQ(fe.num_accounts(), 2u);  // "Z" was never created
  // Each refusal names the member at fault.
  EXPECT_EQ(RefusedField(fe.Process(MakeTx(kBase + 54 * kMinute, "A", "B", 100),
                                    absl::MakeSpan(row))),
            "$.timestamp");
  EXPECT_EQ(RefusedField(fe.Process(MakeTx(kBase + 61 * kMinute, "A", "Z", 100, "GBP"),
                                    absl::MakeSpan(row))),
            "$.amount.currency");
  EXPECT_EQ(RefusedField(fe.Process(MakeTx(kBase + 61 * kMinute, "A", "Z", -100),
                                    absl::MakeSpan(row))),
            "$.amount.value");
  EXPECT_EQ(RefusedField(absl::OkStatus()), "");
  // Within the bound a late event is applied as of its own time.
  Row r = Process(fe, MakeTx(kBase + 56 * kMinute, "A", "C", 100));
  EXPECT_EQ(r["orig_out_count_1h"], 1);  // the 60-minute payment is in its future
  // A's only earlier payment is later in event time: no previous activity as of 00:56.
  EXPECT_TRUE(std::isnan(r["orig_seconds_since_last_activity"]));
}

// A state poisoned by one payment dated far ahead (written before admission bounded event
// times): every real payment is too late until BoundEventTimes forgets the future events.
TEST(FeatureExtractor, BoundEventTimesRecoversAPoisonedWatermark) {
  FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  std::vector<double> row(FeatureExtractor::Schema()->size());
  ASSERT_OK(fe.Process(MakeTx(kBase, "A", "B", 100), absl::MakeSpan(row)));
  ASSERT_OK(fe.Process(MakeTx(kBase + kMinute, "A", "C", 200), absl::MakeSpan(row)));
  constexpr int64_t k2099 = 4'070'908'800'000'000;  // 2099-01-01
  ASSERT_OK(fe.Process(MakeTx(k2099, "A", "M", 300), absl::MakeSpan(row)));
  EXPECT_THAT(fe.Process(MakeTx(kBase + 2 * kMinute, "D", "E", 100), absl::MakeSpan(row)),
              StatusIs(absl::StatusCode::kOutOfRange, ::testing::HasSubstr("event_too_late")));
  fe.ClearDirty();

  // Nothing past the bound: nothing changes.
  EXPECT_FALSE(fe.BoundEventTimes(k2099).repaired());
  const EventTimeRepair repair = fe.BoundEventTimes(kBase + 5 * kMinute);
  EXPECT_TRUE(repair.repaired());
  EXPECT_EQ(repair.watermark_before_us, k2099);
  EXPECT_EQ(repair.watermark_after_us, kBase + kMinute);  // the newest event kept
  EXPECT_EQ(repair.accounts, 2u);                          // A and M held the 2099 payment
  EXPECT_EQ(repair.events_dropped, 2u);                    // its two sides
  EXPECT_EQ(fe.dirty_accounts().size(), 2u);               // stored with the next checkpoint
  EXPECT_EQ(fe.watermark_us(), kBase + kMinute);

  // Real payments are heard again. A's own earlier events left its state when the 2099 event
  // slid its windows (what a poisoned account loses cannot come back); C's did not.
  Row r = Process(fe, MakeTx(kBase + 2 * kMinute, "A", "D", 100));
  EXPECT_EQ(r["orig_out_count_1h"], 1);
  Row c = Process(fe, MakeTx(kBase + 2 * kMinute, "C", "D", 100));
  EXPECT_EQ(c["orig_in_count_24h"], 1);  // A's payment to C at kBase + 1 minute
  Row m = Process(fe, MakeTx(kBase + 3 * kMinute, "M", "A", 100));
  EXPECT_EQ(m["orig_out_count_1h"], 1);  // M's only event was the forgotten one
  EXPECT_EQ(m["orig_in_count_24h"], 0);
}

// ProcessBatch must give exactly what Process gives one transaction at a time: same rows (NaN
// where NaN), same errors, same accounts in the same order, same dirty list.
TEST(FeatureExtractor, ProcessBatchMatchesProcessOneByOne) {
  std::mt19937_64 rng(42);
  FxRates fx = TestRates();
  FeatureConfig config;
  config.allowed_lateness = std::chrono::minutes(30);
  std::vector<Transaction> txs;
  int64_t now = kBase;
  for (int i = 0; i < 3000; ++i) {
    now += static_cast<int64_t>(rng() % 4) * kMinute;
    int64_t t = now;
    if (rng() % 10 == 0) t -= static_cast<int64_t>(rng() % 40) * kMinute;  // late, some too late
    // A few busy accounts (counterparty index) among many quiet ones; some self-transfers.
    const auto pick = [&] {
      return rng() % 3 == 0 ? "H" + std::to_string(rng() % 4) : "A" + std::to_string(rng() % 400);
    };
    const std::string from = pick();
    const std::string to = rng() % 20 == 0 ? from : pick();
    txs.push_back(MakeTx(t, from, to, 1 + static_cast<int64_t>(rng() % 2'000'000),
                         rng() % 50 == 0 ? "GBP" : "USD"));
  }
  const size_t width = FeatureExtractor::Schema()->size();
  FeatureExtractor one(fx, config);
  std::vector<std::vector<double>> expected_rows;
  std::vector<absl::Status> expected_status;
  for (const Transaction& tx : txs) {
    std::vector<double> row(width, -1);
    expected_status.push_back(one.Process(tx, absl::MakeSpan(row)));
    expected_rows.push_back(std::move(row));
  }
  int rejected = 0;
  for (const absl::Status& s : expected_status) rejected += s.ok() ? 0 : 1;
  ASSERT_GT(rejected, 10);  // the stream exercises both error paths
  for (size_t batch : {size_t{1}, size_t{7}, size_t{256}, txs.size()}) {
    SCOPED_TRACE(::testing::Message() << "batch " << batch);
    FeatureExtractor fe(fx, config);
    for (size_t start = 0; start < txs.size(); start += batch) {
      const size_t n = std::min(batch, txs.size() - start);
      std::vector<double> rows(n * width, -1);
      std::vector<absl::Status> statuses(n);
      fe.ProcessBatch(absl::MakeConstSpan(txs).subspan(start, n), absl::MakeSpan(rows),
                      absl::MakeSpan(statuses));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(statuses[i], expected_status[start + i]) << "transaction " << start + i;
        if (!statuses[i].ok()) continue;
        for (size_t c = 0; c < width; ++c) {
          const double want = expected_rows[start + i][c], got = rows[i * width + c];
          ASSERT_TRUE(want == got || (std::isnan(want) && std::isnan(got)))
              << "transaction " << start + i << " " << FeatureExtractor::Schema()->names()[c]
              << ": " << got << " != " << want;
        }
      }
    }
    ASSERT_EQ(fe.num_accounts(), one.num_accounts());
    for (uint32_t a = 0; a < fe.num_accounts(); ++a) {
      ASSERT_EQ(fe.index().key(a), one.index().key(a));
    }
    EXPECT_EQ(fe.dirty_accounts(), one.dirty_accounts());
    EXPECT_EQ(fe.watermark_us(), one.watermark_us());
  }
}

// ---------------------------------------------------------------------------------------------
// Property test: every feature of every row against a brute-force recomputation from the full
// list of applied transactions, on random streams with ties, late events, self-transfers and
// gaps longer than the 7-day window.

struct Applied {
  int64_t t;
  int orig, bene;
  int64_t micros;
  bool near;
};

struct Expected {
  int64_t in_count[3] = {}, out_count[3] = {}, in_sum[3] = {}, out_sum[3] = {};
  int64_t near24 = 0;
  std::set<int> any24, any7, in7, out7;
  int64_t prev = INT64_MIN;
};

Expected BruteForce(const std::vector<Applied>& applied, int account, int64_t t) {
  Expected e;
  const int64_t windows[3] = {kWindowMicros[0], kWindowMicros[1], kWindowMicros[2]};
  for (size_t j = 0; j < applied.size(); ++j) {
    const Applied& a = applied[j];
    const bool is_last = j + 1 == applied.size();
    if (a.orig != account && a.bene != account) continue;
    if (!is_last && a.t <= t) e.prev = std::max(e.prev, a.t);
    if (a.t > t) continue;
    for (int dir = 0; dir < 2; ++dir) {  // 0: account paid (out), 1: account received (in)
      if ((dir == 0 ? a.orig : a.bene) != account) continue;
      const int cp = dir == 0 ? a.bene : a.orig;
      for (int w = 0; w < 3; ++w) {
        if (a.t <= t - windows[w]) continue;
        (dir == 0 ? e.out_count : e.in_count)[w]++;
        (dir == 0 ? e.out_sum : e.in_sum)[w] += a.micros;
        if (w == 1) e.near24 += a.near ? 1 : 0;
      }
      if (a.t > t - windows[1]) e.any24.insert(cp);
      if (a.t > t - windows[2]) {
        e.any7.insert(cp);
        (dir == 0 ? e.out7 : e.in7).insert(cp);
      }
    }
  }
  return e;
}

int BruteForceCycle(const std::vector<Applied>& applied, int orig, int bene, int64_t t) {
  if (orig == bene) return 0;
  // BFS from bene to orig over 7-day edges as of t, simple paths, at most 3 edges.
  std::vector<std::pair<int, int>> edges;
  for (const Applied& a : applied) {
    if (a.t <= t && a.t > t - kWindowMicros[2] && a.orig != a.bene)
      edges.push_back({a.orig, a.bene});
  }
  std::set<int> frontier = {bene}, seen = {bene};
  for (int hops = 1; hops <= 3; ++hops) {
    std::set<int> next;
    for (auto [u, v] : edges) {
      if (frontier.count(u) && !seen.count(v)) next.insert(v);
    }
    if (next.count(orig)) return hops + 1;
    seen.insert(next.begin(), next.end());
    frontier = next;
  }
  return 0;
}

void CheckSide(const Row& r, const std::string& p, const Expected& e, int64_t t) {
  const char* w[3] = {"1h", "24h", "7d"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(r[p + "in_count_" + w[i]], e.in_count[i]) << p << w[i];
    ASSERT_EQ(r[p + "out_count_" + w[i]], e.out_count[i]) << p << w[i];
    ASSERT_DOUBLE_EQ(r[p + "in_sum_" + w[i]], e.in_sum[i] / 1e6) << p << w[i];
    ASSERT_DOUBLE_EQ(r[p + "out_sum_" + w[i]], e.out_sum[i] / 1e6) << p << w[i];
  }
  ASSERT_EQ(r[p + "distinct_counterparties_24h"], static_cast<double>(e.any24.size())) << p;
  ASSERT_EQ(r[p + "distinct_counterparties_7d"], static_cast<double>(e.any7.size())) << p;
  ASSERT_EQ(r[p + "fan_in_7d"], static_cast<double>(e.in7.size())) << p;
  ASSERT_EQ(r[p + "fan_out_7d"], static_cast<double>(e.out7.size())) << p;
  ASSERT_EQ(r[p + "near_threshold_count_24h"], e.near24) << p;
  if (e.prev == INT64_MIN) {
    ASSERT_TRUE(std::isnan(r[p + "seconds_since_last_activity"])) << p;
  } else {
    ASSERT_DOUBLE_EQ(r[p + "seconds_since_last_activity"], (t - e.prev) / 1e6) << p;
  }
  if (e.in_sum[1] == 0) {
    ASSERT_TRUE(std::isnan(r[p + "pass_through_ratio_24h"])) << p;
  } else {
    ASSERT_DOUBLE_EQ(r[p + "pass_through_ratio_24h"],
                     static_cast<double>(e.out_sum[1]) / static_cast<double>(e.in_sum[1]));
  }
}

class FeatureExtractorProperty : public ::testing::TestWithParam<int> {};

TEST_P(FeatureExtractorProperty, MatchesBruteForce) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()));
  FxRates fx = TestRates();
  FeatureConfig config;
  config.allowed_lateness = std::chrono::hours(2);
  config.cycle_max_branching = 256;  // more than the accounts below: the bound never binds
  FeatureExtractor fe(fx, config);
  const int accounts = 3 + GetParam() % 12;
  std::vector<Applied> applied;
  int64_t now = kBase;
  for (int i = 0; i < 1500; ++i) {
    // Mostly small steps (ties included), sometimes hours, rarely more than a week.
    const uint64_t k = rng() % 100;
    now += k < 20   ? 0
           : k < 85 ? static_cast<int64_t>(rng() % 30) * kMinute
           : k < 98 ? static_cast<int64_t>(rng() % 20) * 60 * kMinute
                    : static_cast<int64_t>(8 * 24 * 60) * kMinute;
    int64_t t = now;
    if (rng() % 6 == 0) t -= static_cast<int64_t>(rng() % 120) * kMinute;  // late, within 2h
    const int orig = static_cast<int>(rng() % accounts);
    const int bene = rng() % 15 == 0 ? orig : static_cast<int>(rng() % accounts);
    const int64_t cents = rng() % 4 == 0 ? 900'000 + static_cast<int64_t>(rng() % 100'000)
                                         : 1 + static_cast<int64_t>(rng() % 2'000'000);
    Transaction tx = MakeTx(t, "A" + std::to_string(orig), "A" + std::to_string(bene), cents);
    std::vector<double> values(FeatureExtractor::Schema()->size());
    const absl::Status s = fe.Process(tx, absl::MakeSpan(values));
    if (t < fe.watermark_us() - config.allowed_lateness.count()) {
      ASSERT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
      continue;
    }
    ASSERT_OK(s);
    const int64_t micros = cents * 10'000;
    applied.push_back({t, orig, bene, micros, micros >= 9'000'000'000 && micros < 10'000'000'000});
    Row r(std::move(values));
    SCOPED_TRACE(::testing::Message() << "transaction " << i << " t=" << (t - kBase) / kMinute);
    CheckSide(r, "orig_", BruteForce(applied, orig, t), t);
    CheckSide(r, "bene_", BruteForce(applied, bene, t), t);
    ASSERT_EQ(r["cycle_length"], BruteForceCycle(applied, orig, bene, t));
  }
}

INSTANTIATE_TEST_SUITE_P(RandomStreams, FeatureExtractorProperty, ::testing::Range(1, 9));

// ---------------------------------------------------------------------------------------------
// Property test of schema v2's long-memory columns: in-order streams over 85 days (within the
// 90-day retention, so nothing expires) on a few accounts, with bounds wide enough that none
// binds, against brute force over every earlier payment.

struct Paid {
  int64_t t;
  int orig, bene;
  double amount;
};

// Directed edge summaries u -> v from the payments so far: first and last HistorySeconds.
struct EdgeTimes {
  uint32_t first = 0, last = 0;
};

uint32_t Earliest(const EdgeTimes& e, uint32_t from, uint32_t to) {
  for (uint32_t c : {e.first, e.last}) {
    if (c != 0 && c >= from && c <= to) return c;
  }
  return 0;
}

void CheckHistorySide(const Row& r, const std::string& p, const std::vector<Paid>& before,
                      int account, double amount, int64_t t) {
  std::vector<float> outs, ins;
  uint32_t last_in = 0;
  std::set<int> out30, in30, out90, in90;
  const uint32_t now = HistorySeconds(t);
  for (const Paid& x : before) {
    const uint32_t s = HistorySeconds(x.t);
    const bool in30d = s + 30 * 86400 > now, in90d = s + 90 * 86400 > now;
    if (x.orig == account) {
      outs.push_back(static_cast<float>(x.amount));
      if (in30d) out30.insert(x.bene);
      if (in90d) out90.insert(x.bene);
    }
    if (x.bene == account) {
      ins.push_back(static_cast<float>(x.amount));
      last_in = std::max(last_in, s);
      if (in30d) in30.insert(x.orig);
      if (in90d) in90.insert(x.orig);
    }
  }
  const auto last8 = [](std::vector<float> v) {
    if (v.size() > 8) v.erase(v.begin(), v.end() - 8);
    return v;
  };
  const auto median = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? static_cast<double>(v[n / 2])
                 : (static_cast<double>(v[n / 2 - 1]) + v[n / 2]) / 2;
  };
  const auto quantile = [amount](const std::vector<float>& v) {
    double below = 0;
    for (float a : v) below += a < static_cast<float>(amount) ? 1 : (a == static_cast<float>(amount) ? 0.5 : 0);
    return below / static_cast<double>(v.size());
  };
  const auto expect = [&](const std::string& name, double want) {
    const double got = r[p + name];
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << p << name << " = " << got;
    } else {
      ASSERT_DOUBLE_EQ(got, want) << p << name;
    }
  };
  const double nan = std::nan("");
  outs = last8(outs);
  const std::vector<float> last_ins = last8(ins);
  expect("amount_to_out_median", outs.empty() ? nan : amount / median(outs));
  expect("amount_out_quantile", outs.empty() ? nan : quantile(outs));
  expect("amount_to_in_median", last_ins.empty() ? nan : amount / median(last_ins));
  expect("amount_in_quantile", last_ins.empty() ? nan : quantile(last_ins));
  expect("amount_to_last_in", last_ins.empty() ? nan : amount / last_ins.back());
  expect("seconds_since_last_in", last_in == 0 ? nan : static_cast<double>(now - last_in));
  expect("out_degree_30d", static_cast<double>(out30.size()));
  expect("in_degree_30d", static_cast<double>(in30.size()));
  expect("out_degree_90d", static_cast<double>(out90.size()));
  expect("in_degree_90d", static_cast<double>(in90.size()));
}

int BruteForceTimedCycle(const std::vector<Paid>& before, int accounts, int orig, int bene,
                         int64_t t) {
  if (orig == bene) return 0;
  const uint32_t end = HistorySeconds(t), from = end - 30 * 86400 + 1;
  std::map<std::pair<int, int>, EdgeTimes> edges;
  for (const Paid& x : before) {
    if (x.orig == x.bene) continue;
    EdgeTimes& e = edges[{x.orig, x.bene}];
    const uint32_t s = HistorySeconds(x.t);
    if (e.first == 0) e.first = s;
    e.last = s;
  }
  // Earliest arrival at each account after exactly h hops from bene.
  std::vector<uint32_t> arrival(static_cast<size_t>(accounts), 0);
  arrival[static_cast<size_t>(bene)] = from;
  for (int hops = 1; hops <= 5; ++hops) {
    std::vector<uint32_t> next(static_cast<size_t>(accounts), 0);
    for (const auto& [uv, e] : edges) {
      const uint32_t a = arrival[static_cast<size_t>(uv.first)];
      if (a == 0) continue;
      const uint32_t time = Earliest(e, a, end);
      uint32_t& n = next[static_cast<size_t>(uv.second)];
      if (time != 0 && (n == 0 || time < n)) n = time;
    }
    if (next[static_cast<size_t>(orig)] != 0) return hops + 1;
    arrival = next;
  }
  return 0;
}

int BruteForceScatterGather(const std::vector<Paid>& before, int orig, int bene, int64_t t) {
  const uint32_t end = HistorySeconds(t), from = end - 30 * 86400 + 1;
  std::set<std::pair<int, int>> paid;
  for (const Paid& x : before) {
    const uint32_t s = HistorySeconds(x.t);
    if (s >= from && s <= end) paid.insert({x.orig, x.bene});
  }
  std::set<int> intermediaries;
  for (const auto& [s, o] : paid) {
    if (o != orig || s == orig) continue;
    for (const auto& [s2, m] : paid) {
      if (s2 != s || m == orig || m == bene || m == s) continue;
      if (paid.count({m, bene})) intermediaries.insert(m);
    }
  }
  return static_cast<int>(intermediaries.size());
}

class LongMemoryProperty : public ::testing::TestWithParam<int> {};

TEST_P(LongMemoryProperty, MatchesBruteForce) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) * 7919);
  FxRates fx = TestRates();
  FeatureConfig config;
  config.history_max_counterparties = 1000;
  config.motif_branching = 256;
  config.motif_budget = 1'000'000;
  FeatureExtractor fe(fx, config);
  const int accounts = 4 + 8 * GetParam();  // dense to sparse graphs
  std::vector<Paid> before;
  int64_t now = kBase;
  const int n = 1200;
  std::map<int, int> cycles;  // length -> payments: the stream exercises every length
  int scatter_gathers = 0;
  for (int i = 0; i < n; ++i) {
    // 85 days over the stream, ties and sub-second steps included.
    const uint64_t k = rng() % 10;
    now += k < 2 ? 0 : k < 4 ? static_cast<int64_t>(rng() % 1'000'000)
                             : static_cast<int64_t>(rng() % (2 * 85 * 86'400'000'000LL / n));
    const int orig = static_cast<int>(rng() % accounts);
    const int bene = rng() % 20 == 0 ? orig : static_cast<int>(rng() % accounts);
    const int64_t cents = rng() % 5 == 0 ? 10'000 : 1 + static_cast<int64_t>(rng() % 500'000);
    Transaction tx = MakeTx(now, "A" + std::to_string(orig), "A" + std::to_string(bene), cents);
    std::vector<double> values(FeatureExtractor::Schema()->size());
    ASSERT_OK(fe.Process(tx, absl::MakeSpan(values)));
    Row r(std::move(values));
    const double amount = static_cast<double>(cents) / 100;
    SCOPED_TRACE(::testing::Message() << "payment " << i << " " << orig << "->" << bene
                                      << " day " << (now - kBase) / 86'400'000'000.0);
    int pair_count = 0, reverse_count = 0;
    uint32_t pair_last = 0, reverse_last = 0;
    for (const Paid& x : before) {
      if (x.orig == orig && x.bene == bene) {
        ++pair_count;
        pair_last = HistorySeconds(x.t);
      }
      if (x.orig == bene && x.bene == orig) {
        ++reverse_count;
        reverse_last = HistorySeconds(x.t);
      }
    }
    const double s_now = HistorySeconds(now);
    ASSERT_EQ(r["pair_count_before"], pair_count);
    ASSERT_EQ(r["pair_reverse_count"], reverse_count);
    if (pair_count == 0) {
      ASSERT_TRUE(std::isnan(r["pair_seconds_since_last"]));
    } else {
      ASSERT_EQ(r["pair_seconds_since_last"], s_now - pair_last);
    }
    if (reverse_count == 0) {
      ASSERT_TRUE(std::isnan(r["pair_seconds_since_reverse"]));
    } else {
      ASSERT_EQ(r["pair_seconds_since_reverse"], s_now - reverse_last);
    }
    CheckHistorySide(r, "orig_", before, orig, amount, now);
    CheckHistorySide(r, "bene_", before, bene, amount, now);
    ASSERT_EQ(r["cycle_length_30d"], BruteForceTimedCycle(before, accounts, orig, bene, now));
    ASSERT_EQ(r["scatter_gather_30d"],
              orig == bene ? 0 : BruteForceScatterGather(before, orig, bene, now));
    ++cycles[static_cast<int>(r["cycle_length_30d"])];
    scatter_gathers += r["scatter_gather_30d"] > 0 ? 1 : 0;
    before.push_back({now, orig, bene, amount});
  }
  EXPECT_GT(cycles[0], 0);
  EXPECT_GT(cycles[2], 0);
  EXPECT_GT(cycles[3] + cycles[4] + cycles[5] + cycles[6], 0);
  EXPECT_GT(scatter_gathers, 0);
}

INSTANTIATE_TEST_SUITE_P(RandomStreams, LongMemoryProperty, ::testing::Range(1, 7));

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

Transaction Identified(Transaction tx, std::string id) {
  tx.id = std::move(id);
  return tx;
}

TEST(FeatureExtractorAccountRisk, RecordsBothPartiesAndAlertsOncePerWindow) {
  const FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  AccountAlertThresholds t;
  t.score = 0.5;
  const Transaction ab = Identified(MakeTx(kBase, "A", "B", 100), "p1");
  Process(fe, ab);
  fe.ClearDirty();
  std::array<AccountStanding, 2> s = fe.RecordRisk(ab, 0.3, false, t);
  EXPECT_NEAR(s[0].score, 0.3, 1e-4);
  EXPECT_NEAR(s[1].score, 0.3, 1e-4);
  EXPECT_FALSE(s[0].alert || s[1].alert);
  EXPECT_EQ(fe.dirty_accounts().size(), 2u) << "the risk is state: checkpointed with the account";

  // B pays C with a high score: B (now 0.7) and C alert, A is untouched.
  const Transaction bc = Identified(MakeTx(kBase + kMinute, "B", "C", 100), "p2");
  Process(fe, bc);
  s = fe.RecordRisk(bc, 0.7, true, t);
  EXPECT_TRUE(s[0].alert);
  EXPECT_EQ(s[0].cause, AccountAlertCause::kScore);
  EXPECT_EQ(s[0].rule_hits, 1u);
  EXPECT_TRUE(s[1].alert);
  const std::array<AccountStanding, 2> a = fe.StandingsOf(ab);
  EXPECT_NEAR(a[0].score, 0.3, 1e-4);
  EXPECT_NEAR(a[1].score, 0.7, 1e-4);
  EXPECT_FALSE(a[1].alert) << "StandingsOf records nothing";

  // B again within the window: no second alert; the retry of p2 is answered alike.
  const Transaction bd = Identified(MakeTx(kBase + 2 * kMinute, "B", "D", 100), "p3");
  Process(fe, bd);
  EXPECT_FALSE(fe.RecordRisk(bd, 0.9, false, t)[0].alert);
  EXPECT_TRUE(fe.RecordRisk(bc, 0.7, true, t)[0].alert);

  // 31 days on, B's window has emptied and a new high score alerts again.
  const Transaction later = Identified(MakeTx(kBase + 31 * 24 * 60 * kMinute, "B", "E", 100), "p4");
  Process(fe, later);
  s = fe.RecordRisk(later, 0.6, false, t);
  EXPECT_TRUE(s[0].alert);
  EXPECT_NEAR(s[0].score, 0.6, 1e-4);
}

TEST(FeatureExtractorAccountRisk, PreviewAnswersAsRecordWouldAndRecordsNothing) {
  const FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{}), twin(fx, FeatureConfig{});
  AccountAlertThresholds t;
  t.score = 0.5;
  t.rule_hits = 2;
  const Transaction ab = Identified(MakeTx(kBase, "A", "B", 100), "p1");
  const Transaction bb = Identified(MakeTx(kBase + kMinute, "B", "B", 100), "p2");  // to oneself
  const Transaction bc = Identified(MakeTx(kBase + 2 * kMinute, "B", "C", 100), "p3");
  for (FeatureExtractor* e : {&fe, &twin}) {
    Process(*e, ab);
    e->RecordRisk(ab, 0.3, true, t);
    Process(*e, bb);
    Process(*e, bc);
  }
  fe.ClearDirty();
  for (const auto& [tx, score, hit] : {std::tuple{bb, 0.2, true}, std::tuple{bc, 0.7, false}}) {
    const std::array<AccountStanding, 2> preview = fe.PreviewRisk(tx, score, hit, t);
    const std::array<AccountStanding, 2> recorded = twin.RecordRisk(tx, score, hit, t);
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(preview[k].score, recorded[k].score, 1e-9) << tx.id << " " << k;
      EXPECT_EQ(preview[k].rule_hits, recorded[k].rule_hits) << tx.id << " " << k;
      EXPECT_EQ(preview[k].alert, recorded[k].alert) << tx.id << " " << k;
      EXPECT_EQ(preview[k].cause, recorded[k].cause) << tx.id << " " << k;
    }
    // The preview changed nothing; recording it keeps the two extractors alike.
    EXPECT_TRUE(fe.dirty_accounts().empty());
    fe.RecordRisk(tx, score, hit, t);
    fe.ClearDirty();
  }
  // p2 (B to itself) was B's second rule hit: its alert came from the preview as from the record.
  EXPECT_TRUE(fe.PreviewRisk(bb, 0.2, true, t)[0].alert);
  EXPECT_NEAR(fe.StandingsOf(bc)[0].score, 0.7, 1e-4);
}

TEST(FeatureExtractorAccountRisk, UnknownPartiesGetAnEmptyStanding) {
  const FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  AccountAlertThresholds t;
  t.rule_hits = 1;
  // Never applied (as a refused payment): nothing is created.
  const std::array<AccountStanding, 2> s =
      fe.RecordRisk(Identified(MakeTx(kBase, "X", "Y", 100), "p"), 0.9, true, t);
  EXPECT_TRUE(std::isnan(s[0].score));
  EXPECT_FALSE(s[0].alert || s[1].alert);
  EXPECT_EQ(fe.num_accounts(), 0u);
}

TEST(FeatureExtractorAccountRisk, FollowsTheConfiguredWindow) {
  const FxRates fx = TestRates();
  FeatureConfig config;
  config.account_window = std::chrono::hours(24 * 6);  // 1-day buckets
  FeatureExtractor fe(fx, config);
  const Transaction ab = Identified(MakeTx(kBase, "A", "B", 100), "p1");
  Process(fe, ab);
  fe.RecordRisk(ab, 0.4, true, {});
  const Transaction day5 = Identified(MakeTx(kBase + 5 * 24 * 60 * kMinute, "A", "C", 100), "p2");
  Process(fe, day5);
  EXPECT_NEAR(fe.StandingsOf(day5)[0].score, 0.4, 1e-4);
  const Transaction day6 = Identified(MakeTx(kBase + 6 * 24 * 60 * kMinute, "A", "C", 100), "p3");
  Process(fe, day6);
  EXPECT_TRUE(std::isnan(fe.StandingsOf(day6)[0].score));
  EXPECT_EQ(fe.StandingsOf(day6)[0].rule_hits, 0u);
}

// Counterparty risk (schema v3): each side's own standing and its counterparties', read before
// the payment, from what was decided before it.
TEST(FeatureExtractorCounterpartyRisk, ReadsOwnAndCounterpartiesStandingsBeforeThePayment) {
  const FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  AccountAlertThresholds t;
  t.rule_hits = 1;
  const Transaction ab = Identified(MakeTx(kBase, "A", "B", 100), "p1");
  Row r = Process(fe, ab);
  EXPECT_TRUE(std::isnan(r["orig_account_score"])) << "nothing decided yet";
  EXPECT_EQ(r["orig_account_rule_hits"], 0);
  EXPECT_TRUE(std::isnan(r["orig_counterparty_max_score"]));
  EXPECT_EQ(r["orig_counterparties_alerted"], 0);
  ASSERT_TRUE(fe.RecordRisk(ab, 0.9, true, t)[0].alert);

  // C pays A: A (the beneficiary) alerted on p1, and its counterparty B did too.
  const Transaction ca = Identified(MakeTx(kBase + kMinute, "C", "A", 100), "p2");
  r = Process(fe, ca);
  EXPECT_NEAR(r["bene_account_score"], 0.9, 1e-4);
  EXPECT_EQ(r["bene_account_rule_hits"], 1);
  EXPECT_EQ(r["bene_account_alerted"], 1);
  EXPECT_NEAR(r["bene_counterparty_max_score"], 0.9, 1e-4);
  EXPECT_EQ(r["bene_counterparties_alerted"], 1);
  EXPECT_EQ(r["bene_counterparties_with_rule_hits"], 1);
  EXPECT_TRUE(std::isnan(r["orig_account_score"])) << "C is new";
  EXPECT_TRUE(std::isnan(r["orig_counterparty_max_score"]));
  fe.RecordRisk(ca, 0.2, false, t);

  // D pays C: C's own standing is p2's (0.2, no hit); its counterparty A stands at 0.9.
  const Transaction dc = Identified(MakeTx(kBase + 2 * kMinute, "D", "C", 100), "p3");
  r = Process(fe, dc);
  EXPECT_NEAR(r["bene_account_score"], 0.2, 1e-4);
  EXPECT_EQ(r["bene_account_rule_hits"], 0);
  EXPECT_EQ(r["bene_account_alerted"], 0);
  EXPECT_NEAR(r["bene_counterparty_max_score"], 0.9, 1e-4);
  EXPECT_EQ(r["bene_counterparties_alerted"], 1);

  // 31 days on, every window has emptied: nothing is read from the past month.
  const Transaction later = Identified(MakeTx(kBase + 31 * 24 * 60 * kMinute, "E", "A", 100), "p4");
  r = Process(fe, later);
  EXPECT_TRUE(std::isnan(r["bene_account_score"]));
  EXPECT_EQ(r["bene_account_alerted"], 0);
  EXPECT_TRUE(std::isnan(r["bene_counterparty_max_score"]));
  EXPECT_EQ(r["bene_counterparties_alerted"], 0);
}

TEST(FeatureExtractorCounterpartyRisk, ReadsOnlyTheMostRecentCounterparties) {
  const FxRates fx = TestRates();
  FeatureConfig config;
  config.counterparty_risk_max = 3;
  FeatureExtractor fe(fx, config);
  // X pays Y0..Y4 in turn; the oldest two end up risky, the newest three not.
  for (int i = 0; i < 5; ++i) {
    const Transaction tx =
        Identified(MakeTx(kBase + i * kMinute, "X", absl::StrCat("Y", i), 100), absl::StrCat("p", i));
    Process(fe, tx);
  }
  for (int i = 0; i < 5; ++i) {
    const Transaction y = Identified(
        MakeTx(kBase + (10 + i) * kMinute, absl::StrCat("Y", i), "W", 100), absl::StrCat("q", i));
    Process(fe, y);
    fe.RecordRisk(y, i < 2 ? 0.95 : 0.1, i < 2, {});
  }
  // X's memory orders its counterparties by its own payments, most recent first: Y4, Y3, Y2
  // are read, and the risky Y0 and Y1 are past the bound.
  Row r = Process(fe, Identified(MakeTx(kBase + 20 * kMinute, "Z", "X", 100), "z"));
  EXPECT_NEAR(r["bene_counterparty_max_score"], 0.1, 1e-4);
  EXPECT_EQ(r["bene_counterparties_with_rule_hits"], 0);
  // W's own counterparties, most recent first, are Y4, Y3, Y2: the same bound.
  r = Process(fe, Identified(MakeTx(kBase + 21 * kMinute, "V", "W", 100), "w"));
  EXPECT_NEAR(r["bene_counterparty_max_score"], 0.1, 1e-4);
  EXPECT_EQ(r["bene_counterparties_with_rule_hits"], 0);
  EXPECT_NEAR(r["bene_account_score"], 0.95, 1e-4) << "W's own standing sees all five";
  EXPECT_EQ(r["bene_account_rule_hits"], 2);
}

// Against a brute-force recomputation on a random stream: every counterparty-risk column of
// every row, with scores, rule hits and alerts recorded after each payment as a decider would.
TEST(FeatureExtractorCounterpartyRisk, MatchesBruteForceOnARandomStream) {
  const FxRates fx = TestRates();
  FeatureConfig config;
  config.counterparty_risk_max = 4;
  config.history_max_counterparties = 6;
  FeatureExtractor fe(fx, config);
  const int64_t bucket_us = config.account_window.count() / AccountRisk::kBuckets;
  AccountAlertThresholds thresholds;
  thresholds.score = 0.97;
  thresholds.rule_hits = 3;
  struct Decided {
    int64_t bucket;
    double score;
    bool hit;
  };
  struct Naive {
    std::vector<Decided> decided;
    int64_t alert_bucket = -1;
    std::vector<std::pair<int, int64_t>> recent;  // counterparty, last payment (s), newest first
  };
  constexpr int kAccounts = 40;
  std::vector<Naive> naive(kAccounts);
  std::mt19937_64 rng(29);
  int64_t now = kBase;
  const auto standing = [&](const Naive& n, int64_t bucket, double* score, int* hits) {
    *score = std::nan("");
    *hits = 0;
    for (const Decided& d : n.decided) {
      if (d.bucket <= bucket - AccountRisk::kBuckets || d.bucket > bucket) continue;
      if (!std::isnan(d.score) && !(d.score <= *score)) *score = d.score;
      *hits += d.hit ? 1 : 0;
    }
  };
  const auto alerted = [&](const Naive& n, int64_t bucket) {
    return n.alert_bucket >= 0 && n.alert_bucket <= bucket &&
           bucket - n.alert_bucket < AccountRisk::kBuckets;
  };
  const auto touch = [&](Naive& n, int counterparty, int64_t seconds) {
    auto& r = n.recent;
    r.erase(std::remove_if(r.begin(), r.end(), [&](const auto& p) { return p.first == counterparty; }),
            r.end());
    r.insert(r.begin(), {counterparty, seconds});
    if (r.size() > static_cast<size_t>(config.history_max_counterparties)) r.pop_back();
  };
  int checked_risky = 0;
  for (int i = 0; i < 4000; ++i) {
    now += static_cast<int64_t>(rng() % (6 * 3600)) * kMicrosPerSecond;  // whole seconds
    const int from = static_cast<int>(rng() % kAccounts);
    int to = static_cast<int>(rng() % (kAccounts - 1));
    to += to >= from ? 1 : 0;
    const Transaction tx = Identified(
        MakeTx(now, absl::StrCat("N", from), absl::StrCat("N", to), 100 + rng() % 10000),
        absl::StrCat("r", i));
    const Row row = Process(fe, tx);
    const int64_t bucket = now / bucket_us;
    const int64_t seconds = now / kMicrosPerSecond;
    const int64_t window_s = config.account_window.count() / kMicrosPerSecond;
    for (int side = 0; side < 2; ++side) {
      const std::string p = side == 0 ? "orig_" : "bene_";
      const Naive& n = naive[side == 0 ? from : to];
      double score;
      int hits;
      standing(n, bucket, &score, &hits);
      const std::string where = absl::StrCat("row ", i, " ", p);
      if (std::isnan(score)) {
        EXPECT_TRUE(std::isnan(row[p + "account_score"])) << where;
      } else {
        EXPECT_NEAR(row[p + "account_score"], score, 2e-5) << where;
      }
      EXPECT_EQ(row[p + "account_rule_hits"], hits) << where;
      EXPECT_EQ(row[p + "account_alerted"], alerted(n, bucket) ? 1 : 0) << where;
      double best = std::nan("");
      int cp_alerted = 0, cp_hits = 0, read = 0;
      for (const auto& [c, last] : n.recent) {
        if (read == config.counterparty_risk_max) break;
        if (last <= seconds - window_s) continue;
        ++read;
        double s;
        int h;
        standing(naive[c], bucket, &s, &h);
        if (!std::isnan(s) && !(s <= best)) best = s;
        cp_alerted += alerted(naive[c], bucket) ? 1 : 0;
        cp_hits += h > 0 ? 1 : 0;
      }
      if (std::isnan(best)) {
        EXPECT_TRUE(std::isnan(row[p + "counterparty_max_score"])) << where;
      } else {
        EXPECT_NEAR(row[p + "counterparty_max_score"], best, 2e-5) << where;
      }
      EXPECT_EQ(row[p + "counterparties_alerted"], cp_alerted) << where;
      EXPECT_EQ(row[p + "counterparties_with_rule_hits"], cp_hits) << where;
      checked_risky += cp_alerted > 0 ? 1 : 0;
    }
    touch(naive[from], to, seconds);
    touch(naive[to], from, seconds);
    // Decide: some payments unscored (rules only), some with a rule hit.
    const double score = rng() % 4 == 0 ? std::nan("") : static_cast<double>(rng() % 1000) / 1000;
    const bool hit = rng() % 5 == 0;
    const std::array<AccountStanding, 2> s = fe.RecordRisk(tx, score, hit, thresholds);
    for (int side = 0; side < 2; ++side) {
      Naive& n = naive[side == 0 ? from : to];
      n.decided.push_back({bucket, score, hit});
      if (s[side].alert) n.alert_bucket = bucket;
    }
  }
  EXPECT_GT(checked_risky, 100) << "the stream must exercise alerted counterparties";
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// A batch decided at once, then repaired in order (RiskReads, RefreshRiskColumns), gives the
// rows payments decided one by one get: bit for bit, every column.
TEST(FeatureExtractorRiskReads, RefreshedBatchRowsEqualOneByOne) {
  const FxRates fx = TestRates();
  FeatureConfig config;
  config.counterparty_risk_max = 4;
  FeatureExtractor one_by_one(fx, config), batched(fx, config);
  const size_t width = FeatureExtractor::Schema()->size();
  AccountAlertThresholds thresholds;
  thresholds.score = 0.9;
  std::mt19937_64 rng(41);
  std::vector<Transaction> txs;
  int64_t now = kBase;
  for (int i = 0; i < 2048; ++i) {
    now += static_cast<int64_t>(rng() % 600) * kMicrosPerSecond;
    const int from = static_cast<int>(rng() % 30);
    const int to = (from + 1 + static_cast<int>(rng() % 29)) % 30;
    txs.push_back(Identified(
        MakeTx(now, absl::StrCat("N", from), absl::StrCat("N", to), 100 + rng() % 10000),
        absl::StrCat("r", i)));
  }
  // The decision of a payment, from its row (so that a stale row decides otherwise).
  const auto score_of = [](absl::Span<const double> row, size_t i) {
    double s = static_cast<double>((i * 7919) % 100) / 100;
    for (const double v : row) {
      if (!std::isnan(v)) s += v * 1e-9;
    }
    return s - std::floor(s);
  };
  std::vector<double> expected(width * txs.size());
  for (size_t i = 0; i < txs.size(); ++i) {
    const absl::Span<double> row = absl::MakeSpan(expected).subspan(i * width, width);
    ASSERT_OK(one_by_one.Process(txs[i], row));
    one_by_one.RecordRisk(txs[i], score_of(row, i), i % 5 == 0, thresholds);
  }
  constexpr size_t kBatch = 64;
  std::vector<double> rows(width * kBatch), unrepaired(width * kBatch);
  std::vector<absl::Status> statuses(kBatch);
  RiskReads reads;
  int stale = 0;
  for (size_t start = 0; start < txs.size(); start += kBatch) {
    const absl::Span<const Transaction> batch = absl::MakeConstSpan(txs).subspan(start, kBatch);
    batched.ProcessBatch(batch, absl::MakeSpan(rows), absl::MakeSpan(statuses), &reads);
    ASSERT_EQ(reads.size(), kBatch);
    unrepaired = rows;
    for (size_t k = 0; k < kBatch; ++k) {
      ASSERT_OK(statuses[k]);
      const absl::Span<double> row = absl::MakeSpan(rows).subspan(k * width, width);
      batched.RefreshRiskColumns(batch[k], reads.Of(k), row);
      const size_t i = start + k;
      ASSERT_EQ(std::memcmp(row.data(), expected.data() + i * width, width * sizeof(double)), 0)
          << "row " << i;
      stale += std::memcmp(row.data(), unrepaired.data() + k * width, width * sizeof(double)) != 0;
      batched.RecordRisk(batch[k], score_of(row, i), i % 5 == 0, thresholds);
    }
  }
  EXPECT_GT(stale, 100) << "the stream must make batch rows stale for the test to mean much";
}

// Process with reads appends what ProcessBatch would have noted for the same payments.
TEST(FeatureExtractorRiskReads, ProcessAppendsTheReadsProcessBatchNotes) {
  const FxRates fx = TestRates();
  FeatureConfig config;
  config.counterparty_risk_max = 4;
  FeatureExtractor single(fx, config), batched(fx, config);
  std::vector<Transaction> txs;
  for (int i = 0; i < 12; ++i) {
    txs.push_back(Identified(MakeTx(kBase + i * kMicrosPerSecond, absl::StrCat("P", i % 4),
                                    absl::StrCat("P", (i + 1) % 4), 100 + i),
                             absl::StrCat("t", i)));
  }
  txs[5].amount = Money(-100, 0, txs[5].amount.currency());  // refused: negative
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> rows(txs.size() * width), row(width);
  std::vector<absl::Status> statuses(txs.size());
  RiskReads batch_reads, single_reads;
  batched.ProcessBatch(txs, absl::MakeSpan(rows), absl::MakeSpan(statuses), &batch_reads);
  for (size_t i = 0; i < txs.size(); ++i) {
    EXPECT_EQ(single.Process(txs[i], absl::MakeSpan(row), &single_reads).ok(), statuses[i].ok());
  }
  ASSERT_EQ(single_reads.size(), txs.size());
  for (size_t i = 0; i < txs.size(); ++i) {
    const RiskReads::Row a = single_reads.Of(i), b = batch_reads.Of(i);
    EXPECT_EQ(std::vector<uint32_t>(a.parties.begin(), a.parties.end()),
              std::vector<uint32_t>(b.parties.begin(), b.parties.end()))
        << "row " << i;
    for (int side = 0; side < 2; ++side) {
      EXPECT_EQ(std::vector<uint32_t>(a.counterparties[side].begin(), a.counterparties[side].end()),
                std::vector<uint32_t>(b.counterparties[side].begin(), b.counterparties[side].end()))
          << "row " << i << " side " << side;
    }
  }
  EXPECT_TRUE(single_reads.Of(5).parties.empty());
  EXPECT_FALSE(single_reads.Of(6).counterparties[0].empty());
}

TEST(FeatureExtractorRiskReads, ARefusedPaymentReadsNothing) {
  const FxRates fx = TestRates();
  FeatureExtractor fe(fx, FeatureConfig{});
  std::vector<Transaction> txs = {MakeTx(kBase, "A", "B", 100), MakeTx(kBase, "A", "B", 100)};
  txs[1].amount = Money(-100, 0, txs[1].amount.currency());  // refused: negative
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> rows(2 * width);
  std::vector<absl::Status> statuses(2);
  RiskReads reads;
  fe.ProcessBatch(txs, absl::MakeSpan(rows), absl::MakeSpan(statuses), &reads);
  ASSERT_OK(statuses[0]);
  ASSERT_FALSE(statuses[1].ok());
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads.Of(0).parties.size(), 2u);
  EXPECT_TRUE(reads.Of(1).parties.empty());
}

}  // namespace
}  // namespace vigil
