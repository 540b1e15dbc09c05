// `vigil token create|list|revoke --data-dir D`: the API tokens of a data directory
// (docs/security.md). `create --role R` prints the new token once on stdout; only its hash is
// stored. `list` prints one JSON line per token (id, role, created, description; never a
// secret). `revoke ID` removes one.
// Exit: 0 done; 1 revoke of an id that does not exist; 2 usage or environment error (unknown
// role, unreadable or world-readable token file).
#ifndef VIGIL_CLI_TOKEN_COMMAND_H_
#define VIGIL_CLI_TOKEN_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddTokenCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_TOKEN_COMMAND_H_
