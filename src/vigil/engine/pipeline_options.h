// The options of a PipelineConfig, declared once: keys, flags, ranges, help and which commands
// use them. `vigil serve` adds its HTTP options (server/serve_config.h) to the same set;
// `vigil replay` and `vigil bench` bind theirs from it (cli/config_flags.h). Nothing else
// parses a pipeline setting.
//
// Thread safety: DeclarePipelineOptions is reentrant; the set it fills is not.
#ifndef VIGIL_ENGINE_PIPELINE_OPTIONS_H_
#define VIGIL_ENGINE_PIPELINE_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_config.h"

namespace vigil {

// Declares every option of `config` in `set`, bound to its members (config must outlive set).
void DeclarePipelineOptions(PipelineConfig* config, config::OptionSet* set);

// Reads a configuration file into `set` (kNotFound naming the file when it cannot be read).
absl::Status ReadConfigFile(const std::string& path, config::OptionSet* set);

}  // namespace vigil

#endif  // VIGIL_ENGINE_PIPELINE_OPTIONS_H_
