#include "vigil/engine/backtest.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace vigil {
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
}  // namespace vigil
