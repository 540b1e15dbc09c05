// DecideInOrder: the pipeline's decide step for payments whose features were applied in order,
// shared by `vigil serve` (DecisionService) and `vigil replay` (Replayer), so that a backtest
// decides as production does.
//
// The payments are decided in one call (one model batch), on rows computed before any of them
// was decided. Payments decided one at a time would each see the account risk of those decided
// before them (schema v3's counterparty-risk columns). So, in order, each payment whose row
// read an account whose risk an earlier decision of the same run of calls changed gets its risk
// columns again (FeatureExtractor::RefreshRiskColumns) and, where they did change (bit for bit:
// a NaN stays a NaN), is decided again alone; then its account step runs
// (RecordAccountStandings: both parties' standing and any account alert in the Decision). The
// decisions are exactly those of one payment at a time; the repair costs one more decision for
// the few rows whose accounts were busy within the batch.
//
// Thread safety: "features" is used only with "features_mu" held when one is given (the
// decisions themselves are made without it); callers share nothing else.
#ifndef VIGIL_ENGINE_DECIDE_IN_ORDER_H_
#define VIGIL_ENGINE_DECIDE_IN_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/common/ids.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/features/feature_extractor.h"

namespace vigil {

// Who decides, and the state the account step changes.
struct DecisionStep {
  const DecisionMaker* decider = nullptr;
  FeatureExtractor* features = nullptr;
  absl::Mutex* features_mu = nullptr;  // null: the caller's thread owns "features"
  UuidV7Generator* ids = nullptr;
  // Decision::model_role of every decision: "champion", "challenger" or "none".
  const char* model_role = "none";
};

// Payments to decide, in the order they were applied.
struct PaymentsInOrder {
  static constexpr size_t kNotRead = std::numeric_limits<size_t>::max();
  absl::Span<const Transaction* const> txs;
  // txs.size() rows of FeatureExtractor::Schema()->size() values; a repaired row is rewritten.
  absl::Span<double> rows;
  // The accounts each row's risk columns read: txs[k]'s are reads->Of(read_of[k]); kNotRead:
  // not known (a row kept from an earlier attempt), not repaired. Null: the rows were not
  // computed ahead of one another's decisions (one payment), nothing to repair.
  const RiskReads* reads = nullptr;
  absl::Span<const size_t> read_of;
};

// The accounts whose risk the decisions so far changed. One per batch of payments applied
// together: a batch decided in several calls (one per model) passes the same one to each, so a
// later call's rows see the earlier calls' decisions.
using AccountsChanged = absl::flat_hash_set<uint32_t>;

// Decides "payments" into decisions[0, n) as above and returns how many were decided again.
// An error of the decider (kResourceExhausted: overloaded) leaves the decisions unusable; the
// account steps already run for earlier payments stay (FeatureExtractor::RecordRisk answers a
// payment decided again alike).
// REQUIRES: decisions.size() >= n; read_of.size() == n when reads is given.
absl::StatusOr<int64_t> DecideInOrder(const DecisionStep& step, const PaymentsInOrder& payments,
                                      const ScoreContext& context, AccountsChanged& changed,
                                      absl::Span<Decision> decisions);

}  // namespace vigil

#endif  // VIGIL_ENGINE_DECIDE_IN_ORDER_H_
