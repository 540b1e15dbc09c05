// Finding the data files vigil ships (data/fx_rates.csv) when the user names none.
#ifndef VIGIL_CLI_DATA_FILES_H_
#define VIGIL_CLI_DATA_FILES_H_

#include <string>

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

}  // namespace vigil::cli

#endif  // VIGIL_CLI_DATA_FILES_H_
