#include "vigil/engine/decide_in_order.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "vigil/common/status_macros.h"
#include "vigil/engine/account_standings.h"

namespace vigil {
namespace {

// Whether a row's counterparty-risk columns read any of these accounts.
bool ReadsAny(const RiskReads::Row& read, const AccountsChanged& accounts) {
  for (const absl::Span<const uint32_t> list :
       {read.parties, read.counterparties[0], read.counterparties[1]}) {
    for (const uint32_t account : list) {
      if (accounts.contains(account)) return true;
    }
  }
  return false;
}

// Holds "mu" for a scope when there is one.
class MaybeLock {
 public:
  explicit MaybeLock(absl::Mutex* mu) : mu_(mu) {
    if (mu_ != nullptr) mu_->Lock();
  }
  ~MaybeLock() {
    if (mu_ != nullptr) mu_->Unlock();
  }
  MaybeLock(const MaybeLock&) = delete;
  MaybeLock& operator=(const MaybeLock&) = delete;

 private:
  absl::Mutex* mu_;
};

// Writes `row`'s counterparty-risk columns again and says whether any changed, bit for bit;
// `scratch` holds a row's width.
bool RefreshChangedRow(const DecisionStep& step, const Transaction& tx,
                       const RiskReads::Row& read, absl::Span<double> row,
                       std::vector<double>& scratch) {
  std::copy(row.begin(), row.end(), scratch.begin());
  {
    MaybeLock lock(step.features_mu);
    step.features->RefreshRiskColumns(tx, read, row);
  }
  return std::memcmp(row.data(), scratch.data(), row.size() * sizeof(double)) != 0;
}

}  // namespace

absl::StatusOr<int64_t> DecideInOrder(const DecisionStep& step, const PaymentsInOrder& payments,
                                      const ScoreContext& context, AccountsChanged& changed,
                                      absl::Span<Decision> decisions) {
  const size_t n = payments.txs.size();
  if (n == 0) return 0;
  const size_t width = payments.rows.size() / n;
  VIGIL_RETURN_IF_ERROR(
      step.decider->DecideBatch(payments.txs, payments.rows, decisions, *step.ids, context));
  // The policy the batch was decided under; a repaired decision may meet a newer one (a
  // PolicyStore swaps between calls), as a payment arriving then would.
  const std::shared_ptr<const Policy> policy = step.decider->policy();
  std::vector<double> scratch(payments.reads != nullptr ? width : 0);
  int64_t redecided = 0;
  for (size_t k = 0; k < n; ++k) {
    const Transaction& tx = *payments.txs[k];
    std::optional<RiskReads::Row> read;
    if (payments.reads != nullptr && payments.read_of[k] != PaymentsInOrder::kNotRead) {
      read = payments.reads->Of(payments.read_of[k]);
    }
    const absl::Span<double> row = payments.rows.subspan(k * width, width);
    if (read.has_value() && !changed.empty() && ReadsAny(*read, changed) &&
        RefreshChangedRow(step, tx, *read, row, scratch)) {
      VIGIL_RETURN_IF_ERROR(step.decider->DecideBatch(
          payments.txs.subspan(k, 1), row, decisions.subspan(k, 1), *step.ids, context));
      ++redecided;
    }
    Decision& d = decisions[k];
    d.model_role = step.model_role;
    {
      MaybeLock lock(step.features_mu);
      RecordAccountStandings(*step.features, *policy, tx, d);
    }
    if (read.has_value()) changed.insert(read->parties.begin(), read->parties.end());
  }
  return redecided;
}

}  // namespace vigil
