#include "vigil/engine/decision_pipeline.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "vigil/batching/backend_router.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/engine/model_registry.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/cuda/cuda_scorer.h"
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

absl::StatusOr<std::unique_ptr<BackendRouter>> RouteToGpu(std::shared_ptr<const TreeEnsemble> model,
                                                          std::shared_ptr<const Scorer> cpu,
                                                          const std::string& version,
                                                          const GpuRouting& gpu) {
  CudaScorerOptions options;
  options.device = gpu.device;
  options.timeout = gpu.timeout;
  options.chunk_rows = 65536;
  // Serve's batches (at most 4,096 rows) and replay's (256) stay far below the ~33,000 rows from
  // which the ranked kernels are picked (ChoosePredictVariant): building their nodes would only
  // add to every model load (40 ms for 1000 trees of depth 8: cuda_scorer_benchmark's
  // ranked_build/d8x1000 on a 2-core host).
  options.ranked_nodes = false;
  VIGIL_ASSIGN_OR_RETURN(
      std::unique_ptr<CudaScorer> scorer,
      CudaScorer::Create(std::move(model), *FeatureExtractor::Schema(), version, options));
  BackendRouterConfig router;
  router.gpu_min_rows = gpu.min_rows;
  router.gpu_timeout = gpu.timeout;
  router.breaker.budget = gpu.timeout;
  return BackendRouter::Create(std::move(cpu), std::shared_ptr<const Scorer>(std::move(scorer)),
                               router);
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
    const std::string version = ModelVersionName(Sha256Hex(bytes));
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<CpuScorer> cpu,
                           CpuScorer::Create(model, *FeatureExtractor::Schema(), version));
    scorer = std::move(cpu);
    if (config.gpu) {
      // Bulk work: any batch of 64 rows or more goes to the GPU, which has no deadline to keep
      // in a replay but 10 s (a batch it fails is scored on the CPU: cpu-fallback).
      GpuRouting routing;
      routing.device = config.gpu_device;
      routing.min_rows = {64, 64, 64};
      routing.timeout = std::chrono::seconds(10);
      absl::StatusOr<std::unique_ptr<BackendRouter>> routed =
          RouteToGpu(model, std::move(scorer), version, routing);
      if (!routed.ok()) {
        return absl::Status(routed.status().code(),
                            absl::StrCat("--gpu: the CUDA backend cannot start: ",
                                         routed.status().message()));
      }
      scorer = *std::move(routed);
    }
  } else if (config.gpu) {
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
