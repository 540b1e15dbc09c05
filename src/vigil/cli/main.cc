// vigil: real-time payment screening for money laundering and fraud. One binary, subcommands.
#include <iostream>
#include <vector>

#include "CLI/CLI.hpp"
#include "vigil/cli/bench_command.h"
#include "vigil/cli/command.h"
#include "vigil/cli/gen_command.h"
#include "vigil/cli/model_command.h"
#include "vigil/cli/policy_command.h"
#include "vigil/cli/replay_command.h"
#include "vigil/cli/serve_command.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  CLI::App vigil{
      "vigil screens payments for money laundering and fraud: per-account behavioural features, "
      "rules and models, in microseconds, with a tamper-evident record of every decision."};
  vigil.name("vigil");
  vigil.require_subcommand(1);
  vigil.footer(
      "Run 'vigil COMMAND --help' for a command's options and examples.\n"
      "Exit codes: 0 success; 1 input examined and found wanting; 2 usage or environment error.");
  std::vector<Command> commands = {AddGenCommand(vigil), AddModelCommand(vigil), AddPolicyCommand(vigil),
                                   AddReplayCommand(vigil), AddServeCommand(vigil),
                                   AddBenchCommand(vigil)};
  try {
    vigil.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return vigil.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return vigil.exit(e);
  } catch (const CLI::ParseError& e) {
    vigil.exit(e);  // prints the message and usage
    return kExitUsage;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;
}
