// The files a command reads besides its input: the data files vigil ships (data/fx_rates.csv)
// when the user names none, and the data dir (`--data-dir`) of the commands that work on one.
#ifndef VIGIL_CLI_DATA_FILES_H_
#define VIGIL_CLI_DATA_FILES_H_

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "vigil/core/fx_rates.h"

namespace vigil::cli {

// Loads "flag" when set; otherwise the first existing default, in order:
//   1. data/fx_rates.csv under the current directory (a checkout's root);
//   2. data/fx_rates.csv under each ancestor of the executable's directory (build/vigil in a
//      checkout);
//   3. $VIGIL_DATA_DIR/fx_rates.csv when that environment variable is set.
// The error lists every place tried.
absl::StatusOr<FxRates> LoadFxRates(const std::string& flag);

// What a command does with its data dir, for the check AddDataDirOption makes.
enum class DataDirUse {
  kMayCreate,  // it may be the first to write there: the directory need not exist yet
  kExisting,   // it reads what serve, replay or an earlier command left: the directory must exist
};

// Ends every message about a data dir that is not what the command expects.
inline constexpr char kDataDirHint[] =
    "--data-dir is the directory given to `vigil serve` or `vigil replay`";

// Adds the required option `--data-dir DIR` to "app", bound to "*dir", with the help every
// command shows (the pipeline option data_dir's, as serve, replay and bench show it). With
// kExisting the command line is refused (exit 2, before the command runs) unless DIR is an
// existing directory: "data dir 'D' does not exist (<kDataDirHint>)". "*dir" must outlive the
// parse. Serve, replay and bench take the data dir from the pipeline's
// options instead (ConfigFlags; `data_dir` in a --config file too).
CLI::Option* AddDataDirOption(CLI::App* app, std::string* dir, DataDirUse use);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_DATA_FILES_H_
