// `vigil cases export-labels --data-dir D --out rows.csv`: the analysts' closed cases as
// labelled feature rows for `vigil model train` (docs/cases.md, "Outcomes teach the model").
// Each alert of a closed case becomes one row: the feature row the decision log recorded for
// it, labelled 1 for a case closed as suspicious_reported, 0 for false_positive and
// not_suspicious; valuable_alert cases are left out unless --valuable-alert says 1 or 0. The
// typology column holds "case:<outcome>". Reads a running server's data as it is now.
// Exit: 0 written; 1 no closed case to export; 2 usage or environment error.
#ifndef VIGIL_CLI_CASES_COMMAND_H_
#define VIGIL_CLI_CASES_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddCasesCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_CASES_COMMAND_H_
