// `vigil policy check FILE` and `vigil policy diff A B`.
#ifndef VIGIL_CLI_POLICY_COMMAND_H_
#define VIGIL_CLI_POLICY_COMMAND_H_

#include "CLI/CLI.hpp"
#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddPolicyCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_POLICY_COMMAND_H_
