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

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/decision.h"

namespace vigil {

class Scorer {
 public:
  virtual ~Scorer() = default;

  // Names the model behind the scorer (recorded in every decision it scores).
  virtual const std::string& model_version() const = 0;
  // Values per row the scorer reads (the feature schema's width).
  virtual size_t row_width() const = 0;

  // The model's probability of the positive (illicit) class for n rows, row i at
  // rows[i * row_width()], into scores[i].
  // REQUIRES: rows.size() >= n * row_width(), scores.size() >= n.
  virtual absl::Status Score(absl::Span<const double> rows, size_t n,
                             absl::Span<double> scores) const = 0;

  // The k features that moved this row's score most (exact TreeSHAP), as Decision reasons.
  virtual absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row,
                                                      int k) const = 0;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_SCORER_H_
