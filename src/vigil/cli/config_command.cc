#include "vigil/cli/config_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "vigil/cli/config_flags.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_options.h"
#include "vigil/server/serve_config.h"

namespace vigil::cli {
namespace {

constexpr char kReferencePreamble[] =
    "Every option of vigil's configuration, generated from the one declaration the commands "
    "read (`vigil config reference` writes this page; a test keeps it equal). `vigil serve`, "
    "`vigil replay` and `vigil bench` take the same YAML file (`--config FILE`) and the same "
    "flags; \"used by\" says which command reads an option. A key `a.b` is `b` inside the mapping "
    "`a`; flags override the file; booleans are flags (`--gpu`, `--no-gpu`, `--gpu=false`); a "
    "list flag repeats or takes commas. Every value passes the same check whichever way it comes, "
    "and a file's errors are reported together as `file:line:column: message`, unknown keys with "
    "the nearest known one.\n\n"
    "```\n"
    "vigil config check serve.yaml                # exit 0, or 1 with every problem\n"
    "vigil config print --config serve.yaml --workers 8   # the effective values and their source\n"
    "```\n";

struct ConfigState {
  ServeConfig config;
  config::OptionSet options;
  std::unique_ptr<ConfigFlags> flags;
  std::string use = "serve";
  std::string file;  // check
};

unsigned UseOf(const std::string& name) {
  if (name == "replay") return config::kReplay;
  if (name == "bench") return config::kBench;
  return config::kServe;
}

int RunPrint(ConfigState& state) {
  if (absl::Status s = state.flags->Apply(); !s.ok()) {
    std::cerr << "vigil config print: " << s.message() << "\n";
    return kExitUsage;
  }
  std::cout << state.options.Print(UseOf(state.use));
  return kExitOk;
}

int RunCheck(ConfigState& state) {
  if (absl::Status s = ReadConfigFile(state.file, &state.options); !s.ok()) {
    std::cerr << s.message() << "\n";
    return absl::IsNotFound(s) ? kExitUsage : kExitInputRejected;
  }
  // The combination, as the command that reads the file checks it at its start.
  const absl::Status valid = state.use == "serve"
                                 ? state.config.Validate()
                                 : state.config.PipelineConfig::Validate(/*needs_data_dir=*/false);
  if (!valid.ok()) {
    std::cerr << state.file << ": " << valid.message() << "\n";
    return kExitInputRejected;
  }
  std::cout << state.file << ": ok for vigil " << state.use << "\n";
  return kExitOk;
}

}  // namespace

Command AddConfigCommand(CLI::App& vigil) {
  auto state = std::make_shared<ConfigState>();
  CLI::App* app = vigil.add_subcommand(
      "config", "Print the effective configuration, check a configuration file, or print the "
                "option reference (docs/configuration.md)");
  app->require_subcommand(1);
  DeclareServeOptions(&state->config, &state->options);
  CLI::App* print = app->add_subcommand(
      "print", "The effective configuration: every option's value and where it came from "
               "(default, FILE:line:column or the flag)");
  state->flags = std::make_unique<ConfigFlags>(print, &state->options, config::kEveryCommand);
  CLI::App* check = app->add_subcommand(
      "check", "Check a configuration file as the command that reads it would, every problem "
               "at once");
  check->add_option("FILE", state->file, "The YAML configuration")->required();
  CLI::App* reference =
      app->add_subcommand("reference", "Print the option reference (Markdown)");
  for (CLI::App* sub : {print, check}) {
    sub->add_option("--for", state->use, "The command whose options: serve, replay or bench")
        ->check(CLI::IsMember({"serve", "replay", "bench"}))
        ->capture_default_str();
  }
  app->footer(
      "Examples:\n"
      "  vigil config check serve.yaml\n"
      "  vigil config print --config serve.yaml --workers 8\n"
      "  vigil config reference > docs/configuration.md\n"
      "Exit: 0 fine; 1 the file has problems (each printed as file:line:column); 2 usage.");
  return Command{app, [state, print, check, reference] {
                   if (print->parsed()) return RunPrint(*state);
                   if (check->parsed()) return RunCheck(*state);
                   (void)reference;
                   std::cout << state->options.Reference("Configuration", kReferencePreamble);
                   return kExitOk;
                 }};
}

}  // namespace vigil::cli
