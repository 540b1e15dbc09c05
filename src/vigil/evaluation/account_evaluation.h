// EvaluateAccounts: figures per account, the unit AML teams work on, from scored payments. An
// account's score is the highest score of the payments it sends or receives; an account is
// laundering when any payment it sends or receives is labelled laundering. Reported: average
// precision over accounts with a bootstrap interval, the confusion at the payment threshold
// (an account is alerted when one of its payments is), and the recall at a false-positive-rate
// bound over accounts (the alert budget: at most max_fpr of the ordinary accounts alerted).
//
// Thread safety: a pure function.
#ifndef VIGIL_EVALUATION_ACCOUNT_EVALUATION_H_
#define VIGIL_EVALUATION_ACCOUNT_EVALUATION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "vigil/evaluation/detection_metrics.h"

namespace vigil::evaluation {

struct AccountEvaluationOptions {
  double threshold = 0.5;
  double max_fpr = 0.01;
  size_t bootstrap_resamples = 1000;
  uint64_t seed = 1;
};

struct AccountEvaluation {
  size_t accounts = 0, laundering = 0;
  Interval pr_auc;
  Confusion at_threshold;
  ThresholdChoice at_max_fpr;  // the lowest account threshold within max_fpr, and its recall
  double max_fpr = 0;
};

// Rows align: each payment's score, label, originator and beneficiary account. A payment with
// an empty account id counts for its other party only.
AccountEvaluation EvaluateAccounts(absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels,
                                   absl::Span<const std::string> originators,
                                   absl::Span<const std::string> beneficiaries,
                                   const AccountEvaluationOptions& options);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_ACCOUNT_EVALUATION_H_
