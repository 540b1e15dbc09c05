#include "vigil/server/case_evidence.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/proof_bundle.h"
#include "vigil/cases/case_book.h"
#include "vigil/common/clock.h"
#include "vigil/common/string_view.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/server/query_params.h"

namespace vigil {
namespace {

using Json = nlohmann::ordered_json;

// A finite number, or null (JSON has no NaN).
Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// The alert of "case_id" at the request's "sequence", or the answer that refuses it.
struct FoundAlert {
  cases::Alert alert;
  std::optional<HttpResponse> refused;
};

FoundAlert FindAlert(const cases::CaseBook& book, const HttpRequest& request,
                     std::string_view case_id) {
  FoundAlert found;
  absl::StatusOr<std::optional<uint64_t>> sequence = WholeNumberParam(request.query, "sequence");
  if (!sequence.ok()) {
    found.refused = HttpError(400, "invalid_field", "sequence", ToStd(sequence.status().message()));
    return found;
  }
  if (!sequence->has_value()) {
    found.refused = HttpError(400, "invalid_field", "sequence",
                              "'sequence' is required: the decision log record of one of the "
                              "case's alerts (its alerts' \"sequence\")");
    return found;
  }
  absl::StatusOr<cases::Alert> alert = book.FindAlert(std::string(case_id), **sequence);
  if (!alert.ok()) {
    found.refused = absl::IsNotFound(alert.status())
                        ? HttpError(404, "not_found", "sequence", ToStd(alert.status().message()))
                        : HttpError(503, "cases_unavailable", "", ToStd(alert.status().message()));
    return found;
  }
  found.alert = *std::move(alert);
  return found;
}

// The 503 of a decision log record that cannot be read back.
HttpResponse RecordUnavailable(uint64_t sequence, const absl::Status& status) {
  return HttpError(503, "audit_unavailable", "",
                   absl::StrCat("decision log record ", sequence, ": ", status.message(),
                                "; run `vigil audit verify`"));
}

// The attribution by the loaded model whose version decided, or why there is none.
Json AttributionOf(const ModelDeployment* deployment, const audit::AuditRecord& r,
                   std::string* unavailable) {
  const std::string& version = r.decision.model_version;
  if (version.empty() || std::isnan(r.decision.score)) {
    *unavailable = "no model scored this decision (rules alone decided)";
    return nullptr;
  }
  if (deployment == nullptr) {
    *unavailable = "this server loads no model";
    return nullptr;
  }
  const std::shared_ptr<const ModelDeployment::Snapshot> now = deployment->Current();
  std::shared_ptr<const ModelDeployment::Model> model;
  for (const auto& m : {now->champion, now->challenger, now->shadow}) {
    if (m != nullptr && m->version == version) model = m;
  }
  if (model == nullptr || model->direct == nullptr) {
    *unavailable = absl::StrCat("the model that decided, ", version,
                                ", is no longer loaded (activate it to explain this decision)");
    return nullptr;
  }
  absl::StatusOr<Attribution> a = model->direct->Attribute(r.features);
  if (!a.ok()) {
    *unavailable = absl::StrCat("model ", version, ": ", a.status().message());
    return nullptr;
  }
  Json features = Json::array();
  double sum = a->bias;
  for (const FeatureAttribution& f : a->features) {
    features.push_back(
        {{"feature", f.feature}, {"value", Number(f.value)}, {"contribution", f.contribution}});
    sum += f.contribution;
  }
  return {{"model_version", version},
          {"bias", a->bias},
          {"margin", a->margin},
          {"sum", sum},
          {"score", a->score},
          {"recorded_score", Number(r.decision.score)},
          {"features", std::move(features)}};
}

// The record of "sequence", decoded; the answer that refuses it otherwise.
absl::StatusOr<audit::AuditRecord> ReadAlertRecord(const audit::AuditLog& log, uint64_t sequence,
                                                   std::string* bytes) {
  absl::StatusOr<std::string> read = log.ReadRecord(sequence);
  if (!read.ok()) return read.status();
  *bytes = *std::move(read);
  return audit::DecodeRecord(*bytes);
}

}  // namespace

HttpResponse AnswerCaseDecision(const CaseEvidenceSources& sources, const HttpRequest& request,
                                std::string_view case_id) {
  FoundAlert found = FindAlert(*sources.book, request, case_id);
  if (found.refused.has_value()) return *std::move(found.refused);
  std::string bytes;
  absl::StatusOr<audit::AuditRecord> record =
      ReadAlertRecord(*sources.log, found.alert.sequence, &bytes);
  if (!record.ok()) return RecordUnavailable(found.alert.sequence, record.status());
  std::string unavailable;
  Json attribution = AttributionOf(sources.deployment, *record, &unavailable);
  Json body;
  body["case"] = std::string(case_id);
  body["sequence"] = found.alert.sequence;
  body["record"] =
      Json::parse(AuditRecordViewJson(*record, audit::LeafHash(sources.log->hash(), bytes)));
  body["attribution"] = std::move(attribution);
  if (!unavailable.empty()) body["attribution_unavailable"] = unavailable;
  HttpResponse r;
  r.body = body.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  return r;
}

HttpResponse AnswerCaseProof(const CaseEvidenceSources& sources, const HttpRequest& request,
                             std::string_view case_id) {
  FoundAlert found = FindAlert(*sources.book, request, case_id);
  if (found.refused.has_value()) return *std::move(found.refused);
  absl::StatusOr<audit::ProofBundle> bundle =
      audit::InclusionBundle(*sources.log, found.alert.transaction_id,
                             [](const audit::AuditRecord& r, const audit::Hash& leaf) {
                               return AuditRecordViewJson(r, leaf);
                             });
  if (!bundle.ok()) {
    if (absl::IsFailedPrecondition(bundle.status())) {
      HttpResponse r = HttpError(409, "not_yet_covered", "", ToStd(bundle.status().message()));
      r.headers.push_back({"Retry-After", "1"});
      return r;
    }
    return HttpError(503, "audit_unavailable", "", ToStd(bundle.status().message()));
  }
  if (bundle->proof.sequence != found.alert.sequence) {
    // The transaction id was decided again later: the log's index names the later record.
    return HttpError(409, "case_conflict", "sequence",
                     absl::StrCat("transaction ", found.alert.transaction_id,
                                  " was decided again (record ", bundle->proof.sequence,
                                  "); `vigil audit prove` proves the latest decision of an id"));
  }
  HttpResponse r;
  r.body = std::move(bundle->json);
  r.headers.push_back(
      {"Content-Disposition", absl::StrCat("attachment; filename=\"", ToAbsl(case_id), "-",
                                           found.alert.sequence, ".proof.json\"")});
  return r;
}

HttpResponse AnswerCaseSeries(const CaseEvidenceSources& sources, const HttpRequest& request,
                              std::string_view case_id) {
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  std::vector<std::string> names = {"orig_amount_ewma_mean", "orig_amount_ewma_std",
                                    "orig_out_count_24h",    "orig_out_sum_24h",
                                    "orig_out_count_7d",     "orig_out_sum_7d"};
  if (const std::optional<std::string> asked = DecodedQueryParam(request.query, "features")) {
    names.clear();
    for (absl::string_view n : absl::StrSplit(*asked, ',', absl::SkipEmpty())) {
      names.emplace_back(n);
    }
    if (names.empty() || names.size() > 32) {
      return HttpError(400, "invalid_field", "features", "'features' names 1 to 32 features");
    }
  }
  std::vector<size_t> columns;
  for (const std::string& n : names) {
    const auto& all = schema->names();
    const auto it = std::find(all.begin(), all.end(), n);
    if (it == all.end()) {
      return HttpError(400, "invalid_field", "features",
                       absl::StrCat("no feature '", n, "' in ", schema->version()));
    }
    columns.push_back(static_cast<size_t>(it - all.begin()));
  }
  absl::StatusOr<std::vector<cases::Alert>> alerts = sources.book->Alerts(std::string(case_id));
  if (!alerts.ok()) {
    return absl::IsNotFound(alerts.status())
               ? HttpError(404, "not_found", "", ToStd(alerts.status().message()))
               : HttpError(503, "cases_unavailable", "", ToStd(alerts.status().message()));
  }
  Json points = Json::array();
  for (const cases::Alert& a : *alerts) {
    std::string bytes;
    absl::StatusOr<audit::AuditRecord> r = ReadAlertRecord(*sources.log, a.sequence, &bytes);
    if (!r.ok()) return RecordUnavailable(a.sequence, r.status());
    // A row of an older schema this build extends has the first columns only.
    const bool same = SchemaExtends(schema->version(), r->decision.feature_schema_version);
    Json values = Json::array();
    for (size_t c : columns) {
      values.push_back(same && c < r->features.size() ? Number(r->features[c]) : Json(nullptr));
    }
    points.push_back({{"sequence", a.sequence},
                      {"event_time", FormatUtc(a.event_time)},
                      {"amount_reporting", static_cast<double>(a.amount_reporting_micros) / 1e6},
                      {"values", std::move(values)}});
  }
  HttpResponse r;
  r.body =
      Json{{"case", std::string(case_id)}, {"features", names}, {"points", std::move(points)}}.dump(
          -1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  return r;
}

HttpResponse AnswerCaseReport(const CaseEvidenceSources& sources, const HttpRequest& request,
                              std::string_view case_id) {
  const std::string format = DecodedQueryParam(request.query, "format").value_or("goaml");
  if (format != "goaml" && format != "html") {
    return HttpError(400, "invalid_field", "format", "'format' must be goaml or html");
  }
  const std::string id(case_id);
  absl::StatusOr<cases::Case> c = sources.book->Get(id);
  if (!c.ok()) return HttpError(404, "not_found", "", ToStd(c.status().message()));
  absl::StatusOr<std::vector<cases::Alert>> alerts = sources.book->Alerts(id);
  absl::StatusOr<std::vector<cases::CaseEvent>> timeline = sources.book->Timeline(id);
  if (!alerts.ok() || !timeline.ok()) {
    return HttpError(503, "cases_unavailable", "",
                     ToStd((!alerts.ok() ? alerts.status() : timeline.status()).message()));
  }
  cases::SuspicionReportInput in;
  in.c = &*c;
  in.timeline = *std::move(timeline);
  in.entity = sources.entity;
  in.now = RealClock().Now();
  for (const cases::Alert& a : *alerts) {
    std::string bytes;
    absl::StatusOr<audit::AuditRecord> r = ReadAlertRecord(*sources.log, a.sequence, &bytes);
    if (!r.ok()) return RecordUnavailable(a.sequence, r.status());
    in.records.push_back(*std::move(r));
    in.amounts_local_micros.push_back(a.amount_reporting_micros);
  }
  absl::StatusOr<std::string> body =
      format == "goaml" ? cases::GoamlReportXml(in) : cases::SuspicionReportHtml(in);
  if (!body.ok()) return HttpError(409, "case_conflict", "", ToStd(body.status().message()));
  HttpResponse r;
  r.body = *std::move(body);
  if (format == "goaml") {
    r.content_type = "application/xml";
    r.headers.push_back(
        {"Content-Disposition", absl::StrCat("attachment; filename=\"", id, ".goaml.xml\"")});
  } else {
    r.content_type = "text/html; charset=utf-8";
    // The draft shows what payments and analysts wrote: no script runs in it, whatever it holds.
    r.headers.push_back(
        {"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"});
  }
  return r;
}

}  // namespace vigil
