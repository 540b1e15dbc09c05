// BatchingScorer: the dynamic batcher. A Scorer that queues each call by priority class and
// deadline, gathers calls into batches by BatchPolicy, and scores each batch with one call to
// the scorer it wraps, on its own thread, so that many concurrent single-row calls cost one
// batched model walk.
//
// A call of a class with no queue delay that finds every queue empty and a core free is scored
// on the caller's own thread at once (no handoff: the common case at moderate load) when the
// wrapped scorer's latency is bounded by construction (Scorer::latency_bounded: the CPU tree
// walk) and its recent slowest call, twice over, fits the deadline (config.inline_when_idle);
// otherwise it queues. A call waits at most until its deadline: one that cannot be scored in time returns
// kDeadlineExceeded (the decision then goes rules-only, degraded) instead of waiting longer; a
// call that finds its class's queue full returns kResourceExhausted at once (the server answers
// 503 Retry-After). Memory is bounded by the queue limits whatever the load.
//
// Thread safety: Score and Explain may be called from any number of threads.
#ifndef VIGIL_BATCHING_BATCHING_SCORER_H_
#define VIGIL_BATCHING_BATCHING_SCORER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/metrics/value_histogram.h"
#include "vigil/model/scorer.h"

namespace vigil {

// The kDeadlineExceeded message of a call whose deadline passed while it waited in the queue,
// before any model saw it: the batcher was overloaded (the model was not late).
inline constexpr char kExpiredInQueueMessage[] =
    "no model score before the deadline (expired in the queue)";

class BatchingScorer final : public Scorer {
 public:
  // Starts the batcher thread. Fails if the config does not validate.
  // "batch_sizes", when given, records the rows of every batch scored (it must outlive the
  // batcher).
  static absl::StatusOr<std::unique_ptr<BatchingScorer>> Create(
      std::shared_ptr<const Scorer> inner, BatchPolicyConfig config,
      ValueHistogram* batch_sizes = nullptr);
  // Stops the thread; calls still waiting return kUnavailable.
  ~BatchingScorer() override;

  const std::string& model_version() const override { return inner_->model_version(); }
  size_t row_width() const override { return inner_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override;
  // Explanations are per row and not batched: straight to the wrapped scorer.
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return inner_->Explain(row, k);
  }

  struct Stats {
    uint64_t calls = 0, batches = 0, expired = 0, rejected = 0;
    uint64_t inline_calls = 0;  // scored on the caller's thread (see Score)
  };
  Stats stats() const;
  size_t queued(Priority p) const;  // calls waiting in that class's queue now

 private:
  struct Pending;
  BatchingScorer(std::shared_ptr<const Scorer> inner, BatchPolicyConfig config,
                 ValueHistogram* batch_sizes);
  void Run();
  void Complete(Pending& p, absl::Status status) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordDuration(std::chrono::steady_clock::duration took) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<const Scorer> inner_;
  ValueHistogram* batch_sizes_;
  const unsigned max_inline_;  // callers scoring on their own thread at once (the cores)
  mutable absl::Mutex mu_;
  mutable unsigned inline_running_ ABSL_GUARDED_BY(mu_) = 0;
  // The model's recent slowest call (decaying): an inline call must fit twice it.
  mutable std::chrono::steady_clock::duration recent_max_ ABSL_GUARDED_BY(mu_){0};
  mutable BatchPolicy policy_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<Pending>> pending_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  mutable bool arrived_ ABSL_GUARDED_BY(mu_) = false;  // wakes the thread early
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  mutable Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace vigil

#endif  // VIGIL_BATCHING_BATCHING_SCORER_H_
