// A `vigil` subcommand: its CLI11 sub-app (flags, --help text with an example) and the function
// that runs it once the command line is parsed. Each subcommand lives in its own file and exposes
// one `Command AddXxxCommand(CLI::App& vigil)`; main.cc runs the one the user chose.
//
// Exit codes: 0 success; 1 the input was examined and found wanting; 2 usage or environment error.
#ifndef VIGIL_CLI_COMMAND_H_
#define VIGIL_CLI_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace vigil::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputRejected = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

}  // namespace vigil::cli

#endif  // VIGIL_CLI_COMMAND_H_
