#include "vigil/cli/data_files.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_config.h"
#include "vigil/engine/pipeline_options.h"

namespace vigil::cli {
namespace {

constexpr char kFxRelativePath[] = "data/fx_rates.csv";

std::vector<std::filesystem::path> DefaultFxCandidates() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::path(kFxRelativePath)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
      candidates.push_back(dir / kFxRelativePath);
      if (dir == dir.root_path()) break;
    }
  }
  if (const char* data_dir = std::getenv("VIGIL_DATA_DIR"); data_dir != nullptr && *data_dir) {
    candidates.push_back(fs::path(data_dir) / "fx_rates.csv");
  }
  return candidates;
}

}  // namespace

absl::StatusOr<FxRates> LoadFxRates(const std::string& flag) {
  if (!flag.empty()) return FxRates::LoadFile(flag);
  std::string tried;
  for (const std::filesystem::path& p : DefaultFxCandidates()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return FxRates::LoadFile(p.string());
    absl::StrAppend(&tried, tried.empty() ? "" : ", ", p.string());
  }
  return absl::NotFoundError(
      absl::StrCat("no FX rates table found (tried ", tried, "); pass --fx-rates FILE"));
}

CLI::Option* AddDataDirOption(CLI::App* app, std::string* dir, DataDirUse use) {
  // The help of the pipeline's own data_dir option (serve, replay, bench): one text everywhere.
  static const std::string* const help = [] {
    PipelineConfig config;
    config::OptionSet set;
    DeclarePipelineOptions(&config, &set);
    const config::Option* declared = set.Find("data_dir");
    VIGIL_CHECK(declared != nullptr);
    return new std::string(declared->spec.help);
  }();
  CLI::Option* option = app->add_option("--data-dir", *dir, *help)->type_name("DIR")->required();
  if (use == DataDirUse::kExisting) {
    option->check(CLI::Validator(
        [](const std::string& value) -> std::string {
          std::error_code ec;
          if (std::filesystem::is_directory(value, ec)) return "";
          return absl::StrCat("data dir '", value, "' does not exist (", kDataDirHint, ")");
        },
        ""));
  }
  return option;
}

}  // namespace vigil::cli
