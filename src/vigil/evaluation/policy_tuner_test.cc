#include "vigil/evaluation/policy_tuner.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::evaluation {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

constexpr int64_t kDay = 86'400'000'000;
constexpr int64_t kMinute = 60'000'000;
constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z

// One feature column is enough for the rules below: the amount.
std::shared_ptr<const FeatureSchema> Schema() {
  static const auto schema = *FeatureSchema::Create("tuning.test", {"amount_reporting"});
  return schema;
}

constexpr char kPolicy[] = R"(# a comment that stays
version: "floor-1"
thresholds: {review: 0.5, block: 0.9}
accounts: {alert_rule_hits: 1}
constants:
  floor: 100   # the amount at or above which a payment is reviewed
  unused: 3
tune:
  floor: [0, 100]
rules:
  - id: big
    when: amount_reporting >= floor
    action: review
    reason: "{amount_reporting} at or above {floor}"
)";

// Ten days; each day ten ordinary payments of 10, 20, ..., 100 and one laundering payment of 75,
// every payment between two accounts of its own.
TuningHistory History() {
  TuningHistory h(1);
  int n = 0;
  for (int day = 0; day < 10; ++day) {
    for (int j = 0; j <= 10; ++j) {
      Transaction tx;
      tx.id = absl::StrCat("p", n++);
      tx.event_time = FromUnixMicros(kBase + day * kDay + j * kMinute);
      tx.originator.account_id = absl::StrCat("o", n);
      tx.beneficiary.account_id = absl::StrCat("b", n);
      const bool laundering = j == 10;
      tx.label = Label{laundering, ""};
      const double amount = laundering ? 75 : 10.0 * (j + 1);
      h.Add(tx, {&amount, 1}, std::nan(""));
    }
  }
  return h;
}

TEST(PolicyTuner, FindsTheFloorWithTheMostRecallWithinTheBudgetAndReportsTheHeldOutPart) {
  const PolicyInputLayout layout(Schema());
  const TuningHistory h = History();
  TuningOptions o;
  o.budget_per_day = 5;
  o.grid = 11;  // 0, 10, ..., 100
  ASSERT_OK_AND_ASSIGN(TuningResult r,
                       TunePolicy(kPolicy, "p.yaml", "floor-2", layout, ListLibrary{}, h, o));
  // Floor 70 reviews 70, 75, 80, 90, 100: five a day, every laundering payment; 60 would be six.
  ASSERT_EQ(r.after.size(), 1u);
  EXPECT_EQ(r.before[0], (std::pair<std::string, double>{"floor", 100}));
  EXPECT_EQ(r.after[0], (std::pair<std::string, double>{"floor", 70}));
  EXPECT_TRUE(r.within_budget);
  // The split: the last 20% of the time span (days 8 and 9) is held out.
  EXPECT_EQ(r.searched_after.days, 8);
  EXPECT_EQ(r.test_after.days, 2);
  EXPECT_EQ(r.searched_after.payments, 88);
  EXPECT_DOUBLE_EQ(r.searched_after.alerts_per_day, 5);
  EXPECT_DOUBLE_EQ(r.searched_after.recall.value, 1);
  EXPECT_DOUBLE_EQ(r.searched_before.recall.value, 0);
  EXPECT_DOUBLE_EQ(r.searched_before.alerts_per_day, 1);
  EXPECT_EQ(r.test_after.recall.k, 2);
  EXPECT_EQ(r.test_after.recall.n, 2);
  EXPECT_DOUBLE_EQ(r.test_after.precision.value, 0.2);
  EXPECT_EQ(r.test_before.alerts, 2);
  // Wilson interval of 2/2: [0.342, 1].
  EXPECT_NEAR(r.test_after.recall.low, 0.3424, 1e-3);
  EXPECT_DOUBLE_EQ(r.test_after.recall.high, 1);
  // Accounts: one alert on each party of each reviewed payment (alert_rule_hits: 1).
  EXPECT_EQ(r.test_after.accounts, 44);
  EXPECT_EQ(r.test_after.laundering_accounts, 4);
  EXPECT_EQ(r.test_after.account_alerts, 20);
  EXPECT_DOUBLE_EQ(r.test_after.account_recall.value, 1);
  EXPECT_DOUBLE_EQ(r.test_after.account_false_positive_rate, 16.0 / 40);
  // The text: the value and the version replaced, the rest as written.
  EXPECT_THAT(r.policy_text, HasSubstr("# a comment that stays\nversion: \"floor-2\"\n"));
  EXPECT_THAT(r.policy_text,
              HasSubstr("  floor: 70   # the amount at or above which a payment is reviewed\n"));
  EXPECT_THAT(r.policy_text, HasSubstr("  unused: 3\n"));
  EXPECT_GT(r.candidates, 10);
}

TEST(PolicyTuner, BudgetsOnAccountAlertsToo) {
  const PolicyInputLayout layout(Schema());
  TuningOptions o;
  o.unit = TuningOptions::Unit::kAccounts;
  o.budget_per_day = 6;  // two accounts per reviewed payment: at most three payments a day
  o.grid = 11;
  ASSERT_OK_AND_ASSIGN(TuningResult r,
                       TunePolicy(kPolicy, "p.yaml", "floor-2", layout, ListLibrary{}, History(), o));
  // 80 reviews three a day (six account alerts) but catches nothing; every floor that catches
  // the 75 reviews at least five: the recall cannot rise within the budget, so the fewest alerts.
  EXPECT_EQ(r.after[0].second, 100);
  EXPECT_TRUE(r.within_budget);
}

TEST(PolicyTuner, ABudgetNothingMeetsIsReportedAsMissed) {
  const PolicyInputLayout layout(Schema());
  TuningOptions o;
  o.budget_per_day = 0.5;  // even floor 100 reviews one a day
  o.grid = 11;
  ASSERT_OK_AND_ASSIGN(TuningResult r,
                       TunePolicy(kPolicy, "p.yaml", "floor-2", layout, ListLibrary{}, History(), o));
  EXPECT_FALSE(r.within_budget);
  EXPECT_EQ(r.after[0].second, 100);  // the closest to the budget
}

TEST(PolicyTuner, RefusesWhatCannotBeTuned) {
  const PolicyInputLayout layout(Schema());
  TuningOptions o;
  o.budget_per_day = 5;
  const std::string untunable = "version: v\nthresholds: {review: 0.5, block: 0.9}\nrules: []\n";
  EXPECT_THAT(TunePolicy(untunable, "p.yaml", "v2", layout, ListLibrary{}, History(), o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("declares nothing tunable")));
  TuningHistory unlabelled(1);
  for (int i = 0; i < 3; ++i) {
    Transaction tx;
    tx.id = absl::StrCat("u", i);
    tx.event_time = FromUnixMicros(kBase + i * kDay);
    const double amount = 1;
    unlabelled.Add(tx, {&amount, 1}, std::nan(""));
  }
  EXPECT_THAT(TunePolicy(kPolicy, "p.yaml", "v2", layout, ListLibrary{}, unlabelled, o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no payment labelled")));
  o.budget_per_day = 0;
  EXPECT_THAT(TunePolicy(kPolicy, "p.yaml", "v2", layout, ListLibrary{}, History(), o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("budget")));
  o.budget_per_day = 5;
  const std::string quoted = std::string(kPolicy).replace(std::string(kPolicy).find("100   #"), 3,
                                                          "\"100\"");
  EXPECT_THAT(TunePolicy(quoted, "p.yaml", "v2", layout, ListLibrary{}, History(), o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("plain number")));
}

}  // namespace
}  // namespace vigil::evaluation
