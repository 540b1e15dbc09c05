// SuspicionReport: the draft of the report a bank files with its financial intelligence unit
// for a case closed as suspicious_reported (docs/cases.md, "Reports"): goAML XML, the UNODC
// format most FIUs take, and a readable HTML page with the same content (the narrative, the
// subject, each transaction with its counterparty and why vigil alerted on it).
//
// goAML's XSD is each FIU's to publish (with its own code lists); vigil writes the subset of
// goAML 4/5 elements docs/cases.md lists, in the schema's order, for an analyst to complete
// and submit in the FIU's goAML web application. Nothing is sent anywhere.
//
// Thread safety: pure functions.
#ifndef VIGIL_CASES_SUSPICION_REPORT_H_
#define VIGIL_CASES_SUSPICION_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/audit/audit_record.h"
#include "vigil/cases/case_event.h"
#include "vigil/cases/case_file.h"

namespace vigil::cases {

// Who reports (the goAML header); from the configuration (cases.report_*).
struct ReportingEntity {
  std::string rentity_id;      // the FIU's id of the bank; "" leaves a placeholder to fill in
  std::string rentity_branch;  // optional
  std::string currency_local;  // ISO 4217 code of amount_local (the reporting currency)
};

struct SuspicionReportInput {
  const Case* c = nullptr;
  // The case's alerts' decision records, in log order (their transactions, reasons).
  std::vector<audit::AuditRecord> records;
  // Each record's amount in the reporting currency, micro-units (Alert::amount_reporting_micros;
  // 0 when the FX table lacked its currency).
  std::vector<int64_t> amounts_local_micros;
  std::vector<CaseEvent> timeline;
  ReportingEntity entity;
  UtcTime now{};
};

// kFailedPrecondition unless the case is closed as suspicious_reported.
absl::StatusOr<std::string> GoamlReportXml(const SuspicionReportInput& in);
absl::StatusOr<std::string> SuspicionReportHtml(const SuspicionReportInput& in);

}  // namespace vigil::cases

#endif  // VIGIL_CASES_SUSPICION_REPORT_H_
