// EvaluatePayments: the figures `vigil model evaluate` reports for scored, labelled payments:
// overall (PR-AUC with a bootstrap interval, the base rate, the confusion at a threshold,
// precision among the top k), and the same per typology (where the labels name one: recall at
// the threshold, as a typology's rows are all positive) and per amount band (the simulator's
// artefacts hide there: "every AMLSim payment under $100 is laundering").
//
// Thread safety: a pure function.
#ifndef VIGIL_EVALUATION_PAYMENT_EVALUATION_H_
#define VIGIL_EVALUATION_PAYMENT_EVALUATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "vigil/evaluation/detection_metrics.h"

namespace vigil::evaluation {

struct PaymentEvaluationOptions {
  double threshold = 0.5;  // predicted laundering at or above
  size_t top_k = 100;
  size_t bootstrap_resamples = 1000;
  uint64_t seed = 1;
  // Upper bounds of the amount bands, ascending, in the amounts' unit; the last band is open.
  std::vector<double> amount_bands = {100, 1'000, 10'000};
};

struct SliceFigures {
  std::string name;  // "all", a typology, an amount band ("[100, 1000)")
  size_t rows = 0, positives = 0;
  Interval pr_auc;  // NaN without positives (or, for a typology, always: it has no negatives)
  Confusion at_threshold;
};

struct PaymentEvaluation {
  SliceFigures all;
  double base_rate = 0;
  double precision_at_k = 0;
  std::vector<SliceFigures> typologies;    // in name order; positive rows only
  std::vector<SliceFigures> amount_bands;  // in band order; empty without amounts
};

// "typologies" (may be empty: none) and "amounts" (may be empty: no bands) align with the rows.
PaymentEvaluation EvaluatePayments(absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels,
                                   absl::Span<const std::string> typologies,
                                   absl::Span<const double> amounts,
                                   const PaymentEvaluationOptions& options);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_PAYMENT_EVALUATION_H_
