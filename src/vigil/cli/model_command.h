// `vigil model inspect M` and `vigil model predict M FILE.csv [--shap] [--out F.csv]`.
#ifndef VIGIL_CLI_MODEL_COMMAND_H_
#define VIGIL_CLI_MODEL_COMMAND_H_

#include "CLI/CLI.hpp"
#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddModelCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_MODEL_COMMAND_H_
