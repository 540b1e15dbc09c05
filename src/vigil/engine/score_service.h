// ScoreService: what `POST /v1/score` does, independent of HTTP: parse one transaction (the JSON
// of docs/ingest.md), update the accounts' features, decide, and answer with the Decision JSON.
// The HTTP server of `vigil serve` is a thin face over it.
//
// Idempotency: a repeated transaction id is answered with the first decision's exact reply, and
// the features are not updated twice; a duplicate that arrives while the first is still being
// decided waits for it. The last `idempotency_capacity` transaction ids are remembered (oldest
// forgotten first).
//
// Replies: 200 with the Decision; 400 when the body is not a valid transaction (the error names
// the field and the reason); 422 when the features refuse it (say, a currency without an FX
// rate); 503 when the model path is overloaded (its queue is full): nothing was decided, the
// features were updated once and their row is kept, so a retry with the same id is decided on
// that row without counting the payment twice. Error bodies are
// {"error":{"code":...,"field":...,"message":...}}.
//
// Thread safety: Score may be called from any number of threads. Feature updates are
// serialized (one lock); parsing, deciding and encoding run in parallel.
#ifndef VIGIL_ENGINE_SCORE_SERVICE_H_
#define VIGIL_ENGINE_SCORE_SERVICE_H_

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/clock.h"
#include "vigil/common/ids.h"
#include "vigil/core/fx_rates.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/features/feature_config.h"
#include "vigil/features/feature_extractor.h"

namespace vigil {

struct ScoreServiceOptions {
  FeatureConfig features;
  size_t idempotency_capacity = 1'000'000;
  // How long a request may wait for a model score before it is decided on rules alone
  // (degraded): the SLA budget of the decision path.
  std::chrono::microseconds score_budget{200'000};
};

class ScoreService {
 public:
  // "decider" must use FeatureExtractor::Schema() (the layout BuildDecisionMaker gives).
  ScoreService(const FxRates& fx, ScoreServiceOptions options,
               std::shared_ptr<const DecisionMaker> decider, const Clock& clock);

  struct Reply {
    int status = 200;
    std::string body;
  };
  Reply Score(std::string_view body);

 private:
  struct Entry;
  Reply Decide(std::string_view body, const Transaction& tx);

  ScoreServiceOptions options_;
  std::shared_ptr<const DecisionMaker> decider_;
  mutable UuidV7Generator ids_;
  absl::Mutex features_mu_;
  FeatureExtractor extractor_ ABSL_GUARDED_BY(features_mu_);
  absl::Mutex seen_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> seen_ ABSL_GUARDED_BY(seen_mu_);
  std::deque<std::string> seen_order_ ABSL_GUARDED_BY(seen_mu_);
  // Feature rows of transactions answered 503, kept for their retry (bounded like seen_).
  absl::flat_hash_map<std::string, std::vector<double>> unscored_ ABSL_GUARDED_BY(seen_mu_);
  std::deque<std::string> unscored_order_ ABSL_GUARDED_BY(seen_mu_);
};

}  // namespace vigil

#endif  // VIGIL_ENGINE_SCORE_SERVICE_H_
