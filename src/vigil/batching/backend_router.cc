#include "vigil/batching/backend_router.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

}  // namespace

absl::Status BackendRouterConfig::Validate() const {
  if (gpu_timeout <= std::chrono::microseconds::zero()) {
    return absl::InvalidArgumentError("gpu.timeout must be positive");
  }
  if (breaker.failure_threshold <= 0) {
    return absl::InvalidArgumentError("gpu.breaker.failure_threshold must be positive");
  }
  if (breaker.open_for <= std::chrono::microseconds::zero()) {
    return absl::InvalidArgumentError("gpu.breaker.open_for must be positive");
  }
  if (breaker.probes <= 0) return absl::InvalidArgumentError("gpu.breaker.probes must be positive");
  for (size_t c = 0; c < gpu_min_rows.size(); ++c) {
    if (gpu_min_rows[c] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu.min_rows.", PriorityName(static_cast<Priority>(c)),
                       " must be at least 1 (or never)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BackendRouter>> BackendRouter::Create(
    std::shared_ptr<const Scorer> cpu, std::shared_ptr<const Scorer> gpu,
    BackendRouterConfig config) {
  VIGIL_RETURN_IF_ERROR(config.Validate());
  if (cpu == nullptr) return absl::InvalidArgumentError("the backend router needs a CPU scorer");
  if (gpu != nullptr && (gpu->model_version() != cpu->model_version() ||
                         gpu->row_width() != cpu->row_width())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the GPU scorer (model ", gpu->model_version(), ", ", gpu->row_width(),
        " values per row) and the CPU scorer (model ", cpu->model_version(), ", ",
        cpu->row_width(), ") must score the same model"));
  }
  return std::unique_ptr<BackendRouter>(new BackendRouter(std::move(cpu), std::move(gpu), config));
}

bool BackendRouter::WouldUseGpu(Priority priority, size_t n) const {
  if (gpu_ == nullptr || n < config_.gpu_min_rows[static_cast<size_t>(priority)]) return false;
  absl::MutexLock lock(&mu_);
  return breaker_.state() != CircuitBreaker::State::kOpen;
}

absl::Status BackendRouter::ScoreOnCpu(absl::Span<const double> rows, size_t n,
                                       absl::Span<double> scores, const ScoreContext& context,
                                       ScoreBackend backend) const {
  ScoreContext inner = context;
  inner.backend = nullptr;
  const Steady::time_point start = Steady::now();
  const absl::Status status = cpu_->Score(rows, n, scores, inner);
  const double ns = std::chrono::duration<double, std::nano>(Steady::now() - start).count();
  absl::MutexLock lock(&mu_);
  ++stats_.cpu_batches;
  stats_.cpu_rows += n;
  const double per_row = ns / static_cast<double>(std::max<size_t>(n, 1));
  cpu_ns_per_row_ = cpu_ns_per_row_ == 0 ? per_row : 0.9 * cpu_ns_per_row_ + 0.1 * per_row;
  if (status.ok() && context.backend != nullptr) *context.backend = backend;
  return status;
}

absl::Status BackendRouter::Score(absl::Span<const double> rows, size_t n,
                                  absl::Span<double> scores, const ScoreContext& context) const {
  if (gpu_ == nullptr || n < config_.gpu_min_rows[static_cast<size_t>(context.priority)]) {
    return ScoreOnCpu(rows, n, scores, context, ScoreBackend::kCpu);
  }
  const Steady::time_point now = Steady::now();
  ScoreContext on_gpu = context;
  on_gpu.backend = nullptr;
  bool to_gpu = false;
  {
    absl::MutexLock lock(&mu_);
    if (!breaker_.Allow(now)) {
      ++stats_.breaker_skips;
      stats_.breaker = breaker_.state();
    } else {
      // The GPU gets gpu_timeout, or what the deadline leaves after the CPU's own time for the
      // batch (twice its recent cost), whichever ends first. When the deadline is nearer than
      // the CPU's time, the CPU cannot make it either: the GPU, the faster of the two, gets
      // what is left. With the deadline passed, the batch goes to the CPU (nothing held
      // against the GPU).
      Steady::time_point until = now + config_.gpu_timeout;
      if (context.deadline.has_value()) {
        const auto reserve = std::chrono::duration_cast<Steady::duration>(std::chrono::nanoseconds(
            static_cast<int64_t>(2 * cpu_ns_per_row_ * static_cast<double>(n))));
        const Steady::time_point after_reserve = *context.deadline - reserve;
        until = std::min(until, after_reserve > now ? after_reserve : *context.deadline);
      }
      on_gpu.deadline = until;
      to_gpu = until > now;
    }
  }
  if (!to_gpu) return ScoreOnCpu(rows, n, scores, context, ScoreBackend::kCpu);
  const absl::Status status = gpu_->Score(rows, n, scores, on_gpu);
  const Steady::time_point end = Steady::now();
  {
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      breaker_.Record(end, true, std::chrono::duration_cast<std::chrono::microseconds>(end - now));
      ++stats_.gpu_batches;
      stats_.gpu_rows += n;
      stats_.breaker = breaker_.state();
      if (context.backend != nullptr) *context.backend = ScoreBackend::kGpu;
      return status;
    }
    if (absl::IsResourceExhausted(status)) {
      ++stats_.fallback_busy;  // an overloaded GPU is not an unhealthy one
    } else {
      breaker_.Record(end, false, std::chrono::duration_cast<std::chrono::microseconds>(end - now));
      ++(absl::IsDeadlineExceeded(status) ? stats_.fallback_timeout : stats_.fallback_error);
    }
    stats_.breaker = breaker_.state();
  }
  return ScoreOnCpu(rows, n, scores, context, ScoreBackend::kCpuFallback);
}

BackendRouter::Stats BackendRouter::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s = stats_;
  s.breaker = breaker_.state();
  return s;
}

}  // namespace vigil
