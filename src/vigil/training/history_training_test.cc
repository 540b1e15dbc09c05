#include "vigil/training/history_training.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::training {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(SplitByEventTime, SplitsInTimeOrderAndNeverSeparatesOneInstant) {
  // 10 rows, out of order, with the times 0..4 twice each.
  std::vector<UtcTime> times;
  for (int i = 9; i >= 0; --i) times.push_back(FromUnixMicros(i / 2));
  const std::vector<uint8_t> labels(10, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<SplitPart> parts, SplitByEventTime(times, labels, 0.5, 0.2));
  ASSERT_EQ(parts.size(), 3u);
  // 50% would cut between the two rows of time 2: the cut moves past them.
  EXPECT_EQ(parts[0].rows.size(), 6u);
  EXPECT_EQ(parts[1].rows.size(), 2u);
  EXPECT_EQ(parts[2].rows.size(), 2u);
  EXPECT_EQ(parts[0].until, FromUnixMicros(2));
  EXPECT_EQ(parts[1].from, FromUnixMicros(3));
  EXPECT_EQ(parts[2].from, FromUnixMicros(4));
  std::set<size_t> all;
  for (const SplitPart& p : parts) all.insert(p.rows.begin(), p.rows.end());
  EXPECT_EQ(all.size(), 10u);

  EXPECT_THAT(SplitByEventTime(times, labels, 0.8, 0.2),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("leave a test part")));
  const std::vector<UtcTime> one_instant(10, FromUnixMicros(5));
  EXPECT_THAT(SplitByEventTime(one_instant, labels, 0.6, 0.2),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("part is empty")));
}

// A stream where one column gives the label away (as "amount < $100" does in the AMLSim runs)
// and another where the label needs two columns together.
LabelledRows Stream(size_t n, bool leaky, uint64_t seed, std::vector<UtcTime>* times) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  LabelledRows r;
  r.names = {"x", "y", "noise"};
  for (size_t i = 0; i < n; ++i) {
    const double x = z(rng), y = z(rng), e = z(rng);
    const bool positive = leaky ? (x > 1.7) : (x * y > 1.2);
    r.labels.push_back(positive ? 1 : 0);
    r.values.insert(r.values.end(), {x, y, e});
    times->push_back(FromUnixMicros(static_cast<int64_t>(i) * 1'000'000));
  }
  return r;
}

TEST(TrainOnHistory, AModelThatAddsNothingToOneColumnFailsTheGate) {
  std::vector<UtcTime> times;
  const LabelledRows leaky = Stream(6000, true, 1, &times);
  HistoryTrainingOptions options;
  options.bootstrap_resamples = 200;
  options.xgboost.max_depth = 3;
  ASSERT_OK_AND_ASSIGN(TrainingReport r, TrainOnHistory(leaky, times, options));
  ASSERT_FALSE(r.baselines.empty());
  EXPECT_EQ(r.baselines[0].feature, "x");
  EXPECT_TRUE(r.baselines[0].higher_is_riskier);
  EXPECT_GT(r.baselines[0].test_pr_auc.estimate, 0.95);
  EXPECT_FALSE(r.gate_passed) << r.gate;
  EXPECT_THAT(r.gate, HasSubstr("'x' alone"));
  // Every row in exactly one part, in time order.
  EXPECT_EQ(r.train.rows.size() + r.validation.rows.size() + r.test.rows.size(), 6000u);
  EXPECT_LT(r.train.until, r.validation.from);
  EXPECT_LT(r.validation.until, r.test.from);
}

TEST(TrainOnHistory, AModelThatSeesWhatNoColumnShowsAlonePassesAndIsReportedOnTest) {
  std::vector<UtcTime> times;
  const LabelledRows stream = Stream(8000, false, 2, &times);
  HistoryTrainingOptions options;
  options.bootstrap_resamples = 200;
  options.xgboost.max_depth = 4;
  ASSERT_OK_AND_ASSIGN(TrainingReport r, TrainOnHistory(stream, times, options));
  EXPECT_TRUE(r.gate_passed) << r.gate;
  EXPECT_GT(r.test_pr_auc.estimate, r.test_base_rate * 3);
  EXPECT_LE(r.test_pr_auc.low, r.test_pr_auc.estimate);
  EXPECT_GE(r.test_pr_auc.high, r.test_pr_auc.estimate);
  EXPECT_GE(r.block_threshold, r.review_threshold);
  EXPECT_EQ(r.test_at_review.tp + r.test_at_review.fn, r.test.positives);
  EXPECT_EQ(r.baselines.size(), 3u);  // no amount column: the best three only
  // A named column is measured besides the best three: with two more copies of x, the best
  // three are x and its copies, and "noise" is there only because it is named.
  LabelledRows wide;
  wide.names = {"x", "y", "noise", "x2", "x3"};
  wide.labels = stream.labels;
  for (size_t i = 0; i < stream.rows(); ++i) {
    const double* v = &stream.values[i * 3];
    wide.values.insert(wide.values.end(), {v[0], v[1], v[2], 2 * v[0], v[0] + 1});
  }
  options.named_baselines = {"noise"};
  ASSERT_OK_AND_ASSIGN(TrainingReport named, TrainOnHistory(wide, times, options));
  ASSERT_EQ(named.baselines.size(), 4u);
  EXPECT_EQ(named.baselines[3].feature, "noise");
  EXPECT_TRUE(std::any_of(named.baselines.begin(), named.baselines.end(),
                          [](const Baseline& b) { return b.feature == "noise"; }));
}

// With an alert budget the review threshold keeps validation's alerts within it; the test
// period's rate is reported beside it (it may differ: it is another period).
TEST(TrainOnHistory, AnAlertBudgetSetsTheReviewThreshold) {
  std::vector<UtcTime> times;
  const LabelledRows stream = Stream(8000, false, 2, &times);  // one row a second: 0.02 days
  HistoryTrainingOptions options;
  options.bootstrap_resamples = 50;
  options.alerts_per_day = 40;  // the parts are under a day: 40 alerts at most
  ASSERT_OK_AND_ASSIGN(TrainingReport budgeted, TrainOnHistory(stream, times, options));
  EXPECT_LE(budgeted.validation_alerts_per_day, 40);
  EXPECT_GT(budgeted.validation_alerts_per_day, 20);  // the lowest threshold within it
  EXPECT_THAT(budgeted.review_chosen_by, HasSubstr("at most 40 alerts a day"));
  options.alerts_per_day = 0;
  ASSERT_OK_AND_ASSIGN(TrainingReport f1, TrainOnHistory(stream, times, options));
  EXPECT_EQ(f1.review_chosen_by, "the best F1 on validation");
  EXPECT_NE(f1.review_threshold, budgeted.review_threshold);
}

// A budget in accounts: the alerts at the review threshold touch at most that share of the
// validation period's accounts, and it needs the rows' parties.
TEST(TrainOnHistory, AnAccountBudgetSetsTheReviewThreshold) {
  std::vector<UtcTime> times;
  const LabelledRows stream = Stream(8000, false, 2, &times);
  HistoryTrainingOptions options;
  options.bootstrap_resamples = 50;
  options.alerted_account_share = 0.1;
  EXPECT_THAT(TrainOnHistory(stream, times, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("share of accounts")));
  std::vector<std::array<uint32_t, 2>> parties;
  for (size_t i = 0; i < stream.rows(); ++i) {
    parties.push_back({static_cast<uint32_t>(i % 300), static_cast<uint32_t>(300 + i % 211)});
  }
  ASSERT_OK_AND_ASSIGN(TrainingReport r, TrainOnHistory(stream, times, options, {}, parties));
  EXPECT_LE(r.validation_alerted_account_share, 0.1);
  EXPECT_GT(r.validation_alerted_account_share, 0.05);
  EXPECT_GT(r.test_alerted_account_share, 0);
  EXPECT_THAT(r.review_chosen_by, HasSubstr("at most 10% of the accounts"));
  // With parties the test part is also measured per account (evaluation::EvaluateAccounts).
  ASSERT_TRUE(r.test_accounts.has_value());
  EXPECT_EQ(r.test_accounts->max_fpr, 0.01);
  EXPECT_GT(r.test_accounts->accounts, 400u);
  EXPECT_GT(r.test_accounts->laundering, 0u);
  options.alerted_account_share = 0;
  ASSERT_OK_AND_ASSIGN(TrainingReport no_parties, TrainOnHistory(stream, times, options));
  EXPECT_FALSE(no_parties.test_accounts.has_value());
  EXPECT_TRUE(std::isnan(no_parties.validation_alerted_account_share));
}

TEST(TrainOnHistory, ATestPartWithoutLaunderingIsRefused) {
  std::vector<UtcTime> times;
  LabelledRows stream = Stream(1000, false, 3, &times);
  for (size_t i = 800; i < 1000; ++i) stream.labels[i] = 0;
  EXPECT_THAT(TrainOnHistory(stream, times),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("test part holds no")));
}

}  // namespace
}  // namespace vigil::training
