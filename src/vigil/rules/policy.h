// Policy: one version of a compliance policy (docs/policy.md): model-score thresholds, named
// constants and lists, and rules, loaded from YAML, checked completely at load and compiled.
//
// Loading reports every problem at once, each as file:line:column with the source line, a
// caret and, where it helps, a hint: unknown names (with the nearest known one), type errors,
// bad fields, duplicate ids, and rules that can never fire. A policy that loads evaluates with
// no allocation and no error path.
//
// Thread safety: immutable after Parse; share as std::shared_ptr<const Policy>.
#ifndef VIGIL_RULES_POLICY_H_
#define VIGIL_RULES_POLICY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/account_standing.h"
#include "vigil/core/decision.h"
#include "vigil/core/feature_schema.h"
#include "vigil/rules/expression.h"
#include "vigil/rules/policy_inputs.h"

namespace vigil {

// What a fired rule asks for. kTag records the hit and changes nothing; kAllow records an
// explicit pass (it never lowers what another rule or the score asks for).
enum class RuleAction : uint8_t { kAllow, kTag, kReview, kBlock };
std::string_view RuleActionName(RuleAction action);  // "allow", "tag", "review", "block"

// Active rules decide; shadow rules are evaluated and recorded but do not change the action,
// so a new rule can be watched on live traffic before it is promoted.
enum class RuleMode : uint8_t { kActive, kShadow };

struct PolicyRule {
  std::string id;
  std::string when_text;  // as written
  Expression when;
  RuleAction action = RuleAction::kReview;
  int severity = 0;  // 0..100, for ordering reasons and alerts
  RuleMode mode = RuleMode::kActive;
  std::string description;  // why the rule exists (the red flag and its source)
  SourceLocation where;     // of the rule's "id"
  // The reason template, split: literal text, and number or string inputs cited as {name}.
  struct ReasonPart {
    enum class Kind : uint8_t { kText, kNumber, kString } kind = Kind::kText;
    std::string text;   // kText
    uint32_t slot = 0;  // kNumber / kString
  };
  std::vector<ReasonPart> reason;
  std::string reason_text;  // the template as written
};

// Named lists every policy may use without defining them (e.g. FATF's high-risk
// jurisdictions), each with the source it was taken from.
struct ListLibrary {
  struct List {
    std::vector<std::string> values;
    std::string source;
  };
  std::map<std::string, List> lists;

  // Loads every *.yaml in "dir": each has `name`, `source` and `values` (strings).
  static absl::StatusOr<ListLibrary> LoadDirectory(const std::string& dir);
};

// What a fired rule asks of the payment: REVIEW or BLOCK for an active review or block rule,
// ALLOW for tag and allow rules and for every shadow rule (they decide nothing).
Action DecisionOf(const PolicyRule& rule);
// Whether a fired rule counts as a hit for its payment's accounts (docs/policy.md, Account
// alerts): active, and not an `allow` rule (an exemption).
bool CountsForAccounts(const PolicyRule& rule);

// A named number of the policy's `constants:` section, and where its value is written (for
// tools that rewrite one value and leave the rest of the text as it is: `vigil policy tune`).
struct PolicyConstant {
  std::string name;
  double value = 0;
  int line = 0, column = 0;  // 0-based, of the value's first character
  std::string text;          // the value as written
};

// A constant the policy declares tunable (its `tune:` section): the range `vigil policy tune`
// may search, both ends included.
struct TunableConstant {
  std::string name;
  double low = 0, high = 0;
};

// The largest accounts.alert_rule_hits: what an account's window can count (AccountRisk keeps
// up to 255 hits in each of its 6 buckets).
inline constexpr int kMaxAccountRuleHits = 1530;

class Policy {
 public:
  // "yaml" is the policy's text and "file" its name in messages. The policy's expressions may
  // use the names of "layout" (features, transaction fields, the model score), the lists of
  // "library", and the policy's own constants and lists.
  static absl::StatusOr<std::shared_ptr<const Policy>> Parse(std::string_view yaml,
                                                             std::string_view file,
                                                             const PolicyInputLayout& layout,
                                                             const ListLibrary& library);

  const std::string& version() const { return version_; }
  // SHA-256 of the policy text, lower-case hex: names exactly what was loaded.
  const std::string& content_hash() const { return content_hash_; }
  // "version@" and the hash's first 12 hex digits: what every decision records.
  const std::string& tag() const { return tag_; }
  // Model probability at or above which the score alone asks for review / block.
  double review_threshold() const { return review_threshold_; }
  double block_threshold() const { return block_threshold_; }
  // What the model score alone asks for: BLOCK at or above block, REVIEW at or above review,
  // else (and for NaN, no score) ALLOW.
  Action ScoreDecision(double score) const {
    return score >= block_threshold_    ? Action::kBlock
           : score >= review_threshold_ ? Action::kReview
                                        : Action::kAllow;
  }
  // Watchlist match score at or above which a screening hit alone asks for review / block
  // (the policy's `screening:` section; 0.88 and 0.95 when it does not say).
  double screening_review_threshold() const { return screening_review_threshold_; }
  double screening_block_threshold() const { return screening_block_threshold_; }
  const std::vector<PolicyRule>& rules() const { return rules_; }
  // When an account alerts (the policy's `accounts:` section; both triggers off without one).
  const AccountAlertThresholds& account_alerts() const { return account_alerts_; }
  // The `constants:` section in the order written, and the `tune:` section's ranges.
  const std::vector<PolicyConstant>& constants() const { return constants_; }
  const std::vector<TunableConstant>& tunables() const { return tunables_; }

  // Evaluates every rule (active and shadow) on "inputs", writing the indices of those that
  // fire, in policy order, to "fired"; returns how many. No allocation.
  // REQUIRES: fired.size() >= rules().size(); inputs laid out by the layout given to Parse.
  size_t Evaluate(const EvalInputs& inputs, absl::Span<uint32_t> fired) const;

  // The rule's reason with its {name}s filled in from "inputs" (numbers with up to 2
  // decimals, "missing" for NaN).
  std::string RenderReason(const PolicyRule& rule, const EvalInputs& inputs) const;

 private:
  friend class PolicyParser;
  Policy() = default;

  std::string version_;
  std::string content_hash_;
  std::string tag_;
  double review_threshold_ = 1.0;
  double block_threshold_ = 1.0;
  double screening_review_threshold_ = 0.88;
  double screening_block_threshold_ = 0.95;
  AccountAlertThresholds account_alerts_;
  std::vector<PolicyConstant> constants_;
  std::vector<TunableConstant> tunables_;
  std::vector<PolicyRule> rules_;
};

}  // namespace vigil

#endif  // VIGIL_RULES_POLICY_H_
