#include "vigil/cases/case_labels.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/cases/case_book.h"
#include "vigil/cases/case_file.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cases {

absl::StatusOr<std::vector<CaseLabel>> ReadCaseLabels(const KvStore& store) {
  const std::vector<std::string> families = store.ColumnFamilies();
  if (std::find(families.begin(), families.end(), kCasesFamily) == families.end()) {
    return absl::NotFoundError(
        absl::StrCat("no cases in '", store.path(), "': vigil serve keeps them (cases.enabled)"));
  }
  std::vector<CaseLabel> labels;
  VIGIL_RETURN_IF_ERROR(store.ForEach(
      kCasesFamily, "case/", [&](absl::string_view, absl::string_view value) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(Case c, CaseFromJson(ToStd(value)));
        if (!c.closed() || c.outcome == CaseOutcome::kNone) return absl::OkStatus();
        return store.ForEach(
            kCasesFamily, absl::StrCat("alert/", c.id, "/"),
            [&](absl::string_view key, absl::string_view) -> absl::Status {
              CaseLabel label;
              if (!absl::SimpleAtoi(key.substr(key.rfind('/') + 1), &label.sequence)) {
                return absl::DataLossError(
                    absl::StrCat("a stored alert key does not parse: ", key));
              }
              label.case_id = c.id;
              label.outcome = c.outcome;
              label.closed_at = c.closed_at;
              labels.push_back(std::move(label));
              return absl::OkStatus();
            });
      }));
  std::sort(labels.begin(), labels.end(),
            [](const CaseLabel& a, const CaseLabel& b) { return a.sequence < b.sequence; });
  return labels;
}

}  // namespace vigil::cases
