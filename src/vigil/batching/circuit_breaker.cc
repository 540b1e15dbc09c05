#include "vigil/batching/circuit_breaker.h"

#include "absl/strings/str_cat.h"

namespace vigil {

std::string_view CircuitBreaker::StateName(State s) {
  switch (s) {
    case State::kClosed:
      return "closed";
    case State::kOpen:
      return "open";
    case State::kHalfOpen:
      return "half-open";
  }
  return "?";
}

bool CircuitBreaker::Allow(SteadyTime now) {
  if (state_ == State::kOpen) {
    if (now - opened_at_ < config_.open_for) return false;
    state_ = State::kHalfOpen;
    probes_out_ = 0;
  }
  if (state_ == State::kHalfOpen) {
    if (probes_out_ >= config_.probes) return false;
    ++probes_out_;
  }
  return true;
}

void CircuitBreaker::Record(SteadyTime now, bool ok, std::chrono::microseconds took) {
  const bool success = ok && (!config_.count_slow_calls || took <= config_.budget);
  if (state_ == State::kHalfOpen) {
    if (success) {
      state_ = State::kClosed;
      failures_ = 0;
    } else {
      state_ = State::kOpen;
      opened_at_ = now;
      ++openings_;
    }
    return;
  }
  if (state_ == State::kOpen) return;  // a call admitted before it opened: already decided
  if (success) {
    failures_ = 0;
    return;
  }
  if (++failures_ >= config_.failure_threshold) {
    state_ = State::kOpen;
    opened_at_ = now;
    ++openings_;
  }
}

absl::Status BreakerScorer::Score(absl::Span<const double> rows, size_t n,
                                  absl::Span<double> scores, const ScoreContext& context) const {
  {
    CircuitBreaker::State from, to;
    bool allowed;
    {
      absl::MutexLock lock(&mu_);
      from = breaker_.state();
      allowed = breaker_.Allow(clock_->Monotonic());
      to = breaker_.state();
    }
    if (from != to && on_change_) on_change_(from, to);
    if (!allowed) {
      return absl::UnavailableError(
          "the model's circuit breaker is open (it kept failing or missing its budget)");
    }
  }
  const auto start = clock_->Monotonic();
  const absl::Status status = inner_->Score(rows, n, scores, context);
  const auto end = clock_->Monotonic();
  // A full queue says the load is too high, not that the model is unhealthy.
  if (absl::IsResourceExhausted(status)) return status;
  CircuitBreaker::State from, to;
  {
    absl::MutexLock lock(&mu_);
    from = breaker_.state();
    breaker_.Record(end, status.ok(),
                    std::chrono::duration_cast<std::chrono::microseconds>(end - start));
    to = breaker_.state();
  }
  if (from != to && on_change_) on_change_(from, to);
  return status;
}

CircuitBreaker::State BreakerScorer::state() const {
  absl::MutexLock lock(&mu_);
  return breaker_.state();
}

uint64_t BreakerScorer::openings() const {
  absl::MutexLock lock(&mu_);
  return breaker_.openings();
}

}  // namespace vigil
