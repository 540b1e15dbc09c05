#include "vigil/cli/config_flags.h"

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/engine/pipeline_options.h"

namespace vigil::cli {
namespace {

// "drift" for "drift.min_rows", "general" for top-level keys: the --help group.
std::string Group(const config::Option& o) {
  const size_t dot = o.spec.key.find('.');
  return dot == std::string::npos ? "Configuration" : absl::StrCat("Configuration: ", o.spec.key.substr(0, dot));
}

std::string Help(const config::Option& o) {
  std::string help = absl::StrCat(o.spec.key, ": ", o.spec.help);
  if (!o.default_text.empty() && o.default_text != "[]" && o.default_text != "{}") {
    absl::StrAppend(&help, " (default ", o.default_text, ")");
  }
  return help;
}

}  // namespace

ConfigFlags::ConfigFlags(CLI::App* app, config::OptionSet* set, unsigned use,
                         bool with_config_file)
    : set_(set) {
  if (with_config_file) {
    app->add_option("--config", config_file_,
                    "YAML configuration (docs/configuration.md); the flags below override it");
  }
  for (const config::Option& o : set->options()) {
    if ((o.spec.uses & use) == 0 || o.flag().empty()) continue;
    const std::string key = o.spec.key;
    if (o.kind == config::OptionKind::kBool) {
      const std::string names = absl::StrCat(o.flag(), ",!--no-", o.flag().substr(2));
      app->add_flag_function(
             names,
             [this, key](int64_t count) {
               given_.push_back({key, {count > 0 ? "true" : "false"}});
             },
             Help(o))
          ->group(Group(o));
    } else if (o.kind == config::OptionKind::kList) {
      app->add_option_function<std::vector<std::string>>(
             o.flag(),
             [this, key](const std::vector<std::string>& values) {
               given_.push_back({key, values.empty() ? std::vector<std::string>{""} : values});
             },
             Help(o))
          ->delimiter(',')
          ->allow_extra_args(false)
          ->type_name(o.spec.value_name.empty() ? "TEXT" : o.spec.value_name)
          ->group(Group(o));
    } else {
      app->add_option_function<std::string>(
             o.flag(), [this, key](const std::string& value) { given_.push_back({key, {value}}); },
             Help(o))
          ->type_name(o.spec.value_name.empty() ? o.range : o.spec.value_name)
          ->group(Group(o));
    }
  }
}

absl::Status ConfigFlags::Apply() {
  if (!config_file_.empty()) VIGIL_RETURN_IF_ERROR(ReadConfigFile(config_file_, set_));
  for (const auto& [key, values] : given_) {
    const config::Option* option = set_->Find(key);
    const std::string flag = option->flag();
    for (const std::string& value : values) {
      VIGIL_RETURN_IF_ERROR(set_->Set(key, value, flag));
    }
  }
  return absl::OkStatus();
}

bool ConfigFlags::Given(const std::string& key) const {
  for (const auto& [k, values] : given_) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace vigil::cli
