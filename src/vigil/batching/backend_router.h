// BackendRouter: the Scorer that sends each batch to the CPU or the GPU (docs/gpu.md). It sits
// inside the batcher, so that it sees whole batches: single urgent payments stay on the CPU,
// where a tree walk answers in microseconds; batches of a class that reach that class's
// threshold go to the GPU, where a batch of thousands costs little more than one row.
//
// A GPU batch that fails, or is not back within its time (config.gpu_timeout, less when the
// batch's deadline comes sooner, less again the time the CPU needs to score it instead when
// that leaves any), is
// scored on the CPU at once: the decision is still the model's, and records the backend as
// "cpu-fallback". Each fallback is counted by cause. A circuit breaker keeps batches off a GPU
// that keeps failing and probes it now and then (CircuitBreaker); a GPU whose buffers are all
// busy is not unhealthy, and that fallback does not count against it.
//
// Thread safety: Score and Explain may be called from any number of threads.
#ifndef VIGIL_BATCHING_BACKEND_ROUTER_H_
#define VIGIL_BATCHING_BACKEND_ROUTER_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/model/scorer.h"

namespace vigil {

struct BackendRouterConfig {
  static constexpr size_t kNever = std::numeric_limits<size_t>::max();
  // Per class (P0, P1, P2): batches of at least this many rows go to the GPU; kNever keeps the
  // class on the CPU. The defaults come from the batcher benchmark's threshold sweep on the H200
  // (docs/benchmarks.md, "Router thresholds"): at 16 rows the 1000-tree model kept every class
  // within its deadline up to 1M bulk rows/s, where 64 and 256 failed from 200k.
  std::array<size_t, 3> gpu_min_rows = {kNever, 16, 16};
  // The longest a batch may spend on the GPU before the CPU scores it instead.
  std::chrono::microseconds gpu_timeout{5000};
  // The GPU's health: failure_threshold failures (or calls slower than budget) in a row keep
  // batches off it for open_for.
  CircuitBreakerConfig breaker{5, std::chrono::microseconds(5000), std::chrono::seconds(1), 1};

  // Errors name the field: gpu_timeout and the breaker's numbers must be positive.
  absl::Status Validate() const;
};

class BackendRouter final : public Scorer {
 public:
  struct Stats {
    uint64_t cpu_batches = 0, cpu_rows = 0;
    uint64_t gpu_batches = 0, gpu_rows = 0;
    // GPU batches scored on the CPU instead, by cause.
    uint64_t fallback_timeout = 0, fallback_error = 0, fallback_busy = 0;
    uint64_t breaker_skips = 0;  // batches kept off the GPU while its breaker was open
    CircuitBreaker::State breaker = CircuitBreaker::State::kClosed;
  };

  // "gpu" may be null (every batch on the CPU). Both must score the same model version with the
  // same row width.
  static absl::StatusOr<std::unique_ptr<BackendRouter>> Create(std::shared_ptr<const Scorer> cpu,
                                                               std::shared_ptr<const Scorer> gpu,
                                                               BackendRouterConfig config);

  const std::string& model_version() const override { return cpu_->model_version(); }
  size_t row_width() const override { return cpu_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override;
  // Single-row explanations: the CPU explainer.
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return cpu_->Explain(row, k);
  }
  // Bounded: a GPU call ends by gpu_timeout, then the CPU scores.
  bool latency_bounded() const override { return cpu_->latency_bounded(); }

  // Whether a batch of n rows of this class would go to the GPU now (thresholds and breaker).
  bool WouldUseGpu(Priority priority, size_t n) const;
  Stats stats() const;

 private:
  BackendRouter(std::shared_ptr<const Scorer> cpu, std::shared_ptr<const Scorer> gpu,
                BackendRouterConfig config)
      : cpu_(std::move(cpu)), gpu_(std::move(gpu)), config_(config), breaker_(config.breaker) {}
  absl::Status ScoreOnCpu(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                          const ScoreContext& context, ScoreBackend backend) const;

  std::shared_ptr<const Scorer> cpu_, gpu_;
  BackendRouterConfig config_;
  mutable absl::Mutex mu_;
  mutable CircuitBreaker breaker_ ABSL_GUARDED_BY(mu_);
  mutable Stats stats_ ABSL_GUARDED_BY(mu_);
  // The CPU's recent cost per row (decaying average), reserved out of a batch's deadline
  // before the GPU gets the rest.
  mutable double cpu_ns_per_row_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace vigil

#endif  // VIGIL_BATCHING_BACKEND_ROUTER_H_
