// DecisionMaker: turns a transaction and its feature row into a Decision, from the policy's
// rules and the model score (asked of a Scorer, so a batcher or GPU can stand behind it).
//
// The action is the most severe of: every fired active rule's action (review, block), the
// score against the policy's thresholds, and the best watchlist hit (when a Screener is given)
// against the policy's screening thresholds. Every hit at or above the screening review
// threshold is a reason of kind kScreening. Shadow rules are evaluated and listed, never decide.
// For REVIEW and BLOCK decisions the scorer's reason codes (exact TreeSHAP) are added. When the
// scorer fails, the decision is made on rules alone and marked degraded, with the reason.
//
// Thread safety: immutable after construction; Decide may run concurrently.
#ifndef VIGIL_DECISION_DECISION_MAKER_H_
#define VIGIL_DECISION_DECISION_MAKER_H_

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/common/ids.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"
#include "vigil/model/scorer.h"
#include "vigil/rules/policy.h"
#include "vigil/rules/policy_inputs.h"
#include "vigil/rules/policy_source.h"
#include "vigil/screening/screener.h"
#include "vigil/screening/screening_clearances.h"

namespace vigil {

// The values one transaction offers a policy, laid out by a PolicyInputLayout.
class PolicyInputs {
 public:
  explicit PolicyInputs(const PolicyInputLayout& layout);
  // REQUIRES: features.size() == layout.schema().size(). The transaction and "screening" must
  // outlive view(). "screening" null: screening did not run (its inputs read 0 and "").
  void Set(const Transaction& tx, absl::Span<const double> features, double score,
           const screening::TransactionScreening* screening = nullptr);
  EvalInputs view() const { return {numbers_, strings_}; }

 private:
  std::vector<double> numbers_;
  size_t width_;  // feature columns
  std::string currency_, settled_currency_;  // ISO codes (fit the small-string buffer)
  std::array<std::string_view, kNumPolicyStrings> strings_{};
};

struct DecisionOptions {
  int reason_codes = 5;  // model reason codes for REVIEW/BLOCK decisions; 0: none
  // Watchlist hits are searched for down to the policy's screening review threshold, or down
  // to this score when it is lower and above 0, so that rules can see near hits
  // (screening.hit_count). Each 0.01 lower costs search time (docs/benchmarks.md).
  double screening_min_score = 0;
  size_t screening_max_hits = 10;
  // Hits an analyst cleared for a party (screening_clearances.h): while one holds (by the real
  // clock), the hit is recorded as a shadow reason and counts for nothing. Null: none.
  std::shared_ptr<const screening::ScreeningClearances> clearances;
};

class DecisionMaker {
 public:
  // "scorer" may be null: rules only (the decisions are then not degraded: no model was asked).
  // The policy comes from "policies" once per batch (a PolicyStore swaps versions between
  // batches, never within one). Fails if "policies" has no active policy yet.
  // "screener" may be null: no watchlist screening (decisions then carry no screening score).
  static absl::StatusOr<std::unique_ptr<DecisionMaker>> Create(
      std::shared_ptr<const PolicySource> policies, std::shared_ptr<const Scorer> scorer,
      PolicyInputLayout layout, DecisionOptions options = {},
      std::shared_ptr<const screening::Screener> screener = nullptr);
  // The same for one fixed policy.
  DecisionMaker(std::shared_ptr<const Policy> policy, std::shared_ptr<const Scorer> scorer,
                PolicyInputLayout layout, DecisionOptions options = {},
                std::shared_ptr<const screening::Screener> screener = nullptr);

  // As recorded in decisions: "version@sha256-prefix" of the policy in force now.
  std::string policy_version() const { return policies_->Active()->tag(); }
  // The policy in force now.
  std::shared_ptr<const Policy> policy() const { return policies_->Active(); }
  // The model's version, "" without one.
  const std::string& model_version() const {
    static const std::string kNone;
    return scorer_ != nullptr ? scorer_->model_version() : kNone;
  }
  const PolicyInputLayout& layout() const { return layout_; }
  // The screener, or null.
  const screening::Screener* screener() const { return screener_.get(); }

  // Decides n transactions whose feature rows lie at rows[i * width], width the schema's size,
  // scoring them in one call with "context" (priority, deadline). decisions[i] is replaced.
  // A scorer that fails or misses the deadline leaves the decisions rules-only and degraded;
  // one that is overloaded (kResourceExhausted: the batcher's queue is full) makes the call
  // return that status with no decision made, so the caller can answer 503 rather than decide
  // without the model under load.
  // REQUIRES: txs.size() == n, rows.size() >= n * width, decisions.size() >= n.
  absl::Status DecideBatch(absl::Span<const Transaction* const> txs, absl::Span<const double> rows,
                           absl::Span<Decision> decisions, UuidV7Generator& ids,
                           const ScoreContext& context = {}) const;

 private:
  DecisionMaker(std::shared_ptr<const PolicySource> policies, std::shared_ptr<const Scorer> scorer,
                PolicyInputLayout layout, DecisionOptions options,
                std::shared_ptr<const screening::Screener> screener);

  std::shared_ptr<const PolicySource> policies_;
  std::shared_ptr<const Scorer> scorer_;
  std::shared_ptr<const screening::Screener> screener_;
  PolicyInputLayout layout_;
  DecisionOptions options_;
};

}  // namespace vigil

#endif  // VIGIL_DECISION_DECISION_MAKER_H_
