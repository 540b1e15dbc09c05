// CircuitBreaker: stops asking the model when it keeps failing or missing its budget, so that
// decisions go rules-only at once instead of each waiting out its deadline, and probes now and
// then to find out when the model is back. A pure state machine over the times it is given.
//
//   closed ──(failure_threshold failures in a row)──► open ──(open_for passed)──► half-open
//     ▲                                                ▲                            │
//     └────────────(a probe succeeds)──────────────────┼────(a probe fails)─────────┘
//
// Thread safety: none (BreakerScorer serializes it).
#ifndef VIGIL_BATCHING_CIRCUIT_BREAKER_H_
#define VIGIL_BATCHING_CIRCUIT_BREAKER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/common/clock.h"
#include "vigil/model/scorer.h"

namespace vigil {

struct CircuitBreakerConfig {
  int failure_threshold = 5;                      // consecutive failures that open it
  std::chrono::microseconds budget{2000};         // a call slower than this counts as a failure
  std::chrono::microseconds open_for{1'000'000};  // before probing again
  int probes = 1;                                 // calls let through while half-open
  // false: only failed calls count, however slow (a replay: a backtest must not depend on how
  // busy the machine is); the budget is then not consulted.
  bool count_slow_calls = true;
};

class CircuitBreaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };
  static std::string_view StateName(State s);  // "closed", "open", "half-open"

  explicit CircuitBreaker(CircuitBreakerConfig config) : config_(config) {}

  // Whether a call may go to the model at "now" (a half-open breaker lets `probes` through).
  bool Allow(SteadyTime now);
  // The outcome of a call that Allow let through: ok and within budget, or not.
  void Record(SteadyTime now, bool ok, std::chrono::microseconds took);

  State state() const { return state_; }
  uint64_t openings() const { return openings_; }

 private:
  CircuitBreakerConfig config_;
  State state_ = State::kClosed;
  int failures_ = 0;
  int probes_out_ = 0;
  SteadyTime opened_at_{};
  uint64_t openings_ = 0;
};

// A Scorer guarded by a CircuitBreaker: while the breaker is open, Score returns kUnavailable
// at once (the decision goes rules-only, degraded, naming the breaker), and every call's outcome
// feeds the breaker, except kResourceExhausted (an overloaded queue is not an unhealthy model).
// Place it inside the batcher, around the model itself: its budget then measures the model's
// time, not the time a request queued.
class BreakerScorer final : public Scorer {
 public:
  // Told of every state change (for the log and metrics), outside the breaker's lock.
  using StateChange = std::function<void(CircuitBreaker::State from, CircuitBreaker::State to)>;

  // `clock` (its Monotonic time) times the calls and the open period; it must outlive this.
  BreakerScorer(std::shared_ptr<const Scorer> inner, CircuitBreakerConfig config,
                StateChange on_change = nullptr, const Clock& clock = RealClock())
      : inner_(std::move(inner)),
        breaker_(config),
        on_change_(std::move(on_change)),
        clock_(&clock) {}

  const std::string& model_version() const override { return inner_->model_version(); }
  size_t row_width() const override { return inner_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override;
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return inner_->Explain(row, k);
  }
  bool latency_bounded() const override { return inner_->latency_bounded(); }
  CircuitBreaker::State state() const;
  uint64_t openings() const;

 private:
  std::shared_ptr<const Scorer> inner_;
  mutable absl::Mutex mu_;
  mutable CircuitBreaker breaker_ ABSL_GUARDED_BY(mu_);
  StateChange on_change_;
  const Clock* clock_;
};

}  // namespace vigil

#endif  // VIGIL_BATCHING_CIRCUIT_BREAKER_H_
