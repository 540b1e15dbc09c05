// ClusterNode: one node of a cluster (docs/cluster.md): it applies the whole log in order
// (LogApplier), holds leases on its share of the partitions (LeaseTable, rendezvous hashing over
// the live nodes), takes each over fenced (PartitionWriter), decides its partitions' pending
// payments (PartitionDecider) and writes their decision batches; and, as any node's front does,
// publishes payments to their partitions (Submit).
//
// Threads: one applies the log and, whenever it has caught up with it, takes over the
// partitions it has leases for and decides what they have pending; one renews the node's
// registration and its leases every lease_ttl / 3, acquires free partitions assigned to it (or
// any free partition after a lease's time to live without an owner), and releases those assigned
// to another live node (a planned move). A lease that cannot be renewed, or a batch that is
// fenced, ends the node's ownership of the partition at once.
//
// Durable state (a node started over a FeatureStore): the applying thread checkpoints the
// node's applied state (the features' changed accounts, LogApplier's state and idempotency
// memory, the answers and refusals it remembers) with the log position in one RocksDB batch,
// every checkpoint_every messages or checkpoint_interval, and once more when the node stops; a
// restarted node restores it and reads the log from the next message. The node that decides
// partition 0 also ships a copy of its state store every ship_interval (checkpoint_shipping.h),
// from which a node with an empty data dir starts.
//
// Thread safety: every method may be called from any thread.
#ifndef VIGIL_CLUSTER_CLUSTER_NODE_H_
#define VIGIL_CLUSTER_CLUSTER_NODE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/cluster/cluster_layout.h"
#include "vigil/cluster/key_value_bucket.h"
#include "vigil/cluster/lease_table.h"
#include "vigil/cluster/log_applier.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/partition_decider.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/cluster/recent_memory.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/common/clock.h"
#include "vigil/common/ids.h"
#include "vigil/core/decision.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/features/feature_store.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil::cluster {

struct ClusterNodeOptions {
  ClusterLayout layout;
  std::string node_id;
  // How many of the latest decisions a node keeps to answer a caller that asks after its
  // decision was applied (a retry).
  size_t answer_memory = 100'000;
  std::chrono::milliseconds lease_ttl{3000};
  size_t max_batch = 256;  // payments per decision batch
  std::chrono::milliseconds log_retention{std::chrono::hours(24 * 7)};
  std::chrono::milliseconds duplicate_window{std::chrono::minutes(10)};
  // Checkpoints of the applied state (a node over a FeatureStore): after this many messages
  // applied, or this long, whichever comes first.
  uint64_t checkpoint_every = 20'000;
  std::chrono::milliseconds checkpoint_interval{5000};
  // How often the decider of partition 0 ships its state (0: never). Where "scratch_dir" (a
  // directory on the state store's filesystem, so that RocksDB's checkpoint hard-links its
  // files) is empty, nothing is shipped.
  std::chrono::milliseconds ship_interval{60'000};
  std::string scratch_dir;
};

// One partition as a node sees it.
struct PartitionStatus {
  int partition = 0;
  bool decided_here = false;  // this node holds its lease and has taken it over
  size_t pending = 0;         // payments applied and not yet decided
  uint64_t decisions = 0;     // decisions applied
  uint64_t takeovers = 0;     // changes of owner applied
};

// What a node holds now, for status, metrics and tests.
struct ClusterNodeStatus {
  uint64_t position = 0;
  std::vector<int> owned;  // partitions it decides, ascending
  std::vector<PartitionStatus> partitions;  // every partition, by number
  LogApplierStats applied;
  uint64_t batches_written = 0;
  uint64_t fenced = 0;  // batches refused: another owner took the partition
  uint64_t leases_lost = 0;
  uint64_t takeovers = 0;
  // How far decision batches trailed their payments in the log (docs/cluster.md, "Two
  // accounts per payment"): the most, in messages and in milliseconds between the two were
  // stored, over every decision applied.
  uint64_t max_trailing_messages = 0;
  double max_trailing_ms = 0;
  // Durable state: the position restored at start (0: none), of the last checkpoint written,
  // how many were written and failed; the position of the last checkpoint this node shipped,
  // how many it shipped and how many failed.
  uint64_t restored_position = 0;
  uint64_t checkpoint_position = 0;
  uint64_t checkpoints = 0;
  uint64_t checkpoint_failures = 0;
  uint64_t shipped_position = 0;
  uint64_t shipments = 0;
  uint64_t shipment_failures = 0;
};

// What became of a payment a caller submitted and waited for (ClusterNode::Decide).
struct ClusterAnswer {
  enum class Kind {
    kDecided,   // decision_json holds the Decision, as the owner decided it
    kConflict,  // its transaction id is another payment's (409 idempotency_conflict)
    kRefused,   // the features refused it (refusal: 422, naming the field)
    kPending,   // no decision within the wait: it is in the log and will be decided once
  };
  Kind kind = Kind::kPending;
  std::string decision_json;
  Decision decision;  // kDecided: what decision_json encodes
  // The payment had reached the log before (a retry): answered with its first decision.
  bool repeated = false;
  absl::Status refusal;
};

class ClusterNode {
 public:
  // Checks or stores the layout, creates or checks the log and the buckets, and starts the
  // node's threads. "nats", "features" (the node's state, at the log's start), "decider" and
  // "clock" must outlive the node.
  static absl::StatusOr<std::unique_ptr<ClusterNode>> Start(
      NatsConnection* nats, FeatureExtractor* features,
      std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
      ClusterNodeOptions options);
  // The same over a durable state ("state" must outlive the node): restores what its last
  // checkpoint saved and applies the log from the next position. Errors besides Start's:
  // kFailedPrecondition when the saved state is of another cluster, is ahead of the log (its
  // data dir is of another log) or behind the log's first message (expired after
  // log_retention: start the node on an empty data dir), each saying so.
  static absl::StatusOr<std::unique_ptr<ClusterNode>> Start(
      NatsConnection* nats, FeatureStore* state, std::shared_ptr<const PartitionDecider> decider,
      const Clock& clock, ClusterNodeOptions options);

  // Stops the threads, checkpoints the state, and releases the leases it holds (so other nodes
  // take over at once).
  ~ClusterNode();
  // Stops the threads and leaves the leases to expire, as a crash would.
  void Abandon();

  // Publishes "payment" to its originator's partition: the position it got in the log, or the
  // duplicate's. Its message id is its transaction id and the hash of its canonical bytes
  // (core/payment_identity.h), so the stream drops a retry of the same payment, and another
  // payment under the same id reaches the log (refused there as a conflict, or decided when
  // the first was refused).
  absl::StatusOr<PublishAck> Submit(const PaymentEntry& payment);

  // Submit, then waits until this node has applied the payment's decision (at most "wait"):
  // what a front answers its caller. The decision is the Decision JSON rebuilt from the audit
  // record of its batch (the same bytes on every node). A payment under a transaction id that
  // was decided for another payment is a conflict, told by the payment fingerprint
  // (core/payment_identity.h), also when the log dropped it as a duplicate message id.
  absl::StatusOr<ClusterAnswer> Decide(const PaymentEntry& payment, std::chrono::milliseconds wait);
  // Decide for several payments at once (a batch request): all published, then awaited
  // together for at most "wait". One answer per payment, in order; an error is that payment's
  // publish failing (the log unreachable: nothing of it was decided).
  std::vector<absl::StatusOr<ClusterAnswer>> DecideAll(absl::Span<const PaymentEntry> payments,
                                                       std::chrono::milliseconds wait);

  ClusterNodeStatus status() const;
  // OK while the node's connection to the NATS servers is up (NatsConnection::Health).
  absl::Status health() const { return nats_->Health(); }

 private:
  ClusterNode(NatsConnection* nats, FeatureExtractor* features, FeatureStore* store,
              std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
              ClusterNodeOptions options);
  static absl::StatusOr<std::unique_ptr<ClusterNode>> StartNode(
      NatsConnection* nats, FeatureExtractor* features, FeatureStore* store,
      std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
      ClusterNodeOptions options);
  // Restores the saved state (store_) and checks it against the log's extent.
  absl::Status RestoreSaved();
  // Writes a checkpoint when one is due ("force": whenever the position moved). Called by the
  // applying thread only (and by Stop once it ended).
  void MaybeCheckpoint(bool force);
  void ShipLoop();

  struct Owned {
    Lease lease;
    std::shared_ptr<PartitionWriter> writer;  // null until taken over
    uint64_t decided_up_to = 0;  // the last payment sequence in a batch this node wrote
  };

  // A caller waiting in Decide.
  struct Waiter {
    std::string canonical;  // its payment's canonical bytes
    std::string msg_id;     // its message id (MessageIdOf)
    bool done = false;
    ClusterAnswer answer;
    std::string record;  // kDecided: the audit record body
  };

  // Submit under a message id already computed.
  absl::StatusOr<PublishAck> Publish(const PaymentEntry& payment, const std::string& msg_id);
  void ApplyLoop();
  // Completes the waiters of what "applied" settled. REQUIRES: mu_ held.
  void Answer(const AppliedMessage& applied, const StreamMessage& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LeaseLoop();
  // Calls write(0) .. write(count - 1), spread over this thread and the writer threads;
  // returns once all returned. Called by the applying thread only.
  void WriteAll(size_t count, const std::function<void(size_t)>& write);
  void WriterLoop();
  // With the log applied to its end: takeovers, then the owned partitions' pending payments.
  // Whether it did anything (took a partition over, wrote or tried to write a batch).
  bool TakeOverAndDecide();
  void Stop(bool release);
  std::vector<std::string> LiveNodes();
  std::string AssignedNode(int partition, const std::vector<std::string>& nodes) const;

  NatsConnection* nats_;
  FeatureExtractor* features_;
  FeatureStore* store_;  // null: the state is in memory only
  std::shared_ptr<const PartitionDecider> decider_;
  const Clock& clock_;
  ClusterNodeOptions options_;
  std::unique_ptr<KeyValueBucket> leases_bucket_;
  std::unique_ptr<KeyValueBucket> nodes_bucket_;
  std::unique_ptr<LeaseTable> leases_;
  std::unique_ptr<StreamReader> reader_;
  UuidV7Generator ids_;

  mutable absl::Mutex mu_;
  LogApplier applier_ ABSL_GUARDED_BY(mu_);
  std::map<int, Owned> owned_ ABSL_GUARDED_BY(mu_);
  ClusterNodeStatus counters_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::chrono::steady_clock::time_point> free_since_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::vector<Waiter*>> waiters_ ABSL_GUARDED_BY(mu_);
  // The latest decisions' audit record bodies by transaction id, oldest first out.
  RecentMemory answers_ ABSL_GUARDED_BY(mu_);
  // The latest refused payments' refusals (EncodeRefusal) by message id (transaction id and
  // payment hash).
  RecentMemory refusals_ ABSL_GUARDED_BY(mu_);

  // Checkpoints, by the applying thread: the last position written, when, and a batch whose
  // write failed (written again before any later one, or the accounts it holds would be
  // durable only at their next change).
  uint64_t saved_position_ = 0;
  std::chrono::steady_clock::time_point saved_at_;
  std::optional<KvWriteBatch> unwritten_;
  uint64_t unwritten_position_ = 0;
  // Held while a checkpoint is written, and by the shipper while it copies the store, so that
  // the copy's position is known.
  absl::Mutex save_mu_;
  uint64_t durable_position_ ABSL_GUARDED_BY(save_mu_) = 0;
  std::atomic<uint64_t> restored_position_{0}, checkpoint_position_{0}, checkpoints_{0},
      checkpoint_failures_{0}, shipped_position_{0}, shipments_{0}, shipment_failures_{0};

  // WriteAll's round, shared with the writer threads.
  absl::Mutex writes_mu_;
  const std::function<void(size_t)>* write_job_ ABSL_GUARDED_BY(writes_mu_) = nullptr;
  size_t write_count_ ABSL_GUARDED_BY(writes_mu_) = 0;
  size_t write_next_ ABSL_GUARDED_BY(writes_mu_) = 0;
  size_t write_done_ ABSL_GUARDED_BY(writes_mu_) = 0;
  bool writers_stop_ ABSL_GUARDED_BY(writes_mu_) = false;
  std::vector<std::thread> writer_threads_;

  std::atomic<bool> stopping_{false};
  std::thread apply_thread_;
  std::thread lease_thread_;
  std::thread ship_thread_;
  bool stopped_ = false;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_CLUSTER_NODE_H_
