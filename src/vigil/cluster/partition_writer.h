// PartitionWriter: how an owner writes its partition's decisions into the cluster log, fenced
// (docs/cluster.md, "Takeover and fencing").
//
// Every write to the partition's decision subject expects the sequence of the subject's last
// message as the writer knows it (Nats-Expected-Last-Subject-Sequence), so JetStream stores it
// only if nothing came in between. An owner starts with Takeover: a marker naming it and its
// lease epoch, expecting the last message of the subject that the node had applied. Once that
// marker is in the log, every write of an earlier owner expects an older sequence and is
// refused: a paused (not dead) owner that wakes up cannot add a decision, whatever its clock
// or its lease believe. A refusal makes the writer fenced for good; the node then goes on as a
// standby of the partition.
//
// A write that timed out (outcome unknown) is retried with the same message id and the same
// expectation: JetStream answers a message id it already stored as a duplicate before it looks
// at the expectation, so the retry learns the first write's sequence instead of a false
// refusal; a write that was not stored is stored now, or refused if another owner came first.
//
// Thread safety: one thread at a time.
#ifndef VIGIL_CLUSTER_PARTITION_WRITER_H_
#define VIGIL_CLUSTER_PARTITION_WRITER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cluster {

// Headers of the decision subject's messages.
inline constexpr char kKindHeader[] = "Vigil-Kind";    // "takeover" or "decisions"
inline constexpr char kOwnerHeader[] = "Vigil-Owner";  // node id
inline constexpr char kEpochHeader[] = "Vigil-Epoch";  // the writer's lease epoch
inline constexpr char kTakeoverKind[] = "takeover";
inline constexpr char kDecisionsKind[] = "decisions";

struct PartitionWriterOptions {
  // How many times a write whose outcome is unknown (a timeout, a lost connection) is tried
  // again, and how long apart, before the writer gives up with that error.
  int retries = 20;
  std::chrono::milliseconds retry_wait{100};
};

class PartitionWriter {
 public:
  // "nats" must outlive the writer.
  PartitionWriter(NatsConnection* nats, std::string subject, std::string node_id, uint64_t epoch,
                  PartitionWriterOptions options = {});

  // Writes the takeover marker after "last_applied", the sequence of the subject's last message
  // the node has applied (0: none). Returns the marker's sequence. kFailedPrecondition: another
  // message is on the subject after last_applied; apply it, then call again.
  absl::StatusOr<uint64_t> Takeover(uint64_t last_applied);

  // Appends a batch of decisions after the writer's last message; returns its sequence.
  // kFailedPrecondition once another writer wrote the subject (fenced, for good);
  // kFailedPrecondition also before Takeover succeeded.
  absl::StatusOr<uint64_t> Append(std::string_view batch);

  bool fenced() const { return fenced_; }
  uint64_t epoch() const { return epoch_; }
  const std::string& subject() const { return subject_; }
  // The sequence of the writer's last message (its marker's after Takeover), 0 before.
  uint64_t last_sequence() const { return last_; }

 private:
  absl::StatusOr<uint64_t> Write(std::string_view kind, std::string_view data, uint64_t after);

  NatsConnection* nats_;
  std::string subject_;
  std::string node_id_;
  uint64_t epoch_;
  PartitionWriterOptions options_;
  uint64_t last_ = 0;
  uint64_t written_ = 0;  // messages written, for their ids
  bool taken_over_ = false;
  bool fenced_ = false;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_PARTITION_WRITER_H_
