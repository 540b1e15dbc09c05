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
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "vigil/evaluation/detection_metrics.h"

namespace vigil::evaluation {

struct AccountEvaluationOptions {
  double threshold = 0.5;
  // An account alert score (a policy's accounts.alert_score) to report the confusion at too;
  // NaN: none.
  double alert_score = std::nan("");
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
  Confusion at_alert_score;     // with options.alert_score (else empty)
};

// The lowest account score threshold (accounts scored as EvaluateAccounts scores them) at which
// at most "max_fpr" of the ordinary accounts are alerted, and the recall there.
ThresholdChoice AccountThresholdAtFpr(absl::Span<const double> scores,
                                      absl::Span<const uint8_t> labels,
                                      absl::Span<const std::string> originators,
                                      absl::Span<const std::string> beneficiaries, double max_fpr);

// Rows align: each payment's score, label, originator and beneficiary account. A payment with
// an empty account id counts for its other party only.
AccountEvaluation EvaluateAccounts(absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels,
                                   absl::Span<const std::string> originators,
                                   absl::Span<const std::string> beneficiaries,
                                   const AccountEvaluationOptions& options);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_ACCOUNT_EVALUATION_H_
