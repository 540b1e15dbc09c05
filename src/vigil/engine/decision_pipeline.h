// Assembles the decision stage from files: the policy (with its list library), and optionally
// a model behind a CpuScorer and watchlists behind a Screener. `vigil replay --policy` uses it.
#ifndef VIGIL_ENGINE_DECISION_PIPELINE_H_
#define VIGIL_ENGINE_DECISION_PIPELINE_H_

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/batching/backend_router.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/model/tree_ensemble.h"
#include "vigil/rules/policy.h"
#include "vigil/rules/policy_inputs.h"
#include "vigil/rules/policy_store.h"

namespace vigil {

// Reads and checks a policy file. The list library is "lists_dir", or when that is empty the
// directory "lists" beside the policy if there is one (none otherwise). Errors: the file
// cannot be read (kNotFound), the lists do not load, or the policy does not check (the
// message lists every problem).
absl::StatusOr<std::shared_ptr<const Policy>> LoadPolicyFile(const std::string& path,
                                                             const std::string& lists_dir,
                                                             const PolicyInputLayout& layout);

// The list library in "lists_dir", or when that is empty in the directory "lists" beside
// "policy_path" if there is one; an empty library otherwise.
absl::StatusOr<ListLibrary> LoadListLibrary(const std::string& lists_dir,
                                            const std::string& policy_path);

// The policy versions of a data directory (in <data_dir>/policies), checked against the
// engine's feature schema.
absl::StatusOr<std::unique_ptr<PolicyStore>> OpenPolicyStore(const std::string& data_dir,
                                                             ListLibrary library,
                                                             const Clock& clock);

struct DecisionConfig {
  std::string policy_path;
  std::string lists_dir;   // see LoadPolicyFile
  std::string model_path;  // empty: rules only
  // Watchlists every decision is screened against (screening::LoadWatchlistSource: list files
  // or OFAC folders); empty: no screening. options.screening_min_score bounds the hits.
  std::vector<std::string> screening_lists;
  DecisionOptions options;
  // Score batches on the GPU (docs/gpu.md): the model's CudaScorer behind a BackendRouter, the
  // CPU scoring what the GPU fails. Needs model_path; fails (kUnavailable, naming --gpu) without
  // a usable device or in a build without the CUDA backend.
  bool gpu = false;
  int gpu_device = 0;
};

// How the GPU scores beside the CPU (docs/gpu.md): the device, the per-class row thresholds
// (BackendRouterConfig::gpu_min_rows) and the longest a batch may spend on the GPU before the
// CPU scores it instead.
struct GpuRouting {
  int device = 0;
  std::array<size_t, 3> min_rows = BackendRouterConfig{}.gpu_min_rows;
  std::chrono::microseconds timeout = BackendRouterConfig{}.gpu_timeout;
};

// "cpu" and a CudaScorer of the same model, under the engine's feature schema and the same
// version, behind a BackendRouter; what vigil serve (gpu.enabled) and vigil replay (--gpu) score
// with. The CudaScorer's bulk buffers hold 65,536 rows a half (the batches of serve and replay
// are thousands of rows; larger ones pass in more chunks), it has no ranked nodes (batches that
// small never run the ranked kernels), and the router's breaker counts a GPU batch as slow only
// past `timeout`. Errors are CudaScorer::Create's (kUnavailable without a usable device or in a
// build without CUDA), for the caller to name its setting.
absl::StatusOr<std::unique_ptr<BackendRouter>> RouteToGpu(std::shared_ptr<const TreeEnsemble> model,
                                                          std::shared_ptr<const Scorer> cpu,
                                                          const std::string& version,
                                                          const GpuRouting& gpu);

// The engine's feature schema, the policy, the model (named "<file name>@<sha256 prefix>") and
// the screener. Errors name the file that could not be read or checked, or the GPU that could
// not be used.
absl::StatusOr<std::unique_ptr<DecisionMaker>> BuildDecisionMaker(const DecisionConfig& config);

}  // namespace vigil

#endif  // VIGIL_ENGINE_DECISION_PIPELINE_H_
