#include "vigil/evaluation/backtest.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace vigil::evaluation {
namespace {

Transaction Tx(int64_t day, std::optional<Label> label) {
  Transaction tx;
  tx.event_time = FromUnixMicros(day * 86'400'000'000 + 3'600'000'000);
  tx.label = std::move(label);
  return tx;
}

Decision D(Action action, std::vector<std::string> rules, bool shadow = false) {
  Decision d;
  d.action = action;
  for (std::string& r : rules) d.reasons.push_back({Reason::Kind::kRule, r, "", 0, shadow});
  return d;
}

TEST(Backtest, ConfusionRatesTypologiesDaysAndRules) {
  Backtest b;
  const Label fan_in{true, "FAN-IN"}, cycle{true, "CYCLE"}, normal{false, ""};
  b.Add(Tx(0, fan_in), D(Action::kReview, {"fan_in"}));         // TP
  b.Add(Tx(0, fan_in), D(Action::kAllow, {}));                  // FN
  b.Add(Tx(0, cycle), D(Action::kBlock, {"cycle", "fan_in"}));  // TP
  b.Add(Tx(1, normal), D(Action::kReview, {"fan_in"}));         // FP
  b.Add(Tx(1, normal), D(Action::kAllow, {"watch"}, true));     // TN, shadow hit
  b.Add(Tx(2, normal), D(Action::kAllow, {}));                  // TN
  b.Add(Tx(2, std::nullopt), D(Action::kReview, {"fan_in"}));   // unlabelled alert
  const BacktestSummary s = b.Summary();
  EXPECT_EQ(s.decisions, 7);
  EXPECT_EQ(s.labelled, 6);
  EXPECT_EQ(s.true_positives, 2);
  EXPECT_EQ(s.false_positives, 1);
  EXPECT_EQ(s.false_negatives, 1);
  EXPECT_EQ(s.true_negatives, 2);
  EXPECT_DOUBLE_EQ(s.precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(s.f1, 2.0 / 3);
  EXPECT_EQ(s.by_typology.at("FAN-IN").positives, 2);
  EXPECT_DOUBLE_EQ(s.by_typology.at("FAN-IN").recall, 0.5);
  EXPECT_DOUBLE_EQ(s.by_typology.at("CYCLE").recall, 1.0);
  EXPECT_EQ(s.days, 3);
  EXPECT_DOUBLE_EQ(s.alerts_per_day, 4.0 / 3);  // days 0, 1, 2: 2 + 1 + 1 alerts
  EXPECT_EQ(s.max_alerts_in_a_day, 2);
  EXPECT_EQ(s.rules.at("fan_in").hits, 4);
  EXPECT_EQ(s.rules.at("fan_in").on_positives, 2);
  EXPECT_DOUBLE_EQ(s.rules.at("fan_in").precision, 0.5);
  EXPECT_TRUE(s.rules.at("watch").shadow);
  EXPECT_EQ(s.by_action_and_label.at("REVIEW").at("unlabelled"), 1);
  EXPECT_EQ(s.by_action_and_label.at("ALLOW").at("normal"), 2);

  const nlohmann::json j = BacktestToJson(s);
  EXPECT_EQ(j["confusion"]["true_positives"], 2);
  EXPECT_EQ(j["by_typology"]["FAN-IN"]["alerted"], 1);
  const std::string text = BacktestToText(s);
  EXPECT_THAT(text, ::testing::HasSubstr("precision 0.6667, recall 0.6667, F1 0.6667"));
  EXPECT_THAT(text, ::testing::HasSubstr("(shadow)"));
}

TEST(Backtest, EmptyHasNoRatesAndNoDivisionByZero) {
  const BacktestSummary s = Backtest().Summary();
  EXPECT_EQ(s.decisions, 0);
  EXPECT_EQ(s.precision, 0);
  EXPECT_EQ(s.alerts_per_day, 0);
}

}  // namespace
}  // namespace vigil::evaluation

namespace vigil::evaluation {
namespace {

Transaction Between(const char* from, const char* to, std::optional<Label> label) {
  Transaction tx = Tx(0, std::move(label));
  tx.originator.bank_id = tx.beneficiary.bank_id = "B";
  tx.originator.account_id = from;
  tx.beneficiary.account_id = to;
  return tx;
}

Decision Scored(Action action, double score, bool originator_alert) {
  Decision d;
  d.action = action;
  d.score = score;
  d.accounts_scored = true;
  if (originator_alert) {
    d.originator_account.alert = true;
    d.originator_account.cause = AccountAlertCause::kScore;
  }
  return d;
}

// Worked by hand: accounts A and B launder (payment 1); E's alert and F's payment alert are
// false positives; the unlabelled payment's accounts do not count.
TEST(Backtest, AccountFiguresForAccountAlertsPaymentAlertsAndRanking) {
  Backtest b;
  const Label laundering{true, ""}, normal{false, ""};
  b.Add(Between("A", "B", laundering), Scored(Action::kReview, 0.5, true));
  b.Add(Between("C", "D", normal), Scored(Action::kAllow, 0.2, false));
  b.Add(Between("E", "F", normal), Scored(Action::kReview, 0.6, true));
  b.Add(Between("G", "H", normal), Scored(Action::kAllow, 0.1, false));
  b.Add(Between("X", "Y", std::nullopt), Scored(Action::kBlock, 0.99, true));
  const BacktestSummary::Accounts a = b.Summary().accounts;
  EXPECT_EQ(a.accounts, 8);
  EXPECT_EQ(a.laundering, 2);
  EXPECT_EQ(a.alerts, 2);
  EXPECT_DOUBLE_EQ(a.alerts_per_day, 2.0);
  EXPECT_EQ(a.alerted, 2);
  EXPECT_EQ(a.alerted_laundering, 1);
  EXPECT_DOUBLE_EQ(a.recall, 0.5);
  EXPECT_DOUBLE_EQ(a.precision, 0.5);
  EXPECT_DOUBLE_EQ(a.false_positive_rate, 1.0 / 6);
  EXPECT_EQ(a.payment_alerted, 4);
  EXPECT_DOUBLE_EQ(a.payment_recall, 1.0);
  EXPECT_DOUBLE_EQ(a.payment_precision, 0.5);
  EXPECT_DOUBLE_EQ(a.payment_false_positive_rate, 2.0 / 6);
  // Ranked by highest score: E, F (0.6, normal), then A, B (0.5, laundering): AP 0.5.
  ASSERT_TRUE(a.scored);
  EXPECT_DOUBLE_EQ(a.pr_auc, 0.5);
  EXPECT_LE(a.pr_auc_low, a.pr_auc);
  EXPECT_GE(a.pr_auc_high, a.pr_auc);

  const nlohmann::json j = BacktestToJson(b.Summary());
  EXPECT_EQ(j["accounts"]["account_alerts"]["accounts_alerted"], 2);
  EXPECT_DOUBLE_EQ(j["accounts"]["payment_alerts"]["recall"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["accounts"]["pr_auc"]["estimate"].get<double>(), 0.5);
  EXPECT_THAT(BacktestToText(b.Summary()),
              ::testing::HasSubstr("account alerts  2 raised (2.0/day) on 2 accounts: recall "
                                   "0.5000, precision 0.5000, FPR 0.1667"));
}

TEST(Backtest, RulesOnlyDecisionsHaveNoAccountRanking) {
  Backtest b;
  Decision d;
  d.action = Action::kReview;
  b.Add(Between("A", "B", Label{true, ""}), d);
  const BacktestSummary::Accounts a = b.Summary().accounts;
  EXPECT_EQ(a.accounts, 2);
  EXPECT_FALSE(a.scored);
  EXPECT_FALSE(BacktestToJson(b.Summary())["accounts"].contains("pr_auc"));
}

}  // namespace
}  // namespace vigil::evaluation
