#include "vigil/engine/account_standings.h"

#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

constexpr int64_t kBase = 1'661'990'400'000'000;  // 2022-09-01T00:00:00Z
constexpr int64_t kMinute = 60'000'000;

std::shared_ptr<const Policy> ParsePolicy(const std::string& accounts) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = Policy::Parse(absl::StrCat(R"(version: "accounts"
thresholds: {review: 0.5, block: 0.9}
)", accounts, R"(rules:
  - id: big
    when: amount_reporting > 1000
    action: review
    reason: "big"
  - id: trusted
    when: amount_reporting > 5000
    action: allow
    reason: "trusted"
  - id: watch
    when: amount_reporting > 2000
    action: review
    mode: shadow
    reason: "watch"
)"),
                              "p.yaml", layout, ListLibrary{});
  EXPECT_TRUE(policy.ok()) << policy.status();
  return *policy;
}

Transaction Payment(const std::string& id, int64_t t, const std::string& from,
                    const std::string& to) {
  Transaction tx;
  tx.id = id;
  tx.event_time = FromUnixMicros(t);
  tx.originator.bank_id = "B";
  tx.originator.account_id = from;
  tx.beneficiary.bank_id = "B";
  tx.beneficiary.account_id = to;
  tx.amount = Money(10000, 2, *Currency::FromCode("USD"));
  return tx;
}

Decision WithRules(std::initializer_list<std::pair<const char*, bool>> rules, double score) {
  Decision d;
  d.score = score;
  for (const auto& [code, shadow] : rules) {
    d.reasons.push_back({Reason::Kind::kRule, code, "", 0, shadow});
  }
  return d;
}

TEST(AccountStandings, ActiveReviewAndTagRulesCountExemptionsAndShadowsDoNot) {
  const auto policy = ParsePolicy("");
  EXPECT_TRUE(ActiveRuleFired(WithRules({{"big", false}}, 0.1), *policy));
  EXPECT_FALSE(ActiveRuleFired(WithRules({{"watch", true}}, 0.1), *policy));
  EXPECT_FALSE(ActiveRuleFired(WithRules({{"trusted", false}}, 0.1), *policy));
  EXPECT_TRUE(ActiveRuleFired(WithRules({{"trusted", false}, {"big", false}}, 0.1), *policy));
  EXPECT_TRUE(ActiveRuleFired(WithRules({{"gone", false}}, 0.1), *policy));  // swapped out
  Decision model_only = WithRules({}, 0.99);
  model_only.reasons.push_back({Reason::Kind::kModel, "score", "", 0, false});
  EXPECT_FALSE(ActiveRuleFired(model_only, *policy));
}

TEST(AccountStandings, FillTheDecisionAndAlertUnderThePolicysThresholds) {
  const auto policy = ParsePolicy("accounts: {alert_score: 0.6, alert_rule_hits: 2}\n");
  const FxRates fx = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "t");
  FeatureExtractor features(fx, FeatureConfig{});
  std::vector<double> row(FeatureExtractor::Schema()->size());

  const Transaction p1 = Payment("p1", kBase, "A", "B");
  ASSERT_OK(features.Process(p1, absl::MakeSpan(row)));
  Decision d1 = WithRules({{"big", false}}, 0.2);
  RecordAccountStandings(features, *policy, p1, d1);
  EXPECT_TRUE(d1.accounts_scored);
  EXPECT_NEAR(d1.originator_account.score, 0.2, 1e-4);
  EXPECT_EQ(d1.originator_account.rule_hits, 1u);
  EXPECT_FALSE(d1.originator_account.alert);
  EXPECT_EQ(d1.beneficiary_account.rule_hits, 1u);

  // A's second rule hit reaches alert_rule_hits; C is new and has one.
  const Transaction p2 = Payment("p2", kBase + kMinute, "A", "C");
  ASSERT_OK(features.Process(p2, absl::MakeSpan(row)));
  Decision d2 = WithRules({{"big", false}}, 0.3);
  RecordAccountStandings(features, *policy, p2, d2);
  EXPECT_TRUE(d2.originator_account.alert);
  EXPECT_EQ(d2.originator_account.cause, AccountAlertCause::kRuleHits);
  EXPECT_FALSE(d2.beneficiary_account.alert);

  // A rules-only decision (no score) on B: B's score stays what the model said before.
  const Transaction p3 = Payment("p3", kBase + 2 * kMinute, "B", "D");
  ASSERT_OK(features.Process(p3, absl::MakeSpan(row)));
  Decision d3 = WithRules({{"trusted", false}}, std::nan(""));
  RecordAccountStandings(features, *policy, p3, d3);
  EXPECT_NEAR(d3.originator_account.score, 0.2, 1e-4);
  EXPECT_EQ(d3.originator_account.rule_hits, 1u) << "an allow rule is no hit";
  EXPECT_TRUE(std::isnan(d3.beneficiary_account.score));

  // D scores over alert_score.
  const Transaction p4 = Payment("p4", kBase + 3 * kMinute, "E", "D");
  ASSERT_OK(features.Process(p4, absl::MakeSpan(row)));
  Decision d4 = WithRules({}, 0.75);
  RecordAccountStandings(features, *policy, p4, d4);
  EXPECT_TRUE(d4.beneficiary_account.alert);
  EXPECT_EQ(d4.beneficiary_account.cause, AccountAlertCause::kScore);
  EXPECT_TRUE(d4.originator_account.alert);
}

TEST(AccountStandings, APolicyWithoutAccountsNeverAlertsButStillScores) {
  const auto policy = ParsePolicy("");
  const FxRates fx = *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\n", "t");
  FeatureExtractor features(fx, FeatureConfig{});
  std::vector<double> row(FeatureExtractor::Schema()->size());
  for (int i = 0; i < 10; ++i) {
    const Transaction p = Payment(absl::StrCat("p", i), kBase + i * kMinute, "A", "B");
    ASSERT_OK(features.Process(p, absl::MakeSpan(row)));
    Decision d = WithRules({{"big", false}}, 0.99);
    RecordAccountStandings(features, *policy, p, d);
    EXPECT_FALSE(d.originator_account.alert);
    EXPECT_EQ(d.originator_account.rule_hits, static_cast<uint32_t>(i + 1));
  }
}

}  // namespace
}  // namespace vigil
