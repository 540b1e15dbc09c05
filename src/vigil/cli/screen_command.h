// `vigil screen --list L NAME...`: screens names against watchlists, for analysts checking a
// name by hand and for scripts. L is a list file in vigil's format (CSV or JSON Lines) or a
// folder holding OFAC's sdn.csv and alt.csv; --list may be repeated. With no NAME, names are
// read from standard input, one per line.
//
// Output: one JSON line per name, in input order:
//   {"query":"...","hits":[{"entry_id","name","matched_alias","score","list"}, ...]}
// hits at or above --min-score (the default policy's review threshold, 0.88), best first.
// --identifier screens BICs, IBANs, account and passport numbers exactly instead of names.
// Exit: 0 no name had a hit; 1 some name had a hit; 2 usage error or a list that cannot be read
// (stderr names the list, line and field).
#ifndef VIGIL_CLI_SCREEN_COMMAND_H_
#define VIGIL_CLI_SCREEN_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddScreenCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_SCREEN_COMMAND_H_
