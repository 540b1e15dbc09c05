// `vigil serve`: the HTTP API (docs/openapi.yaml) over the engine, until SIGTERM or SIGINT.
#ifndef VIGIL_CLI_SERVE_COMMAND_H_
#define VIGIL_CLI_SERVE_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddServeCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_SERVE_COMMAND_H_
