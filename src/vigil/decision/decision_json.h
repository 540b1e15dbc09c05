// DecisionToJson: a Decision as the JSON the API answers with (docs/policy.md, "Decisions"):
//
//   {"transaction_id":"tx-1","trace_id":"0192...","action":"REVIEW","score":0.812345,
//    "reasons":[{"kind":"rule","code":"structuring.below_threshold","text":"...","shadow":false},
//               {"kind":"model","code":"orig_out_count_24h","text":"...","contribution":0.41}],
//    "policy_version":"...","model_version":"...","feature_schema_version":"...",
//    "degraded":false,"latency_us":{"rules":3,"model":12}}
//
// Compact, members in this order; "score" is null when no model scored, "degraded_reason" is
// present only when degraded. The server's decisions also carry "traceparent" (after
// "trace_id"), "model_role", "model_backend" ("cpu", "gpu" or "cpu-fallback") and, with a
// shadow model, "shadow":{"model_version","score"} (after "model_version"); each is omitted when
// empty. Written by hand (no DOM) for the request path.
//
// Thread safety: pure functions.
#ifndef VIGIL_DECISION_DECISION_JSON_H_
#define VIGIL_DECISION_DECISION_JSON_H_

#include <string>

#include "vigil/core/decision.h"

namespace vigil {

std::string DecisionToJson(const Decision& d);
// Appends the same text to *out.
void AppendDecisionJson(const Decision& d, std::string* out);

}  // namespace vigil

#endif  // VIGIL_DECISION_DECISION_JSON_H_
