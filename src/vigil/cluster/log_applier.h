// LogApplier: a node's state as the cluster log builds it (docs/cluster.md, "Every node applies
// every message, in log order"). Every node runs one over the whole log, so every node holds
// the same state at the same position: that is what lets any node take over any partition at
// once, and a restarted node continue exactly where an uninterrupted one would be.
//
// What applying does, by subject:
// - A payment (vigil.<cluster>.pay.<p>): its originator must belong to partition p
//   (PartitionMap), else it is refused. A transaction id seen before is the same payment
//   (kDuplicate: nothing changes; the first decision answers it) or another payment under a
//   used id (kConflict: nothing changes; answered 409). Else the features apply it (both
//   parties' state, FeatureExtractor) and its row is kept, pending, until its decision comes;
//   a payment the features refuse (kRefused: an unconvertible amount, too late) changes
//   nothing and is not remembered.
// - A decision batch (vigil.<cluster>.dec.<p>, kind "decisions"): each decision of a pending
//   payment of p folds into both parties' account risk (the account step,
//   FeatureExtractor::RecordRisk, with the score, rule hit and alert thresholds the batch
//   carries) and releases the row. A decision of a payment that is not pending in p (decided
//   already, or never applied) changes nothing and is counted (unexpected_decisions).
// - A takeover marker: partition p's owner and epoch from now on.
// Every message moves the position, also those that change nothing, and one at or below the
// position is skipped (a redelivery). A message whose bytes cannot be read is counted
// (unreadable) and changes nothing: it is in the log for every node alike.
//
// The idempotency memory holds the last `idempotency_capacity` transaction ids in log order
// (oldest forgotten first), each with the SHA-256 of its canonical payment bytes
// (core/payment_identity.h), so it too is the same on every node.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_CLUSTER_LOG_APPLIER_H_
#define VIGIL_CLUSTER_LOG_APPLIER_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cluster/cluster_layout.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/partition_map.h"
#include "vigil/cluster/recent_memory.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/store/kv_store.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil::cluster {

// A payment applied and not yet decided.
struct PendingPayment {
  uint64_t sequence = 0;  // its position in the log
  int64_t stored_unix_ns = 0;  // when the log stored it
  PaymentEntry entry;
  std::vector<double> row;  // FeatureExtractor::Schema()'s columns, as applied
};

// What applying one message did, for the node's owner and fronts.
struct AppliedMessage {
  enum class Kind { kSkipped, kPayment, kDecisions, kTakeover, kUnreadable };
  enum class Outcome { kPending, kDuplicate, kConflict, kRefused };
  Kind kind = Kind::kSkipped;
  int partition = -1;
  // kPayment: the transaction id, what became of it, and why it was refused (kRefused,
  // kConflict).
  std::string transaction_id;
  Outcome outcome = Outcome::kPending;
  absl::Status refusal;
  // kDecisions: the decisions that applied (each released a pending payment), in batch order,
  // and for each how far its batch trails its payment in the log: in messages, and in the
  // time between the two were stored (the staleness bound of docs/cluster.md).
  std::vector<DecidedPayment> decided;
  std::vector<uint64_t> trailing_messages;
  std::vector<int64_t> trailing_ns;
};

// Partition p as the log has built it.
struct PartitionProgress {
  uint64_t last_decision_sequence = 0;  // the last message of its decision subject (0: none)
  std::string owner;                    // from the last takeover marker ("" before the first)
  uint64_t epoch = 0;
  uint64_t decisions = 0;
  uint64_t takeovers = 0;  // takeover markers applied: its changes of owner
};

struct LogApplierStats {
  uint64_t payments = 0;  // applied to the features
  uint64_t duplicates = 0;
  uint64_t conflicts = 0;
  uint64_t refused = 0;
  uint64_t decisions = 0;
  uint64_t unexpected_decisions = 0;
  uint64_t unreadable = 0;
  uint64_t redeliveries = 0;  // messages at or below the position, skipped
};

struct LogApplierOptions {
  size_t idempotency_capacity = 1'000'000;
};

class LogApplier {
 public:
  // "features" must outlive the applier; it is the node's feature state, at "position" (the
  // log sequence it was checkpointed at; 0: the log's start).
  LogApplier(const ClusterLayout& layout, FeatureExtractor* features, uint64_t position = 0,
             LogApplierOptions options = {});

  // Applies "message" (see the file comment). Errors only for a message of a subject that is
  // not this cluster's (kInvalidArgument: the caller read the wrong stream); nothing changes.
  absl::StatusOr<AppliedMessage> Apply(const StreamMessage& message);

  uint64_t position() const { return position_; }
  // Partition p's pending payments by log position, oldest first.
  const std::map<uint64_t, PendingPayment>& pending(int partition) const {
    return pending_[partition];
  }
  const PartitionProgress& progress(int partition) const { return progress_[partition]; }
  const LogApplierStats& stats() const { return stats_; }
  const PartitionMap& partitions() const { return map_; }

  // Puts the applied state besides the features into "batch", in "column_family"
  // (docs/cluster.md, "Checkpoints"): key "applier" holds the position, every partition's
  // progress, the pending payments with their rows, and the counters; the idempotency memory
  // is under "seen/" (RecentMemory: what changed since the last save). Written in one batch
  // with the features' changed accounts (FeatureStore::StageInto), it is the node's state at
  // position(). Batches must be written in the order they were saved into.
  void SaveInto(KvWriteBatch& batch, std::string_view column_family);
  // Replaces the applied state by what SaveInto saved in "store" (the features are restored
  // by their own FeatureStore); with nothing saved, the applier stays as it is. Errors:
  // kFailedPrecondition when the saved state is of another cluster or partition count
  // (naming both); kDataLoss naming the field that cannot be read.
  absl::Status Restore(const KvStore& store, std::string_view column_family);

 private:
  AppliedMessage ApplyPayment(int partition, const StreamMessage& message);
  AppliedMessage ApplyDecisions(int partition, const StreamMessage& message);

  ClusterLayout layout_;
  PartitionMap map_;
  FeatureExtractor* features_;
  uint64_t position_;
  LogApplierOptions options_;
  std::string payment_prefix_;   // "vigil.<cluster>.pay."
  std::string decision_prefix_;  // "vigil.<cluster>.dec."
  std::vector<std::map<uint64_t, PendingPayment>> pending_;
  std::vector<PartitionProgress> progress_;
  RecentMemory seen_;  // transaction id → SHA-256 of its canonical payment bytes
  LogApplierStats stats_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_LOG_APPLIER_H_
