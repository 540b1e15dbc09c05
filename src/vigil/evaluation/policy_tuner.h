// TunePolicy: above- and below-the-line testing of a policy on labelled history, as AML teams
// tune their scenarios (`vigil policy tune`, docs/policy.md "Tuning").
//
// The history is split by event time: the earlier part (1 - test_share of its time span) is
// searched, the later part is held out and only reported. The search moves the constants the
// policy declares tunable (its `tune:` section), each over an even grid of its range, one at a
// time (coordinate ascent, a few rounds): a candidate is feasible when its alerts per day on the
// searched part stay within the budget (payment alerts, REVIEW or BLOCK; or account alerts), and
// the best feasible candidate has the highest recall there (payments labelled laundering
// alerted; or laundering accounts alerted), then the fewest alerts. Nothing of the held-out
// part is seen by the search; its figures before and after are what the tuning is judged by.
//
// Each candidate decides every payment as DecisionMaker would without a screener (the fired
// active rules and the model score against the policy's thresholds) and runs the account step
// (features/account_risk.h) over its own fresh account state, so account alerts follow the
// candidate's rules.
//
// Thread safety: TuningHistory is externally synchronized; TunePolicy is a pure function.
#ifndef VIGIL_EVALUATION_POLICY_TUNER_H_
#define VIGIL_EVALUATION_POLICY_TUNER_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/transaction.h"
#include "vigil/rules/policy.h"
#include "vigil/rules/policy_inputs.h"

namespace vigil::evaluation {

// The replayed history: payments in event-time order with their feature rows
// (FeatureExtractor::Schema()) and model scores (NaN without a model).
class TuningHistory {
 public:
  explicit TuningHistory(size_t width) : width_(width) {}
  // REQUIRES: row.size() == width; tx no earlier than the payment added before.
  void Add(const Transaction& tx, absl::Span<const double> row, double score);

  size_t size() const { return txs_.size(); }
  size_t width() const { return width_; }
  size_t accounts() const { return account_numbers_.size(); }
  const Transaction& tx(size_t i) const { return txs_[i]; }
  absl::Span<const double> row(size_t i) const {
    return absl::MakeConstSpan(rows_).subspan(i * width_, width_);
  }
  double score(size_t i) const { return scores_[i]; }
  // Dense account numbers of the payment's originator and beneficiary.
  const std::array<uint32_t, 2>& parties(size_t i) const { return parties_[i]; }

 private:
  uint32_t AccountNumber(const Party& p);

  size_t width_;
  std::vector<Transaction> txs_;
  std::vector<double> rows_;
  std::vector<double> scores_;
  std::vector<std::array<uint32_t, 2>> parties_;
  absl::flat_hash_map<std::string, uint32_t> account_numbers_;
};

struct TuningOptions {
  double budget_per_day = 0;  // REQUIRES: > 0
  enum class Unit { kPayments, kAccounts };
  Unit unit = Unit::kPayments;  // what the budget counts and the recall is of
  double test_share = 0.2;      // of the history's time span, the latest: held out
  int grid = 9;                 // values tried per constant (its range's ends included)
  int max_rounds = 3;           // passes over the constants
  std::chrono::microseconds account_window = std::chrono::hours(24 * 30);
};

// A rate k/n with its Wilson score 95% interval (0, 0, 0 when n is 0).
struct Rate {
  int64_t k = 0, n = 0;
  double value = 0, low = 0, high = 0;
};

// What a policy decides on one part of the history.
struct TuningFigures {
  int64_t payments = 0, laundering = 0;  // labelled payments and those labelled laundering
  double days = 0;                       // UTC calendar days with a payment in the part
  int64_t alerts = 0;                    // REVIEW or BLOCK
  double alerts_per_day = 0;
  Rate recall, precision;                // of the payment alerts against the labels
  int64_t accounts = 0, laundering_accounts = 0;  // parties of the part's labelled payments
  int64_t account_alerts = 0;
  double account_alerts_per_day = 0;
  Rate account_recall, account_precision;
  double account_false_positive_rate = 0;
};

struct TuningResult {
  // The tuned constants' values before and after, in the policy's order.
  std::vector<std::pair<std::string, double>> before, after;
  TuningFigures searched_before, searched_after, test_before, test_after;
  bool within_budget = false;  // the chosen values keep the budget on the searched part
  int candidates = 0;          // policies evaluated
  std::string searched_span, test_span;  // "first .. last" event times (UTC) of each part
  std::string policy_text;     // the input with the tuned values and "version" replaced
};

// "text" is the policy (as Policy::Parse reads it, with "file" for messages), "version" the
// tuned policy's version. Fails when the policy declares nothing tunable, when the history
// holds no labelled laundering payment in the searched part, or when the split leaves a part
// empty.
absl::StatusOr<TuningResult> TunePolicy(std::string_view text, std::string_view file,
                                        std::string_view version, const PolicyInputLayout& layout,
                                        const ListLibrary& library, const TuningHistory& history,
                                        const TuningOptions& options);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_POLICY_TUNER_H_
