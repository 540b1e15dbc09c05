// CaseEvidence: what an analyst sees of one alert of a case (docs/cases.md, "Evidence"): the
// decision's record as the log holds it, the exact TreeSHAP attribution of the model that
// decided (every feature and the bias, summing to the margin), and the record's inclusion
// proof to download. The alert is named by its log sequence and must be one of the case's, so
// that an analyst's token reads the decisions of cases and no others.
//
// Thread safety: as its sources (any thread).
#ifndef VIGIL_SERVER_CASE_EVIDENCE_H_
#define VIGIL_SERVER_CASE_EVIDENCE_H_

#include <string_view>

#include "vigil/cases/suspicion_report.h"
#include "vigil/server/http_server.h"

namespace vigil {

namespace audit {
class AuditLog;
}
namespace cases {
class CaseBook;
}  // namespace cases
class ModelDeployment;

struct CaseEvidenceSources {
  const cases::CaseBook* book = nullptr;
  const audit::AuditLog* log = nullptr;
  // The models loaded; null: no attribution is offered.
  const ModelDeployment* deployment = nullptr;
  cases::ReportingEntity entity;
};

// GET /v1/cases/{case_id}/decision?sequence=N: {"record": the examiner's view of the record
// (as `vigil audit export` writes it), "attribution": {...} or null, "attribution_unavailable":
// why it is null}. 400 without a whole-number sequence, 404 for an unknown case or a sequence
// that is none of its alerts.
HttpResponse AnswerCaseDecision(const CaseEvidenceSources& sources, const HttpRequest& request,
                                std::string_view case_id);

// GET /v1/cases/{case_id}/proof?sequence=N: the record's inclusion bundle (`vigil audit
// prove`), as an attachment; 409 while no signed tree head covers it yet.
HttpResponse AnswerCaseProof(const CaseEvidenceSources& sources, const HttpRequest& request,
                             std::string_view case_id);

// GET /v1/cases/{case_id}/series?features=a,b: for each alert of the case (log order), its
// event time, amount in the reporting currency and the values of the named features in the
// row the log recorded (default: the paying account's amount baseline and its 24-hour and
// 7-day outgoing counts and sums), so that a payment is seen against its account's own
// history as the decision saw it. 400 naming an unknown feature.
HttpResponse AnswerCaseSeries(const CaseEvidenceSources& sources, const HttpRequest& request,
                              std::string_view case_id);

// GET /v1/cases/{case_id}/report?format=goaml|html: the report draft of a case closed as
// suspicious_reported (cases::GoamlReportXml, SuspicionReportHtml), as an attachment (goaml)
// or a page (html); 409 for any other case.
HttpResponse AnswerCaseReport(const CaseEvidenceSources& sources, const HttpRequest& request,
                              std::string_view case_id);

}  // namespace vigil

#endif  // VIGIL_SERVER_CASE_EVIDENCE_H_
