#include "vigil/decision/decision_json.h"

#include <chrono>
#include <cmath>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace vigil {
namespace {

Decision Example() {
  Decision d;
  d.transaction_id = "tx-\"1\"";
  d.action = Action::kReview;
  d.score = 0.8123456;
  d.reasons = {
      {Reason::Kind::kRule, "structuring", "3 payments below 10000\n", 0, false},
      {Reason::Kind::kRule, "watch", "shadow hit", 0, true},
      {Reason::Kind::kModel, "score", "model score 0.8123 >= review threshold 0.5", 0, false},
      {Reason::Kind::kModel, "orig_out_count_24h", "orig_out_count_24h=14 (+0.4100)", 0.41, false}};
  d.policy_version = "p1@abc";
  d.model_version = "m@def";
  d.feature_schema_version = "vigil.features.v1";
  d.timings = {{"rules", std::chrono::microseconds(3)}, {"model", std::chrono::microseconds(12)}};
  return d;
}

// Parsed back by an independent JSON parser (nlohmann), field by field.
TEST(DecisionJson, IsValidJsonWithEveryField) {
  const Decision d = Example();
  const nlohmann::json j = nlohmann::json::parse(DecisionToJson(d));
  EXPECT_EQ(j["transaction_id"], "tx-\"1\"");
  EXPECT_EQ(j["trace_id"], d.trace_id.ToString());
  EXPECT_EQ(j["action"], "REVIEW");
  EXPECT_DOUBLE_EQ(j["score"].get<double>(), 0.812346);
  ASSERT_EQ(j["reasons"].size(), 4u);
  EXPECT_EQ(j["reasons"][0]["kind"], "rule");
  EXPECT_EQ(j["reasons"][0]["text"], "3 payments below 10000\n");
  EXPECT_EQ(j["reasons"][0]["shadow"], false);
  EXPECT_EQ(j["reasons"][1]["shadow"], true);
  EXPECT_FALSE(j["reasons"][2].contains("contribution"));
  EXPECT_DOUBLE_EQ(j["reasons"][3]["contribution"].get<double>(), 0.41);
  EXPECT_EQ(j["policy_version"], "p1@abc");
  EXPECT_EQ(j["model_version"], "m@def");
  EXPECT_FALSE(j.contains("model_backend"));  // no backend named: omitted
  EXPECT_EQ(nlohmann::json::parse(DecisionToJson([] {
              Decision x = Example();
              x.model_backend = "cpu-fallback";
              return x;
            }()))["model_backend"],
            "cpu-fallback");
  EXPECT_EQ(j["feature_schema_version"], "vigil.features.v1");
  EXPECT_EQ(j["degraded"], false);
  EXPECT_FALSE(j.contains("degraded_reason"));
  EXPECT_EQ(j["latency_us"]["rules"], 3);
  EXPECT_EQ(j["latency_us"]["model"], 12);
}

TEST(DecisionJson, ScreeningResultsAndHitsArePrintedWhenScreeningRan) {
  Decision d = Example();
  EXPECT_FALSE(nlohmann::json::parse(DecisionToJson(d)).contains("screening"));
  d.screening_score = 0.9712;
  d.screening_lists = {"OFAC SDN@sha256:0f", "PEP@sha256:1e"};
  d.reasons.push_back({Reason::Kind::kScreening, "OFAC SDN:306", "beneficiary matches", 0.9712,
                       false});
  const nlohmann::json j = nlohmann::json::parse(DecisionToJson(d));
  EXPECT_DOUBLE_EQ(j["screening"]["max_score"].get<double>(), 0.9712);
  EXPECT_EQ(j["screening"]["lists"],
            nlohmann::json::parse(R"(["OFAC SDN@sha256:0f","PEP@sha256:1e"])"));
  const nlohmann::json& hit = j["reasons"].back();
  EXPECT_EQ(hit["kind"], "screening");
  EXPECT_EQ(hit["code"], "OFAC SDN:306");
  EXPECT_DOUBLE_EQ(hit["score"].get<double>(), 0.9712);
  EXPECT_FALSE(hit.contains("shadow"));
}

TEST(DecisionJson, AccountStandingsArePrintedWhenKept) {
  Decision d = Example();
  EXPECT_FALSE(nlohmann::json::parse(DecisionToJson(d)).contains("accounts"));
  d.accounts_scored = true;
  d.originator_account = {0.734, 2, true, AccountAlertCause::kScore};
  d.beneficiary_account = {std::nan(""), 0, false, AccountAlertCause::kNone};
  const nlohmann::json j = nlohmann::json::parse(DecisionToJson(d));
  const nlohmann::json& o = j["accounts"]["originator"];
  EXPECT_DOUBLE_EQ(o["score"].get<double>(), 0.734);
  EXPECT_EQ(o["rule_hits"], 2);
  EXPECT_EQ(o["alert"], true);
  EXPECT_EQ(o["alert_cause"], "score");
  const nlohmann::json& b = j["accounts"]["beneficiary"];
  EXPECT_TRUE(b["score"].is_null());
  EXPECT_EQ(b["alert"], false);
  EXPECT_FALSE(b.contains("alert_cause"));
  d.originator_account.cause = AccountAlertCause::kRuleHits;
  EXPECT_EQ(nlohmann::json::parse(DecisionToJson(d))["accounts"]["originator"]["alert_cause"],
            "rule_hits");
}

TEST(DecisionJson, NoScoreIsNullAndDegradedSaysWhy) {
  Decision d = Example();
  d.score = std::nan("");
  d.degraded = true;
  d.degraded_reason = "rules only: the model's circuit breaker is open";
  d.reasons.clear();
  d.timings.clear();
  const nlohmann::json j = nlohmann::json::parse(DecisionToJson(d));
  EXPECT_TRUE(j["score"].is_null());
  EXPECT_EQ(j["degraded"], true);
  EXPECT_EQ(j["degraded_reason"], "rules only: the model's circuit breaker is open");
  EXPECT_TRUE(j["reasons"].empty());
  EXPECT_TRUE(j["latency_us"].empty());
}

}  // namespace
}  // namespace vigil
