// ConfigFlags: the command-line face of an OptionSet. Every option a command uses (its Use) is
// bound once as a flag of that command, spelled as the set says (`--drift-min-rows`; booleans
// also `--no-...` and `--flag=false`), with the key, the default and the help in --help; the
// values given wait until Apply, which sets them through the same checks as the file's, after
// the file is read. No command registers a configuration flag by hand.
//
// Thread safety: none (the command line is parsed on one thread).
#ifndef VIGIL_CLI_CONFIG_FLAGS_H_
#define VIGIL_CLI_CONFIG_FLAGS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "vigil/config/option_set.h"

namespace vigil::cli {

class ConfigFlags {
 public:
  // Adds the flags of the options in `set` that `use` names to `app`, and `--config FILE`
  // (the YAML file, read before the flags) unless `with_config_file` is false. `set` must
  // outlive this.
  ConfigFlags(CLI::App* app, config::OptionSet* set, unsigned use, bool with_config_file = true);

  // Reads --config, when given, then sets each flag given. Errors: the file's (every problem,
  // file:line:column) or the flag's, naming it.
  absl::Status Apply();

  const std::string& config_file() const { return config_file_; }
  // Whether the command line gave this option.
  bool Given(const std::string& key) const;

 private:
  config::OptionSet* set_;
  std::string config_file_;
  std::vector<std::pair<std::string, std::vector<std::string>>> given_;  // key → values
};

}  // namespace vigil::cli

#endif  // VIGIL_CLI_CONFIG_FLAGS_H_
