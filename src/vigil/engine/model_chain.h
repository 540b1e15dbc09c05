// The model's scorer chain: what stands between a decision and a tree ensemble, assembled here
// and nowhere else, for `vigil serve`, `vigil replay` and `vigil bench`:
//
//   DecisionMaker → BatchingScorer → BreakerScorer → CpuScorer
//                                                  → BackendRouter → {CpuScorer, CudaScorer}
//                                                    (gpu.enabled)
//
// The batcher orders calls by class and gathers them into batches; the breaker, inside it,
// measures the model's own time and sends decisions rules-only while the model fails; the
// router, inside the breaker, sends each whole batch to the CPU or the GPU. A replay is
// production on history: it runs this chain, not a shortcut to the CPU scorer. What a mode
// changes is timing, never what a call is answered:
//
//   kServe   the batcher waits as configured (batcher.*), a call slower than breaker.budget_ms
//            (plus gpu.timeout_ms with a GPU) counts as a failure, and the GPU takes the classes
//            gpu.min_rows names.
//   kReplay  no class waits for more calls (max_queue_delay 0, min_batch 1): replay submits one
//            batch at a time, and each is scored as soon as it arrives, on the caller's thread
//            when the scorer's latency is bounded (the CPU). A call's duration never counts
//            against the breaker (breaker count_slow_calls off): how busy the replaying
//            machine is must not change a backtest's decisions; failures still open it, as in
//            production. With a GPU, every batch of 64 rows or more goes to it, with 10 s
//            before the CPU takes a batch over.
//
// Thread safety: BuildModelChain is reentrant; what it returns is safe for concurrent use.
#ifndef VIGIL_ENGINE_MODEL_CHAIN_H_
#define VIGIL_ENGINE_MODEL_CHAIN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/common/clock.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/engine/pipeline_config.h"
#include "vigil/model/scorer.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

class ValueHistogram;

enum class PipelineMode : uint8_t { kServe, kReplay };

// Where the caller looks into the chain. Every member may be left empty.
struct ModelChainHooks {
  // Wraps the model as the breaker sees it (with a GPU: the router, CPU and GPU together), say
  // to make it slow or failing in a test or a drill.
  std::function<std::shared_ptr<const Scorer>(std::shared_ptr<const Scorer>)> wrap_model;
  // Told of every change of a model's breaker, with the model's version, outside its lock.
  std::function<void(const std::string& version, CircuitBreaker::State from,
                     CircuitBreaker::State to)>
      on_breaker_change;
  // Takes each BackendRouter built, and returns the pointer the chain holds it by (serve keeps
  // its counts for /metrics after the model is gone); empty: plain ownership.
  std::function<std::shared_ptr<const BackendRouter>(std::unique_ptr<BackendRouter>)> adopt_router;
  // The batcher's batch sizes, observed per batch scored; must outlive the chain.
  ValueHistogram* batch_sizes = nullptr;
};

struct ModelChainOptions {
  PipelineMode mode = PipelineMode::kServe;
  BatchPolicyConfig batcher = BatchPolicyConfig::Fast();
  CircuitBreakerConfig breaker;
  GpuSection gpu;
  ModelChainHooks hooks;
  // How the caller's user turns the GPU on, named when it cannot score the model.
  std::string gpu_setting = "gpu.enabled";
  // Times the breaker's calls and open period; must outlive the chain.
  const Clock* clock = &RealClock();

  // The chain of `config`'s batcher, breaker and gpu sections in `mode` (see the top).
  static ModelChainOptions For(const PipelineConfig& config, PipelineMode mode);
};

// A deployable model of `ensemble` (whose file's SHA-256 is `ref`; its version in decisions is
// ModelVersionName(ref)): `direct` (its CpuScorer), `router` (with gpu.enabled), `breaker` and
// `batcher`; `decider` is left for the caller, which knows the policy. Errors: the ensemble does
// not fit the engine's feature schema (kInvalidArgument), the GPU cannot take it
// ("<gpu_setting>: the CUDA backend cannot score <version>: <reason>", kUnavailable without a
// usable device or in a build without CUDA), or the batcher's configuration is invalid.
absl::StatusOr<std::shared_ptr<ModelDeployment::Model>> BuildModelChain(
    std::shared_ptr<const TreeEnsemble> ensemble, const std::string& ref,
    const ModelChainOptions& options);

}  // namespace vigil

#endif  // VIGIL_ENGINE_MODEL_CHAIN_H_
