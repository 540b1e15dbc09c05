// vigil: real-time payment screening for money laundering and fraud. One binary, subcommands.
#include <iostream>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "vigil/cli/audit_command.h"
#include "vigil/cli/bench_command.h"
#include "vigil/cli/command.h"
#include "vigil/cli/config_command.h"
#include "vigil/cli/drift_command.h"
#include "vigil/cli/gen_command.h"
#include "vigil/cli/model_command.h"
#include "vigil/cli/parse_command.h"
#include "vigil/cli/screen_command.h"
#include "vigil/cli/token_command.h"
#include "vigil/cli/policy_command.h"
#include "vigil/cli/replay_command.h"
#include "vigil/cli/serve_command.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles (a debugging aid that
  // costs a graph lookup per lock on the request path); vigil's lock order is fixed by design.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App vigil{
      "vigil screens payments for money laundering and fraud: per-account behavioural features, "
      "rules and models, in microseconds, with a tamper-evident record of every decision."};
  vigil.name("vigil");
  vigil.require_subcommand(1);
  vigil.footer(
      "Run 'vigil COMMAND --help' for a command's options and examples.\n"
      "Exit codes: 0 success; 1 input examined and found wanting; 2 usage or environment error.");
  std::vector<Command> commands = {AddGenCommand(vigil), AddModelCommand(vigil), AddParseCommand(vigil),
                                   AddScreenCommand(vigil),
                                   AddPolicyCommand(vigil),
                                   AddReplayCommand(vigil), AddServeCommand(vigil),
                                   AddTokenCommand(vigil),
                                   AddBenchCommand(vigil), AddDriftCommand(vigil),
                                   AddAuditCommand(vigil), AddConfigCommand(vigil)};
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
