// ModelDeployment: which models decide now. A champion decides the traffic; a challenger (a
// canary) may decide a share of it, chosen by transaction id so that a payment and its retries
// always meet the same model, in this process and after a restart; a shadow model may score
// every transaction alongside without deciding, to be compared before it is trusted.
//
// Activation (the semantics of POST /v1/engine/activate {model_ref, traffic_weight, shadow}):
//   shadow: true                  → the model becomes the shadow (traffic_weight must be 0);
//   traffic_weight 1              → promoted to champion; the challenger slot is cleared (and
//                                   the shadow slot when it held this model);
//   0 < traffic_weight < 1        → the challenger, deciding that share of the traffic;
//   traffic_weight 0 (no shadow)  → naming the champion clears the challenger and the shadow;
//                                   naming another model is an error.
// A new snapshot replaces the old one atomically: a request holds the snapshot it started with.
//
// Durability: with a record path, every Activate is stored there (DeploymentRecord) before it
// takes effect, and Restore brings the stored deployment back at the next start; an activation
// that cannot be stored is refused. SetChampion (the command line's initial model) stores
// nothing, so it never outlives an activation made later, and never masks one made before.
//
// Thread safety: all methods may be called concurrently.
#ifndef VIGIL_DECISION_MODEL_DEPLOYMENT_H_
#define VIGIL_DECISION_MODEL_DEPLOYMENT_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/decision/deployment_record.h"
#include "vigil/decision/model_registry.h"
#include "vigil/model/scorer.h"

namespace vigil {

class ModelDeployment {
 public:
  // A model from the registry, ready to serve: its decision maker (behind the batcher and the
  // breaker) and a direct scorer (for shadow scoring, which never waits in a queue).
  struct Model {
    std::string ref;      // SHA-256 of the model file
    std::string version;  // as recorded in decisions
    std::shared_ptr<const DecisionMaker> decider;
    std::shared_ptr<const Scorer> direct;
    // The batcher and breaker inside "decider" (for metrics); may be null.
    std::shared_ptr<const BatchingScorer> batcher;
    std::shared_ptr<const BreakerScorer> breaker;
    // The CPU/GPU router inside the breaker (for metrics); null when the model scores on the
    // CPU alone.
    std::shared_ptr<const BackendRouter> router;
  };
  struct Snapshot {
    std::shared_ptr<const Model> champion;  // null: rules only (then `rules` decides)
    std::shared_ptr<const Model> challenger;
    double traffic_weight = 0;  // share of the traffic the challenger decides
    std::shared_ptr<const Model> shadow;
    std::shared_ptr<const DecisionMaker> rules;  // decides when there is no champion
  };
  using ModelLoader = std::function<absl::StatusOr<std::shared_ptr<const Model>>(
      const ModelRegistry::Entry& entry)>;

  // "rules" decides while no champion is set; "load" readies a registry model. "record_path":
  // where activations are stored (see Durability above); empty: they are not.
  ModelDeployment(ModelRegistry registry, ModelLoader load,
                  std::shared_ptr<const DecisionMaker> rules, std::string record_path = "");

  // Makes "ref" (resolved in the registry) the champion, for this process only.
  absl::Status SetChampion(std::string_view ref);
  // See the table above. Errors: kNotFound (no such model), kInvalidArgument (weight outside
  // [0, 1], shadow with a weight, weight 0 naming a model that is not the champion, or no
  // champion to be a challenger of), the loader's error (the model does not bind), or
  // kUnavailable (the activation could not be stored; nothing changed).
  absl::StatusOr<std::shared_ptr<const Snapshot>> Activate(std::string_view ref,
                                                           double traffic_weight, bool shadow);
  // Deploys what "record" names, as stored (nothing is written). Errors: a model it names is
  // not in the registry or does not load (kFailedPrecondition, naming the slot and the ref).
  absl::Status Restore(const DeploymentRecord& record);

  std::shared_ptr<const Snapshot> Current() const;

  // Whether the challenger of a deployment with this weight decides the transaction with this
  // id: a stable 64-bit hash of the id (FNV-1a, then MurmurHash3's finalizer), as a fraction of
  // 2^64, below the weight.
  static bool RoutesToChallenger(std::string_view transaction_id, double traffic_weight);

  const ModelRegistry& registry() const { return registry_; }

 private:
  absl::StatusOr<std::shared_ptr<const Model>> Load(std::string_view ref);
  // Activate's work; stores the result first when "durable" and there is a record path.
  absl::StatusOr<std::shared_ptr<const Snapshot>> Apply(std::string_view ref,
                                                        double traffic_weight, bool shadow,
                                                        bool durable);

  ModelRegistry registry_;
  ModelLoader load_;
  const std::string record_path_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Snapshot> current_ ABSL_GUARDED_BY(mu_);
  absl::Mutex activate_mu_;  // one activation at a time (loading may take a while)
};

}  // namespace vigil

#endif  // VIGIL_DECISION_MODEL_DEPLOYMENT_H_
