#include "vigil/cluster/partition_decider.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "vigil/audit/audit_record.h"
#include "vigil/common/status_macros.h"
#include "vigil/engine/account_standings.h"

namespace vigil::cluster {

PartitionDecider::PartitionDecider(std::shared_ptr<const DecisionMaker> decider,
                                   std::string model_role, const Clock& clock)
    : decider_(std::move(decider)), model_role_(std::move(model_role)), clock_(clock) {}

PartitionDecider::PartitionDecider(const ModelDeployment* deployment, const Clock& clock)
    : deployment_(deployment), clock_(clock) {}

absl::StatusOr<std::vector<DecidedPayment>> PartitionDecider::Decide(
    absl::Span<const PendingPayment* const> payments, FeatureExtractor& features,
    UuidV7Generator& ids) const {
  std::vector<DecidedPayment> out;
  if (payments.empty()) return out;
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<const Transaction*> txs;
  std::vector<double> rows;
  rows.reserve(payments.size() * width);
  int64_t deadline_us = payments.front()->entry.deadline_us;
  Priority priority = payments.front()->entry.transaction.priority;
  for (const PendingPayment* p : payments) {
    txs.push_back(&p->entry.transaction);
    rows.insert(rows.end(), p->row.begin(), p->row.end());
    deadline_us = std::min(deadline_us, p->entry.deadline_us);
    priority = std::min(priority, p->entry.transaction.priority);
  }
  // The callers' deadline, in the steady clock the scorers read.
  const int64_t now_us = ToUnixMicros(clock_.Now());
  ScoreContext context;
  context.priority = priority;
  context.deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(deadline_us - now_us);
  std::vector<Decision> decisions(payments.size());
  // The deployment's champion of the moment (or its rules), held for the whole batch.
  std::shared_ptr<const DecisionMaker> decider = decider_;
  std::string model_role = model_role_;
  if (deployment_ != nullptr) {
    const std::shared_ptr<const ModelDeployment::Snapshot> now = deployment_->Current();
    decider = now->champion != nullptr ? now->champion->decider : now->rules;
    model_role = now->champion != nullptr ? "champion" : "none";
  }
  const std::shared_ptr<const Policy> policy = decider->policy();
  VIGIL_RETURN_IF_ERROR(decider->DecideBatch(txs, rows, absl::MakeSpan(decisions), ids, context));
  const UtcTime decided = clock_.Now();
  out.reserve(payments.size());
  for (size_t k = 0; k < payments.size(); ++k) {
    const PaymentEntry& entry = payments[k]->entry;
    Decision& d = decisions[k];
    d.model_role = model_role;
    d.traceparent = entry.traceparent;
    DecidedPayment entry_out;
    entry_out.payment_sequence = payments[k]->sequence;
    entry_out.transaction_id = entry.transaction.id;
    entry_out.score = d.score;
    entry_out.rule_hit = ActiveRuleFired(d, *policy);
    entry_out.alert = policy->account_alerts();
    const std::array<AccountStanding, 2> standings = features.PreviewRisk(
        entry.transaction, entry_out.score, entry_out.rule_hit, entry_out.alert);
    d.accounts_scored = true;
    d.originator_account = standings[0];
    d.beneficiary_account = standings[1];
    VIGIL_ASSIGN_OR_RETURN(entry_out.record, audit::EncodeRecordBody(audit::RecordBodyFields{
                                                 .received = FromUnixMicros(entry.received_us),
                                                 .decided = decided,
                                                 .actor = entry.actor,
                                                 .source = "cluster",
                                                 .input_format = entry.input_format,
                                                 .input_sha256 = &entry.input_sha256,
                                                 .transaction = &entry.transaction,
                                                 .features = payments[k]->row,
                                                 .decision = &d}));
    out.push_back(std::move(entry_out));
  }
  return out;
}

}  // namespace vigil::cluster
