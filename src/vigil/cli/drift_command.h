// `vigil drift compare`: per numeric column, how far a live sample has drifted from a reference.
#ifndef VIGIL_CLI_DRIFT_COMMAND_H_
#define VIGIL_CLI_DRIFT_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddDriftCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_DRIFT_COMMAND_H_
