// CaseLabel: what the analysts concluded about an alerted payment, read from a case book's
// store (docs/cases.md, "Outcomes teach the model"): every alert of every closed case with the
// case's outcome. `vigil cases export-labels` joins them with the decision log's feature rows
// into the rows `vigil model train` learns from.
//
// The labels are of alerted payments only: what the policy and model in force chose to show an
// analyst. A model trained on them alone learns to tell the alerts apart, not to find what was
// never alerted; docs/cases.md says how to use them.
//
// Thread safety: a pure function of the store's contents.
#ifndef VIGIL_CASES_CASE_LABELS_H_
#define VIGIL_CASES_CASE_LABELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/cases/case_event.h"
#include "vigil/store/kv_store.h"

namespace vigil::cases {

struct CaseLabel {
  uint64_t sequence = 0;  // the alert's record in the decision log
  std::string case_id;
  CaseOutcome outcome = CaseOutcome::kNone;
  UtcTime closed_at{};
};

// The alerts of the closed cases in "store" (which holds kCasesFamily, as CaseBook keeps it),
// by log sequence. kNotFound when the store keeps no cases; kDataLoss for a stored case that
// does not parse.
absl::StatusOr<std::vector<CaseLabel>> ReadCaseLabels(const KvStore& store);

}  // namespace vigil::cases

#endif  // VIGIL_CASES_CASE_LABELS_H_
