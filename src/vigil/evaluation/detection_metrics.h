// Detection metrics: how well scores separate laundering from ordinary payments (or accounts),
// measured the way AML model validation reports it: average precision (PR-AUC, the figure that
// stays honest at a base rate of 1–5%), precision, recall, F1 and false-positive rate at a
// threshold, the best F1 over thresholds, recall at a false-positive-rate bound (the account
// alert budget), precision among the k highest scores, and bootstrap percentile intervals for
// any of them.
//
// Conventions, kept identical to scikit-learn's so that its functions are an independent
// oracle (detection_metrics_test): a row is predicted positive when its score is >= the
// threshold; average precision is sum over distinct score thresholds, highest first, of
// (R_n - R_{n-1}) * P_n (average_precision_score), so tied scores enter together. A metric
// whose denominator is zero (no positive row, no predicted positive) is NaN, never 0: a
// stream without laundering says nothing about recall.
//
// Thread safety: pure functions.
#ifndef VIGIL_EVALUATION_DETECTION_METRICS_H_
#define VIGIL_EVALUATION_DETECTION_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace vigil::evaluation {

// Rows at one threshold.
struct Confusion {
  uint64_t tp = 0, fp = 0, fn = 0, tn = 0;

  double precision() const;  // tp / (tp + fp)
  double recall() const;     // tp / (tp + fn)
  double f1() const;         // 2 tp / (2 tp + fp + fn)
  double fpr() const;        // fp / (fp + tn)
};

// "scores" and "labels" (nonzero: positive) have the same length in every function below.
Confusion ConfusionAt(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                      double threshold);

// scikit-learn's average_precision_score; NaN without a positive row.
double AveragePrecision(absl::Span<const double> scores, absl::Span<const uint8_t> labels);

// The threshold (one of the scores) with the highest F1, and that F1; the lowest such
// threshold on a tie. NaN F1 (and threshold) without a positive row.
struct ThresholdChoice {
  double threshold = 0;
  Confusion at;
};
ThresholdChoice BestF1(absl::Span<const double> scores, absl::Span<const uint8_t> labels);

// The lowest threshold whose false-positive rate is at most "max_fpr", and the recall there:
// the recall an alert budget of that many false alerts per negative row buys. A threshold
// above every score (nothing alerted) when even the highest score's FPR exceeds the bound.
ThresholdChoice RecallAtFpr(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                            double max_fpr);

// Positives among the k highest scores, over k (ties at the k-th score broken by row order,
// earlier first). k is capped at the row count; NaN for k = 0.
double PrecisionAtK(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                    size_t k);

// The precision-recall curve: one point per distinct score, highest first (recall rising),
// predicting positive every row at or above it. Empty without a positive row.
struct CurvePoint {
  double threshold = 0;
  double recall = 0;
  double precision = 0;
};
std::vector<CurvePoint> PrecisionRecallCurve(absl::Span<const double> scores,
                                             absl::Span<const uint8_t> labels);

// The curve as an SVG image (about 480 x 360 pixels): precision against recall, the base rate
// as a dashed line, and "title" above. A curve of more than max_points points is thinned: a point
// is drawn where recall has risen by 1/max_points since the last one drawn, and the last point.
std::string PrecisionRecallSvg(absl::Span<const CurvePoint> curve, double base_rate,
                               std::string_view title, size_t max_points = 2000);

// A metric of (scores, labels).
using Metric =
    std::function<double(absl::Span<const double> scores, absl::Span<const uint8_t> labels)>;

// The metric on the rows, and the percentile interval of its values over "resamples" bootstrap
// resamples (rows drawn with replacement, as many as there are), at "level" (0.95: the 2.5th and
// 97.5th percentiles). Resamples whose value is NaN (no positive drawn) are left out of the
// interval; "used" says how many counted. Deterministic for a seed.
struct Interval {
  double estimate = 0;
  double low = 0, high = 0;
  size_t used = 0;
};
Interval BootstrapInterval(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                           const Metric& metric, size_t resamples = 1000, uint64_t seed = 1,
                           double level = 0.95);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_DETECTION_METRICS_H_
