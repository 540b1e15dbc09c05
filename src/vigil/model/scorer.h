// Scorer: how the decision layer gets model scores. The decision module sees only this
// interface, so what stands behind it can change (the in-process CPU predictor now; the dynamic
// batcher and the CUDA backend later) without touching decisions.
//
// A scorer may fail (a batcher's deadline passes, a device errs): the caller then decides on
// rules alone and marks the decision degraded. It never returns a partial result.
//
// Thread safety: implementations say; CpuScorer is safe for concurrent use.
#ifndef VIGIL_MODEL_SCORER_H_
#define VIGIL_MODEL_SCORER_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"
#include "vigil/model/attribution.h"

namespace vigil {

// Which backend scored a call (recorded in the decision): the CPU, the GPU, or the CPU after
// the GPU failed or ran late (BackendRouter).
enum class ScoreBackend : uint8_t { kNone, kCpu, kGpu, kCpuFallback };
// "", "cpu", "gpu", "cpu-fallback".
std::string_view ScoreBackendName(ScoreBackend b);

// What a scoring call carries besides its rows: how urgent it is and when its answer stops
// being useful. A direct scorer ignores both; the batcher orders and bounds waiting by them.
struct ScoreContext {
  Priority priority = Priority::kP1;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // none: no deadline
  // Out: when given, the scorer that produced the scores writes its backend here (wrappers pass
  // it through, so the innermost scorer that ran says which it was).
  ScoreBackend* backend = nullptr;
};

class Scorer {
 public:
  virtual ~Scorer() = default;

  // Names the model behind the scorer (recorded in every decision it scores).
  virtual const std::string& model_version() const = 0;
  // Values per row the scorer reads (the feature schema's width).
  virtual size_t row_width() const = 0;

  // The model's probability of the positive (illicit) class for n rows, row i at
  // rows[i * row_width()], into scores[i]. kDeadlineExceeded when no score could be had before
  // context.deadline; kResourceExhausted when the scorer is overloaded (answer 503).
  // REQUIRES: rows.size() >= n * row_width(), scores.size() >= n.
  virtual absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                             const ScoreContext& context) const = 0;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores) const {
    return Score(rows, n, scores, ScoreContext{});
  }

  // Whether a call's time is bounded by construction (an in-process tree walk: microseconds,
  // fixed by the model's size), so that a caller may run it on its own thread without risking
  // its deadline. Scorers that can stall (a device, a remote service, a fault injected in a
  // test) say false, and the batcher then always queues their calls, where deadlines hold.
  virtual bool latency_bounded() const { return false; }

  // The k features that moved this row's score most (exact TreeSHAP), as Decision reasons.
  virtual absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row,
                                                      int k) const = 0;

  // Every feature's exact TreeSHAP value for "row", the bias and the margin (an analyst's
  // waterfall). kUnimplemented for a scorer that does not hold the model itself (a wrapper:
  // ask the scorer it wraps).
  virtual absl::StatusOr<Attribution> Attribute(absl::Span<const double> row) const;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_SCORER_H_
