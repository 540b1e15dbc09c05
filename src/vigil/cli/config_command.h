// `vigil config print | check | reference`: the effective configuration with where each value
// came from, a configuration file checked as the command that reads it would, and the option
// reference (docs/configuration.md is this command's output, kept equal by a test).
#ifndef VIGIL_CLI_CONFIG_COMMAND_H_
#define VIGIL_CLI_CONFIG_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddConfigCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_CONFIG_COMMAND_H_
