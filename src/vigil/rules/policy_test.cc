#include "vigil/rules/policy.h"

#include <cmath>
#include <tuple>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class PolicyTest : public ::testing::Test {
 protected:
  PolicyTest()
      : layout_(*FeatureSchema::Create("test.v1", {"amount_reporting", "orig_out_count_24h",
                                                   "orig_near_threshold_count_24h"})) {
    library_.lists["fatf_call_for_action"] = {{"KP", "IR", "MM"}, "FATF, February 2025"};
  }

  absl::StatusOr<std::shared_ptr<const Policy>> Parse(const std::string& yaml) {
    return Policy::Parse(yaml, "p.yaml", layout_, library_);
  }

  // Numbers: amount, out count, near-threshold count, score. Strings in PolicyString order.
  EvalInputs Inputs() { return {numbers_, strings_}; }

  PolicyInputLayout layout_;
  ListLibrary library_;
  // ... then screening.max_score, screening.hit_count, screening.by_identifier.
  std::vector<double> numbers_ = {9500, 6, 3, 0.4, 0, 0, 0};
  std::vector<std::string_view> strings_ = {"USD",      "USD",  "US",     "IR",        "BANKUS33",
                                            "BANKIR00", "wire", "online", "consulting", "",
                                            "",         ""};
};

constexpr char kGood[] = R"(version: "2026.1"
thresholds: {review: 0.5, block: 0.9}
constants:
  reporting_threshold: 10000
lists:
  watched_channels: [branch, online]
rules:
  - id: structuring
    when: orig_near_threshold_count_24h >= 3 and amount_reporting < reporting_threshold
    action: review
    severity: 70
    reason: "{orig_near_threshold_count_24h} payments below {reporting_threshold}, this one {amount_reporting}"
  - id: high_risk
    when: bene_country in fatf_call_for_action
    action: block
    reason: "beneficiary in {bene_country}"
  - id: channel_watch
    when: channel in watched_channels and score > 0.9
    action: tag
    mode: shadow
    reason: "{{watched}} channel {channel}"
)";

TEST_F(PolicyTest, LoadsEvaluatesAndRendersReasons) {
  auto policy = Parse(kGood);
  ASSERT_OK(policy);
  const Policy& p = **policy;
  EXPECT_EQ(p.version(), "2026.1");
  EXPECT_EQ(p.content_hash().size(), 64u);
  EXPECT_EQ(p.tag(), "2026.1@" + p.content_hash().substr(0, 12));
  EXPECT_DOUBLE_EQ(p.review_threshold(), 0.5);
  EXPECT_DOUBLE_EQ(p.block_threshold(), 0.9);
  ASSERT_EQ(p.rules().size(), 3u);
  EXPECT_EQ(p.rules()[0].severity, 70);
  EXPECT_EQ(p.rules()[1].severity, 50);  // the default
  EXPECT_EQ(p.rules()[1].action, RuleAction::kBlock);
  EXPECT_EQ(p.rules()[2].mode, RuleMode::kShadow);
  EXPECT_EQ(p.rules()[0].where.line, 8);

  std::vector<uint32_t> fired(p.rules().size());
  ASSERT_EQ(p.Evaluate(Inputs(), absl::MakeSpan(fired)), 2u);
  EXPECT_EQ(fired[0], 0u);
  EXPECT_EQ(fired[1], 1u);
  EXPECT_EQ(p.RenderReason(p.rules()[0], Inputs()), "3 payments below 10000, this one 9500");
  EXPECT_EQ(p.RenderReason(p.rules()[1], Inputs()), "beneficiary in IR");
  EXPECT_EQ(p.RenderReason(p.rules()[2], Inputs()), "{watched} channel online");

  numbers_[3] = 0.95;  // score: now the shadow rule fires too
  numbers_[0] = kNaN;  // a missing amount: the structuring comparison is false
  ASSERT_EQ(p.Evaluate(Inputs(), absl::MakeSpan(fired)), 2u);
  EXPECT_EQ(fired[0], 1u);
  EXPECT_EQ(fired[1], 2u);
  numbers_[1] = 2.125;
  EXPECT_THAT(p.RenderReason(p.rules()[0], Inputs()), HasSubstr("this one missing"));
}

TEST_F(PolicyTest, ContentHashNamesTheBytes) {
  auto a = Parse(kGood);
  auto b = Parse(std::string(kGood) + "# a comment\n");
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_NE((*a)->content_hash(), (*b)->content_hash());
  // SHA-256 of the text, as `sha256sum` prints it.
  auto empty_rules = Parse("version: x\nthresholds: {review: 0, block: 1}\nrules: []\n");
  ASSERT_OK(empty_rules);
  EXPECT_EQ((*empty_rules)->content_hash(),
            "11954847d9c1b20b8f46749de0e7ab64edb10567525543568647f8db2604254d");
}

TEST_F(PolicyTest, ReportsEveryErrorWithLocationCaretAndHint) {
  const std::string yaml = R"(version: "2"
thresholds: {review: 0.9, block: 0.5}
rules:
  - id: a
    when: amount_reporting > 10 and orig_out_cnt_24h >= 3
    action: review
    reason: "x"
  - id: a
    when: amount_reporting > 10
    action: hold
    reason: "{amount_reportin}"
  - id: never
    when: amount_reporting > 100 and amount_reporting < 50
    action: review
    reason: "x"
  - id: number
    whn: amount_reporting
    action: review
    reason: "x"
)";
  auto policy = Parse(yaml);
  ASSERT_THAT(policy.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string message(policy.status().message());
  // The unknown feature, pointed at inside the expression, with the nearest name.
  EXPECT_THAT(message, HasSubstr("p.yaml:5:37: unknown name 'orig_out_cnt_24h'\n"
                                 "  amount_reporting > 10 and orig_out_cnt_24h >= 3\n"
                                 "                            ^\n"
                                 "  hint: did you mean 'orig_out_count_24h'?"));
  EXPECT_THAT(message, HasSubstr("p.yaml:2:22: the review threshold is above the block threshold"));
  EXPECT_THAT(message, HasSubstr("p.yaml:8:9: rule id 'a' is already used on line 4"));
  EXPECT_THAT(message, HasSubstr("p.yaml:10:13: unknown action 'hold'"));
  EXPECT_THAT(message, HasSubstr("unknown name 'amount_reportin' in reason"));
  EXPECT_THAT(message, HasSubstr("did you mean 'amount_reporting'?"));
  EXPECT_THAT(message, HasSubstr("p.yaml:13:11: rule 'never' can never fire: no value of "
                                 "amount_reporting satisfies its comparisons"));
  EXPECT_THAT(message, HasSubstr("p.yaml:17:5: unknown field 'whn' in rule\n"));
  EXPECT_THAT(message, HasSubstr("hint: did you mean 'when'?"));
  EXPECT_THAT(message, HasSubstr("rule: 'when' is missing"));
  EXPECT_THAT(message, HasSubstr("errors in p.yaml"));
}

TEST_F(PolicyTest, RejectsNonBooleanConditionsAndBadFields) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rules:\n  - id: x\n    when: amount_reporting + 1\n    action: review\n    reason: r\n",
       "'when' must be true or false; this is a number"},
      {"rules:\n  - id: x\n    when: 'true'\n    action: review\n    severity: 101\n"
       "    reason: r\n",
       "'severity' is a whole number from 0 to 100"},
      {"rules:\n  - id: x\n    when: 'false'\n    action: review\n    reason: r\n",
       "can never fire: it contains the constant false"},
      {"rules:\n  - id: X Y\n    when: 'true'\n    action: review\n    reason: r\n",
       "rule id 'X Y' may use only"},
      {"rules:\n  - id: x\n    when: 'true'\n    action: review\n    mode: dry\n    reason: r\n",
       "unknown mode 'dry'"},
      {"rules:\n  - id: x\n    when: 'true'\n    action: review\n    reason: 'a {b'\n",
       "'{' in reason is not closed"},
      {"rules: [\n", "not valid YAML"},
  };
  for (const auto& [rules, message] : cases) {
    const std::string yaml =
        absl::StrCat("version: v\nthresholds: {review: 0.5, block: 0.9}\n", rules);
    EXPECT_THAT(Parse(yaml).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << rules;
  }
  EXPECT_THAT(
      Parse("version: v\nrules: []\n").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("policy: 'thresholds' is missing")));
}

TEST_F(PolicyTest, BlockScalarConditionsPointAtTheRightLine) {
  const std::string yaml = R"(version: v
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: multi
    when: |
      amount_reporting > 10 and
        nope > 1
    action: review
    reason: r
)";
  EXPECT_THAT(Parse(yaml).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("p.yaml:7:9: unknown name 'nope'")));
}

TEST_F(PolicyTest, ScreeningThresholdsDefaultAndAreChecked) {
  ASSERT_OK_AND_ASSIGN(auto defaults, Parse(kGood));
  EXPECT_DOUBLE_EQ(defaults->screening_review_threshold(), 0.88);
  EXPECT_DOUBLE_EQ(defaults->screening_block_threshold(), 0.95);
  const std::string head = "version: v\nthresholds: {review: 0.5, block: 0.9}\n";
  ASSERT_OK_AND_ASSIGN(auto set, Parse(head + "screening: {review: 0.8, block: 0.99}\nrules: []\n"));
  EXPECT_DOUBLE_EQ(set->screening_review_threshold(), 0.8);
  EXPECT_DOUBLE_EQ(set->screening_block_threshold(), 0.99);
  ASSERT_OK_AND_ASSIGN(auto review_only, Parse(head + "screening: {review: 0.9}\nrules: []\n"));
  EXPECT_DOUBLE_EQ(review_only->screening_block_threshold(), 0.95);

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"screening: {review: 0.96}\n", "screening review threshold is above the block threshold"},
      {"screening: {block: 1.5}\n", "screening 'block' is a match score"},
      {"screening: {review: 0}\n", "screening 'review' is a match score"},
      {"screening: {revue: 0.9}\n", "revue"},
      {"screening: 0.9\n", "'screening' is a mapping"},
  };
  for (const auto& [section, message] : cases) {
    EXPECT_THAT(Parse(head + section + "rules: []\n").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << section;
  }
}

TEST(PolicyDecisions, RulesAndTheScoreAskForWhatTheDocsSay) {
  PolicyRule rule;
  const std::vector<std::tuple<RuleAction, RuleMode, Action, bool>> cases = {
      {RuleAction::kBlock, RuleMode::kActive, Action::kBlock, true},
      {RuleAction::kReview, RuleMode::kActive, Action::kReview, true},
      {RuleAction::kTag, RuleMode::kActive, Action::kAllow, true},
      {RuleAction::kAllow, RuleMode::kActive, Action::kAllow, false},
      {RuleAction::kBlock, RuleMode::kShadow, Action::kAllow, false},
  };
  for (const auto& [action, mode, decision, counts] : cases) {
    rule.action = action;
    rule.mode = mode;
    EXPECT_EQ(DecisionOf(rule), decision) << static_cast<int>(action);
    EXPECT_EQ(CountsForAccounts(rule), counts) << static_cast<int>(action);
  }
}

TEST_F(PolicyTest, TheScoreDecidesAgainstBothThresholds) {
  ASSERT_OK_AND_ASSIGN(auto p, Parse("version: v\nthresholds: {review: 0.5, block: 0.9}\nrules: []\n"));
  EXPECT_EQ(p->ScoreDecision(0.49), Action::kAllow);
  EXPECT_EQ(p->ScoreDecision(0.5), Action::kReview);
  EXPECT_EQ(p->ScoreDecision(0.9), Action::kBlock);
  EXPECT_EQ(p->ScoreDecision(std::nan("")), Action::kAllow);
}

TEST_F(PolicyTest, AccountAlertsAreOffUnlessSetAndAreChecked) {
  ASSERT_OK_AND_ASSIGN(auto defaults, Parse(kGood));
  EXPECT_FALSE(defaults->account_alerts().enabled());
  const std::string head = "version: v\nthresholds: {review: 0.5, block: 0.9}\n";
  ASSERT_OK_AND_ASSIGN(auto both,
                       Parse(head + "accounts: {alert_score: 0.3, alert_rule_hits: 4}\nrules: []\n"));
  EXPECT_DOUBLE_EQ(both->account_alerts().score, 0.3);
  EXPECT_EQ(both->account_alerts().rule_hits, 4u);
  ASSERT_OK_AND_ASSIGN(auto hits_only, Parse(head + "accounts: {alert_rule_hits: 2}\nrules: []\n"));
  EXPECT_TRUE(std::isnan(hits_only->account_alerts().score));
  EXPECT_TRUE(hits_only->account_alerts().enabled());

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"accounts: {alert_score: 0}\n", "'alert_score' is a model probability"},
      {"accounts: {alert_score: 1.2}\n", "'alert_score' is a model probability"},
      {"accounts: {alert_rule_hits: 2.5}\n", "'alert_rule_hits' is a whole number"},
      {"accounts: {alert_rule_hits: 0}\n", "'alert_rule_hits' is a whole number"},
      {"accounts: {alert_rule_hits: 1531}\n", "1 to 1530"},
      {"accounts: {alert_scor: 0.5}\n", "did you mean 'alert_score'?"},
      {"accounts: 0.5\n", "'accounts' is a mapping"},
  };
  for (const auto& [section, message] : cases) {
    EXPECT_THAT(Parse(head + section + "rules: []\n").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << section;
  }
}

TEST_F(PolicyTest, ConstantsKeepWhereTheirValuesAreWrittenAndTuneRangesAreChecked) {
  const std::string text = R"(version: v
thresholds: {review: 0.5, block: 0.9}
constants:
  floor: 2500
  days:   3.5
tune:
  floor: [1000, 5000]
rules: []
)";
  ASSERT_OK_AND_ASSIGN(auto policy, Parse(text));
  ASSERT_EQ(policy->constants().size(), 2u);
  const PolicyConstant& days = policy->constants()[1];
  EXPECT_EQ(days.name, "days");
  EXPECT_DOUBLE_EQ(days.value, 3.5);
  EXPECT_EQ(days.text, "3.5");
  EXPECT_EQ(days.line, 4);
  EXPECT_EQ(days.column, 10);
  ASSERT_EQ(policy->tunables().size(), 1u);
  EXPECT_EQ(policy->tunables()[0].name, "floor");
  EXPECT_DOUBLE_EQ(policy->tunables()[0].low, 1000);
  EXPECT_DOUBLE_EQ(policy->tunables()[0].high, 5000);

  const std::string head =
      "version: v\nthresholds: {review: 0.5, block: 0.9}\nconstants: {floor: 2500}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tune: {flor: [1, 2]}\n", "did you mean 'floor'?"},
      {"tune: {floor: [5000, 1000]}\n", "low must be below high"},
      {"tune: {floor: [3000, 4000]}\n", "outside its range [3000, 4000]"},
      {"tune: {floor: 3000}\n", "takes a range [low, high]"},
      {"tune: {floor: [a, 4000]}\n", "'low' must be a number"},
      {"tune: [floor]\n", "'tune' is a mapping"},
  };
  for (const auto& [section, message] : cases) {
    EXPECT_THAT(Parse(head + section + "rules: []\n").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << section;
  }
}

TEST_F(PolicyTest, RulesReadScreeningInputsByDottedNames) {
  ASSERT_OK_AND_ASSIGN(auto policy, Parse(R"(version: v
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: near_listed_person
    when: screening.max_score >= 0.8 and screening.entry_type == 'individual' and screening.hit_count >= 1
    action: review
    reason: "{screening.party} near {screening.list} at {screening.max_score}"
)"));
  std::vector<uint32_t> fired(1);
  EXPECT_EQ(policy->Evaluate(Inputs(), absl::MakeSpan(fired)), 0u);
  numbers_[layout_.screening_slot(ScreeningNumber::kMaxScore)] = 0.91;
  numbers_[layout_.screening_slot(ScreeningNumber::kHitCount)] = 2;
  strings_[static_cast<size_t>(PolicyString::kScreeningEntryType)] = "individual";
  strings_[static_cast<size_t>(PolicyString::kScreeningList)] = "OFAC SDN";
  strings_[static_cast<size_t>(PolicyString::kScreeningParty)] = "beneficiary";
  ASSERT_EQ(policy->Evaluate(Inputs(), absl::MakeSpan(fired)), 1u);
  EXPECT_EQ(policy->RenderReason(policy->rules()[0], Inputs()),
            "beneficiary near OFAC SDN at 0.91");
  // A dotted name is one name: an unknown one is reported whole.
  EXPECT_THAT(Parse("version: v\nthresholds: {review: 0.5, block: 0.9}\nrules:\n  - id: x\n"
                    "    when: screening.max > 1\n    action: review\n    reason: r\n")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown name 'screening.max'")));
}

}  // namespace
}  // namespace vigil
