#include "vigil/engine/decision_pipeline.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/decision/model_registry.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/model_file.h"
#include "vigil/screening/screener.h"

namespace vigil {
namespace {

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": read error"));
  return text.str();
}

}  // namespace

absl::StatusOr<ListLibrary> LoadListLibrary(const std::string& lists_dir,
                                            const std::string& policy_path) {
  std::string lists = lists_dir;
  if (lists.empty() && !policy_path.empty()) {
    const auto beside = std::filesystem::path(policy_path).parent_path() / "lists";
    if (std::filesystem::is_directory(beside)) lists = beside.string();
  }
  if (lists.empty()) return ListLibrary{};
  return ListLibrary::LoadDirectory(lists);
}

absl::StatusOr<std::unique_ptr<PolicyStore>> OpenPolicyStore(const std::string& data_dir,
                                                             ListLibrary library,
                                                             const Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("data dir ", data_dir, ": ", ec.message()));
  }
  return PolicyStore::Open((std::filesystem::path(data_dir) / "policies").string(),
                           PolicyInputLayout(FeatureExtractor::Schema()), std::move(library),
                           clock);
}

absl::StatusOr<std::shared_ptr<const Policy>> LoadPolicyFile(const std::string& path,
                                                             const std::string& lists_dir,
                                                             const PolicyInputLayout& layout) {
  VIGIL_ASSIGN_OR_RETURN(ListLibrary library, LoadListLibrary(lists_dir, path));
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return Policy::Parse(text, path, layout, library);
}

absl::StatusOr<std::unique_ptr<DecisionMaker>> BuildDecisionMaker(const DecisionConfig& config) {
  PolicyInputLayout layout(FeatureExtractor::Schema());
  VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const Policy> policy,
                         LoadPolicyFile(config.policy_path, config.lists_dir, layout));
  std::shared_ptr<const Scorer> scorer;
  if (!config.model_path.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string bytes, ReadText(config.model_path));
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const TreeEnsemble> model,
                           LoadModelFile(config.model_path));
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<ModelDeployment::Model> chain,
                           BuildModelChain(std::move(model), Sha256Hex(bytes), config.chain));
    scorer = chain->batcher;
  } else if (config.chain.gpu.enabled) {
    return absl::InvalidArgumentError("--gpu needs --model (the GPU scores the model)");
  }
  std::shared_ptr<const screening::Screener> screener;
  if (!config.screening_lists.empty()) {
    screening::ScreenerConfig screening_config;
    screening_config.sources = config.screening_lists;
    VIGIL_ASSIGN_OR_RETURN(screener, screening::Screener::Create(std::move(screening_config)));
  }
  return std::make_unique<DecisionMaker>(std::move(policy), std::move(scorer), std::move(layout),
                                         config.options, std::move(screener));
}

}  // namespace vigil
