// vigil: real-time payment screening for money laundering and fraud. One binary, subcommands.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "vigil/cli/audit_command.h"
#include "vigil/cli/bench_command.h"
#include "vigil/cli/cases_command.h"
#include "vigil/cli/cluster_command.h"
#include "vigil/cli/command.h"
#include "vigil/cli/config_command.h"
#include "vigil/cli/drift_command.h"
#include "vigil/cli/gen_command.h"
#include "vigil/cli/model_command.h"
#include "vigil/cli/parse_command.h"
#include "vigil/cli/policy_command.h"
#include "vigil/cli/replay_command.h"
#include "vigil/cli/screen_command.h"
#include "vigil/cli/serve_command.h"
#include "vigil/cli/token_command.h"
#include "vigil/common/nearest_name.h"

namespace {

// CLI11 answers --help before it looks at the words left over, so `vigil no-such --help` would
// print the help and exit 0. When the deepest command on the line has subcommands and a word it
// did not recognise, this prints `vigil: unknown command "..."` with the nearest command
// (NearestName) or, when none is near, the list of them to stderr and returns true.
bool ReportUnknownCommand(const CLI::App& root) {
  const CLI::App* app = &root;
  std::string path;
  while (!app->get_subcommands().empty()) {
    app = app->get_subcommands().front();
    path += app->get_name() + " ";
  }
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands({})) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());  // "": an option group
  }
  const std::vector<std::string> left = app->remaining();
  const auto word = std::find_if(left.begin(), left.end(),
                                 [](const std::string& w) { return !w.empty() && w[0] != '-'; });
  if (names.empty() || word == left.end()) return false;
  std::cerr << "vigil: unknown command \"" << path << *word << "\"";
  if (const std::string nearest = vigil::NearestName(*word, names); !nearest.empty()) {
    std::cerr << "; did you mean \"" << path << nearest << "\"?\n";
  } else {  // nothing close: list them
    std::cerr << "; the commands are: " << absl::StrJoin(names, ", ") << "\n";
  }
  std::cerr << "Run 'vigil " << path << "--help' for what each command does.\n";
  return true;
}

}  // namespace

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
  std::vector<Command> commands = {
      AddGenCommand(vigil),     AddModelCommand(vigil),  AddParseCommand(vigil),
      AddScreenCommand(vigil),  AddPolicyCommand(vigil), AddReplayCommand(vigil),
      AddServeCommand(vigil),   AddTokenCommand(vigil),  AddBenchCommand(vigil),
      AddDriftCommand(vigil),   AddAuditCommand(vigil),  AddConfigCommand(vigil),
      AddClusterCommand(vigil), AddCasesCommand(vigil)};
  try {
    vigil.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (ReportUnknownCommand(vigil)) return kExitUsage;
    // --help: the help text, exit 0; any other error: the message and usage, exit 2.
    return vigil.exit(e) == static_cast<int>(CLI::ExitCodes::Success) ? kExitOk : kExitUsage;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;
}
