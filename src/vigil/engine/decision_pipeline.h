// Assembles the decision stage from files: the policy (with its list library), and optionally
// a model behind its scorer chain (model_chain.h) and watchlists behind a Screener. `vigil
// replay --policy`, `vigil policy` and `vigil bench drift` use it.
#ifndef VIGIL_ENGINE_DECISION_PIPELINE_H_
#define VIGIL_ENGINE_DECISION_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/engine/model_chain.h"
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
  // The model's scorer chain (model_chain.h), in replay mode unless told otherwise. With
  // chain.gpu.enabled the model is also scored on the GPU (docs/gpu.md), which needs model_path
  // and fails (kUnavailable, naming chain.gpu_setting) without a usable device or in a build without the
  // CUDA backend.
  ModelChainOptions chain = ModelChainOptions::For(PipelineConfig{}, PipelineMode::kReplay);
};

// The engine's feature schema, the policy, the model (named "model@<sha256 prefix>", as
// vigil serve names it) and the screener. Errors name the file that could not be read or checked, or the GPU that could
// not be used.
absl::StatusOr<std::unique_ptr<DecisionMaker>> BuildDecisionMaker(const DecisionConfig& config);

}  // namespace vigil

#endif  // VIGIL_ENGINE_DECISION_PIPELINE_H_
