#include "vigil/engine/model_chain.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/common/status_macros.h"
#include "vigil/decision/model_registry.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/cuda/cuda_scorer.h"

namespace vigil {
namespace {

// A CudaScorer of the same model, feature schema and version as "cpu" (the two score bit for
// bit alike, so a decision does not depend on the backend that scored it), behind a
// BackendRouter with "cpu".
absl::StatusOr<std::unique_ptr<BackendRouter>> RouteToGpu(std::shared_ptr<const TreeEnsemble> model,
                                                          std::shared_ptr<const Scorer> cpu,
                                                          const std::string& version,
                                                          const GpuSection& gpu) {
  CudaScorerOptions options;
  options.device = gpu.device;
  options.timeout = gpu.timeout;
  // Bulk buffers of 65,536 rows a half: the batches of serve and replay are thousands of rows;
  // larger ones pass in more chunks.
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
  // The router's own breaker counts a GPU batch as slow only past the timeout.
  router.breaker.budget = gpu.timeout;
  return BackendRouter::Create(std::move(cpu), std::shared_ptr<const Scorer>(std::move(scorer)),
                               router);
}

}  // namespace

ModelChainOptions ModelChainOptions::For(const PipelineConfig& config, PipelineMode mode) {
  ModelChainOptions o;
  o.mode = mode;
  o.batcher = config.batcher;
  o.breaker = config.breaker;
  o.gpu = config.gpu;
  switch (mode) {
    case PipelineMode::kServe:
      // A batch may spend up to gpu.timeout_ms on the GPU before the CPU starts on it: the
      // model's breaker allows that on top of breaker.budget_ms, so that a stalled GPU, which
      // the router already absorbs, does not also open the model's breaker.
      if (config.gpu.enabled) o.breaker.budget += config.gpu.timeout;
      break;
    case PipelineMode::kReplay:
      for (ClassPolicy& c : o.batcher.classes) {
        c.max_queue_delay = std::chrono::microseconds(0);
        c.min_batch = 1;
      }
      o.batcher.inline_when_idle = true;
      o.breaker.count_slow_calls = false;
      o.gpu.min_rows = {64, 64, 64};
      o.gpu.timeout = std::chrono::seconds(10);
      break;
  }
  return o;
}

absl::StatusOr<std::shared_ptr<ModelDeployment::Model>> BuildModelChain(
    std::shared_ptr<const TreeEnsemble> ensemble, const std::string& ref,
    const ModelChainOptions& options) {
  const ModelChainHooks& hooks = options.hooks;
  auto model = std::make_shared<ModelDeployment::Model>();
  model->ref = ref;
  model->version = ModelVersionName(ref);
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<CpuScorer> cpu,
                         CpuScorer::Create(ensemble, *FeatureExtractor::Schema(), model->version));
  // Shadows and frozen models are scored through `direct`, never queued: on the CPU.
  model->direct = std::move(cpu);
  std::shared_ptr<const Scorer> scorer = model->direct;
  if (options.gpu.enabled) {
    absl::StatusOr<std::unique_ptr<BackendRouter>> routed =
        RouteToGpu(std::move(ensemble), model->direct, model->version, options.gpu);
    if (!routed.ok()) {
      return absl::Status(routed.status().code(),
                          absl::StrCat(options.gpu_setting, ": the CUDA backend cannot score ",
                                       model->version, ": ", routed.status().message()));
    }
    model->router = hooks.adopt_router ? hooks.adopt_router(*std::move(routed))
                                       : std::shared_ptr<const BackendRouter>(*std::move(routed));
    scorer = model->router;
  }
  if (hooks.wrap_model) scorer = hooks.wrap_model(std::move(scorer));
  BreakerScorer::StateChange on_change;
  if (hooks.on_breaker_change) {
    on_change = [notify = hooks.on_breaker_change, version = model->version](
                    CircuitBreaker::State from, CircuitBreaker::State to) {
      notify(version, from, to);
    };
  }
  auto breaker = std::make_shared<BreakerScorer>(std::move(scorer), options.breaker,
                                                 std::move(on_change), *options.clock);
  model->breaker = breaker;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<BatchingScorer> batcher,
                         BatchingScorer::Create(std::move(breaker), options.batcher,
                                                hooks.batch_sizes));
  model->batcher = std::move(batcher);
  return model;
}

}  // namespace vigil
