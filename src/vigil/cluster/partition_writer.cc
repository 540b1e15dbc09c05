#include "vigil/cluster/partition_writer.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil::cluster {

PartitionWriter::PartitionWriter(NatsConnection* nats, std::string subject, std::string node_id,
                                 uint64_t epoch, PartitionWriterOptions options)
    : nats_(nats),
      subject_(std::move(subject)),
      node_id_(std::move(node_id)),
      epoch_(epoch),
      options_(options) {}

absl::StatusOr<uint64_t> PartitionWriter::Write(std::string_view kind, std::string_view data,
                                                uint64_t after) {
  PublishOptions options;
  // Unique to this writer's message, and the same for each retry of it.
  options.msg_id = absl::StrCat(subject_, "/", node_id_, "/", epoch_, "/", written_);
  options.expected_last_subject_sequence = after;
  options.headers = {{kKindHeader, std::string(kind)},
                     {kOwnerHeader, node_id_},
                     {kEpochHeader, absl::StrCat(epoch_)}};
  absl::StatusOr<PublishAck> ack = absl::UnknownError("not tried");
  for (int attempt = 0; attempt <= options_.retries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(options_.retry_wait);
    ack = nats_->Publish(subject_, data, options);
    // Stored, refused, or a mistake of ours: an answer. Else the outcome is unknown: again.
    if (ack.ok() || absl::IsFailedPrecondition(ack.status()) ||
        absl::IsInvalidArgument(ack.status())) {
      break;
    }
  }
  VIGIL_RETURN_IF_ERROR(ack.status());
  ++written_;
  last_ = ack->sequence;
  return ack->sequence;
}

absl::StatusOr<uint64_t> PartitionWriter::Takeover(uint64_t last_applied) {
  if (fenced_) {
    return absl::FailedPreconditionError(
        absl::StrCat(subject_, ": this writer was fenced; a new lease needs a new writer"));
  }
  absl::StatusOr<uint64_t> marker = Write(kTakeoverKind, "", last_applied);
  if (absl::IsFailedPrecondition(marker.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat(subject_, " has messages after sequence ", last_applied,
                     " that this node has not applied; apply them and take over again"));
  }
  VIGIL_RETURN_IF_ERROR(marker.status());
  taken_over_ = true;
  return *marker;
}

absl::StatusOr<uint64_t> PartitionWriter::Append(std::string_view batch) {
  if (!taken_over_ || fenced_) {
    return absl::FailedPreconditionError(
        absl::StrCat(subject_,
                     fenced_ ? ": fenced: another owner has written the partition since epoch "
                             : ": not taken over (epoch ",
                     epoch_, fenced_ ? "" : ")"));
  }
  absl::StatusOr<uint64_t> written = Write(kDecisionsKind, batch, last_);
  if (absl::IsFailedPrecondition(written.status())) {
    fenced_ = true;
    return absl::FailedPreconditionError(
        absl::StrCat(subject_, ": fenced: another owner has written the partition since epoch ",
                     epoch_, "; this node no longer decides it"));
  }
  return written;
}

}  // namespace vigil::cluster
