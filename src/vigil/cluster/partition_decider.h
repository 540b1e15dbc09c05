// PartitionDecider: how the owner of a partition decides its pending payments (docs/cluster.md,
// "Two accounts per payment"): in one model batch, on the rows the log's applier kept, with the
// pipeline's DecisionMaker (policy rules, the model through its scorer chain, screening), into
// the decision batch every node applies (DecidedPayment: what the account step folds in, and the
// audit record body).
//
// Unlike `vigil serve`'s decide step (engine/decide_in_order.h) it records no account risk: in
// a cluster the account step is part of applying the log, on every node alike, when the batch
// is applied. So the decisions of one batch do not see one another's risk, and the standings a
// decision states are the parties' as they stand when it is decided, with the alert the
// decision would raise on them (FeatureExtractor::PreviewRisk); the log's account step may
// raise it on another payment when a decision of another partition got in first.
//
// Deadlines: the batch is scored with the earliest deadline of its payments (their callers'),
// so a payment that waited in the log past it is decided on rules alone, degraded, as the
// DecisionMaker does for a late model.
//
// Thread safety: Decide may be called from several threads when each passes its own "ids"; the
// extractor is only read, under the caller's lock.
#ifndef VIGIL_CLUSTER_PARTITION_DECIDER_H_
#define VIGIL_CLUSTER_PARTITION_DECIDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/cluster/log_applier.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/common/clock.h"
#include "vigil/common/ids.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/features/feature_extractor.h"

namespace vigil::cluster {

class PartitionDecider {
 public:
  // "model_role": Decision::model_role of every decision ("champion", or "none" without a
  // model). "clock" must outlive the decider.
  PartitionDecider(std::shared_ptr<const DecisionMaker> decider, std::string model_role,
                   const Clock& clock);
  // Decided by "deployment"'s champion of the moment (its rules alone while it has none; a
  // challenger or shadow does not decide in a cluster). "deployment" and "clock" must outlive
  // the decider.
  PartitionDecider(const ModelDeployment* deployment, const Clock& clock);

  // Decides "payments" (pending payments of one partition, in log order) and returns their
  // batch entries in the same order. Errors: the decision maker's (kResourceExhausted: the
  // model's queue is full; nothing was decided, the payments stay pending).
  absl::StatusOr<std::vector<DecidedPayment>> Decide(
      absl::Span<const PendingPayment* const> payments, FeatureExtractor& features,
      UuidV7Generator& ids) const;

 private:
  std::shared_ptr<const DecisionMaker> decider_;  // null: the deployment's
  std::string model_role_;
  const ModelDeployment* deployment_ = nullptr;
  const Clock& clock_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_PARTITION_DECIDER_H_
