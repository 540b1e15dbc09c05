// Decision: vigil's answer for one transaction. The type lives in core; the decision module fills
// it (rules, model, screening), the audit module records it, the server serializes it.
//
// Thread safety: plain value type.
#ifndef VIGIL_CORE_DECISION_H_
#define VIGIL_CORE_DECISION_H_

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "vigil/common/ids.h"
#include "vigil/core/account_standing.h"

namespace vigil {

enum class Action : uint8_t { kAllow = 0, kReview = 1, kBlock = 2 };

absl::string_view ActionName(Action a);  // "ALLOW", "REVIEW", "BLOCK"

// Why the decision is what it is: a fired rule, a model reason code or a watchlist hit.
struct Reason {
  enum class Kind : uint8_t { kRule, kModel, kScreening };
  Kind kind = Kind::kRule;
  std::string code;         // rule id, feature name, or "<list>:<entry id>" of a watchlist hit
  std::string text;         // rendered for analysts
  double contribution = 0;  // SHAP value for model reasons, match score for screening; 0 for rules
  bool shadow = false;      // a shadow rule's hit: recorded, did not decide
};

// Time spent in one pipeline stage, for the per-stage latency breakdown.
struct StageTiming {
  std::string stage;  // "ingest", "features", "rules", "model", "audit", ...
  std::chrono::microseconds elapsed{0};
};

struct Decision {
  std::string transaction_id;
  Uuid trace_id;
  Action action = Action::kAllow;
  double score = std::nan("");  // model probability in [0, 1]; NaN when no model ran
  std::vector<Reason> reasons;
  std::string feature_schema_version;
  std::string policy_version;
  std::string model_version;
  // Which deployed model decided: "champion", "challenger" (a canary's share of the traffic),
  // or "" outside a deployment (replay, rules only).
  std::string model_role;
  // Which backend scored it: "cpu", "gpu", or "cpu-fallback" (the GPU failed or ran late and the
  // CPU scored instead); "" when no model scored.
  std::string model_backend;
  // A shadow model scored alongside without deciding; empty version when none.
  std::string shadow_model_version;
  double shadow_score = std::nan("");
  std::string traceparent;  // W3C trace context of the request, vigil's span; "" when none
  // Watchlist screening: the best hit's score (0 when nothing was found, NaN when screening
  // did not run) and the lists screened against, "<list name>@<version>" each. The hits
  // themselves are reasons of kind kScreening.
  double screening_score = std::nan("");
  std::vector<std::string> screening_lists;
  bool degraded = false;        // true when a fallback (e.g. rules-only) decided
  std::string degraded_reason;  // why, when degraded
  // Both parties' accounts after this payment (core/account_standing.h), when the pipeline
  // keeps account scores ("accounts_scored": vigil serve and vigil replay with a policy do).
  bool accounts_scored = false;
  AccountStanding originator_account;
  AccountStanding beneficiary_account;
  std::vector<StageTiming> timings;
};

}  // namespace vigil

#endif  // VIGIL_CORE_DECISION_H_
