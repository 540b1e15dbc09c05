#include "vigil/decision/decision_json.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/json_text.h"

namespace vigil {
namespace {

std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

const char* KindName(Reason::Kind k) {
  switch (k) {
    case Reason::Kind::kRule:
      return "rule";
    case Reason::Kind::kModel:
      return "model";
    case Reason::Kind::kScreening:
      return "screening";
  }
  return "?";
}

void Key(const char* key, std::string* out) {
  out->push_back('"');
  out->append(key);
  out->append("\":");
}

// A probability with 6 decimals, or null when no model scored (NaN).
void AppendScore(double score, std::string* out) {
  if (std::isnan(score)) {
    out->append("null");
  } else {
    absl::StrAppendFormat(out, "%.6f", score);
  }
}

// "name":{"score":0.7,"rule_hits":1,"alert":true,"alert_cause":"score"}; "alert_cause" only
// with an alert.
void AppendStanding(const char* name, const AccountStanding& s, std::string* out) {
  Key(name, out);
  out->append("{\"score\":");
  AppendScore(s.score, out);
  absl::StrAppend(out, ",\"rule_hits\":", s.rule_hits, ",\"alert\":", s.alert ? "true" : "false");
  if (s.alert) {
    out->append(",\"alert_cause\":");
    AppendJsonString(AccountAlertCauseName(s.cause), out);
  }
  out->push_back('}');
}

}  // namespace

void AppendDecisionJson(const Decision& d, std::string* out) {
  out->append("{");
  Key("transaction_id", out);
  AppendJsonString(d.transaction_id, out);
  out->push_back(',');
  Key("trace_id", out);
  AppendJsonString(d.trace_id.ToString(), out);
  out->push_back(',');
  if (!d.traceparent.empty()) {
    Key("traceparent", out);
    AppendJsonString(d.traceparent, out);
    out->push_back(',');
  }
  Key("action", out);
  AppendJsonString(View(ActionName(d.action)), out);
  out->push_back(',');
  Key("score", out);
  AppendScore(d.score, out);
  out->push_back(',');
  Key("reasons", out);
  out->push_back('[');
  for (size_t i = 0; i < d.reasons.size(); ++i) {
    const Reason& r = d.reasons[i];
    if (i > 0) out->push_back(',');
    out->push_back('{');
    Key("kind", out);
    AppendJsonString(KindName(r.kind), out);
    out->push_back(',');
    Key("code", out);
    AppendJsonString(r.code, out);
    out->push_back(',');
    Key("text", out);
    AppendJsonString(r.text, out);
    if (r.kind == Reason::Kind::kRule) {
      out->append(r.shadow ? ",\"shadow\":true" : ",\"shadow\":false");
    } else if (r.kind == Reason::Kind::kScreening) {
      // A hit an analyst cleared for the party: recorded, counted for nothing.
      if (r.shadow) out->append(",\"shadow\":true");
      out->push_back(',');
      Key("score", out);
      absl::StrAppendFormat(out, "%.4f", r.contribution);
    } else if (r.kind == Reason::Kind::kModel && r.code != "score") {
      out->push_back(',');
      Key("contribution", out);
      absl::StrAppendFormat(out, "%.6g", r.contribution);
    }
    out->push_back('}');
  }
  out->append("],");
  Key("policy_version", out);
  AppendJsonString(d.policy_version, out);
  out->push_back(',');
  Key("model_version", out);
  AppendJsonString(d.model_version, out);
  out->push_back(',');
  if (!d.model_role.empty()) {
    Key("model_role", out);
    AppendJsonString(d.model_role, out);
    out->push_back(',');
  }
  if (!d.model_backend.empty()) {
    Key("model_backend", out);
    AppendJsonString(d.model_backend, out);
    out->push_back(',');
  }
  if (!d.shadow_model_version.empty()) {
    Key("shadow", out);
    out->append("{\"model_version\":");
    AppendJsonString(d.shadow_model_version, out);
    out->append(",\"score\":");
    AppendScore(d.shadow_score, out);
    out->append("},");
  }
  if (!std::isnan(d.screening_score)) {
    Key("screening", out);
    out->append("{\"max_score\":");
    absl::StrAppendFormat(out, "%.4f", d.screening_score);
    out->append(",\"lists\":[");
    for (size_t i = 0; i < d.screening_lists.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendJsonString(d.screening_lists[i], out);
    }
    out->append("]},");
  }
  if (d.accounts_scored) {
    Key("accounts", out);
    out->push_back('{');
    AppendStanding("originator", d.originator_account, out);
    out->push_back(',');
    AppendStanding("beneficiary", d.beneficiary_account, out);
    out->append("},");
  }
  Key("feature_schema_version", out);
  AppendJsonString(d.feature_schema_version, out);
  out->push_back(',');
  Key("degraded", out);
  out->append(d.degraded ? "true" : "false");
  if (d.degraded) {
    out->push_back(',');
    Key("degraded_reason", out);
    AppendJsonString(d.degraded_reason, out);
  }
  out->push_back(',');
  Key("latency_us", out);
  out->push_back('{');
  for (size_t i = 0; i < d.timings.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(d.timings[i].stage, out);
    absl::StrAppend(out, ":", d.timings[i].elapsed.count());
  }
  out->append("}}");
}

std::string DecisionToJson(const Decision& d) {
  std::string out;
  AppendDecisionJson(d, &out);
  return out;
}

}  // namespace vigil
