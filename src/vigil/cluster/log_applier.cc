#include "vigil/cluster/log_applier.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/common/sha256.h"
#include "vigil/common/string_view.h"
#include "vigil/core/payment_identity.h"

namespace vigil::cluster {
namespace {

// The partition number after "prefix" in "subject", -1 when it is not one of "partitions".
int PartitionAfter(std::string_view subject, std::string_view prefix, int partitions) {
  if (subject.substr(0, prefix.size()) != prefix) return -1;
  int p = -1;
  if (!absl::SimpleAtoi(ToAbsl(subject.substr(prefix.size())), &p)) return -1;
  return p >= 0 && p < partitions ? p : -1;
}

// Payments read from JSON carry their sender's event time; those parsed from a SWIFT MT or ISO
// 20022 message at the front were timed by their arrival (docs/serve.md, "Idempotency").
EventTimeSource TimeSourceOf(const PaymentEntry& entry) {
  return entry.input_format == "json" ? EventTimeSource::kSender : EventTimeSource::kArrival;
}

}  // namespace

LogApplier::LogApplier(const ClusterLayout& layout, FeatureExtractor* features, uint64_t position,
                       LogApplierOptions options)
    : layout_(layout),
      map_(layout.partitions),
      features_(features),
      position_(position),
      options_(options),
      payment_prefix_(PaymentSubject(layout, 0)),
      decision_prefix_(DecisionSubject(layout, 0)),
      pending_(layout.partitions),
      progress_(layout.partitions) {
  payment_prefix_.pop_back();  // "...pay.0" → "...pay."
  decision_prefix_.pop_back();
}

absl::StatusOr<AppliedMessage> LogApplier::Apply(const StreamMessage& message) {
  const int pay = PartitionAfter(message.subject, payment_prefix_, layout_.partitions);
  const int dec =
      pay < 0 ? PartitionAfter(message.subject, decision_prefix_, layout_.partitions) : -1;
  if (pay < 0 && dec < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", message.sequence, " on ", message.subject, " is not of cluster ",
                     layout_.name, " (", layout_.partitions, " partitions)"));
  }
  if (message.sequence <= position_) {
    ++stats_.redeliveries;
    return AppliedMessage{};
  }
  position_ = message.sequence;
  return pay >= 0 ? ApplyPayment(pay, message) : ApplyDecisions(dec, message);
}

AppliedMessage LogApplier::ApplyPayment(int partition, const StreamMessage& message) {
  AppliedMessage out;
  out.kind = AppliedMessage::Kind::kPayment;
  out.partition = partition;
  absl::StatusOr<PaymentEntry> entry = DecodePayment(message.data);
  if (!entry.ok()) {
    ++stats_.unreadable;
    out.kind = AppliedMessage::Kind::kUnreadable;
    out.refusal = entry.status();
    return out;
  }
  const Transaction& tx = entry->transaction;
  out.transaction_id = tx.id;
  const int home = map_.Of(tx.originator.bank_id, tx.originator.account_id);
  if (home != partition) {
    ++stats_.refused;
    out.outcome = AppliedMessage::Outcome::kRefused;
    out.refusal = absl::FailedPreconditionError(
        absl::StrCat("payment ", tx.id, " was published to partition ", partition,
                     ", its originator's partition is ", home));
    return out;
  }
  const std::array<uint8_t, 32> fingerprint =
      Sha256(CanonicalPaymentBytes(tx, TimeSourceOf(*entry)));
  if (const auto it = seen_.find(tx.id); it != seen_.end()) {
    if (it->second.fingerprint == fingerprint) {
      ++stats_.duplicates;
      out.outcome = AppliedMessage::Outcome::kDuplicate;
    } else {
      ++stats_.conflicts;
      out.outcome = AppliedMessage::Outcome::kConflict;
      out.refusal = absl::AlreadyExistsError(
          absl::StrCat("transaction id ", tx.id, " is already used by another payment"));
    }
    return out;
  }
  PendingPayment pending;
  pending.sequence = message.sequence;
  pending.stored_unix_ns = message.stored_unix_ns;
  pending.row.assign(FeatureExtractor::Schema()->size(), 0.0);
  const absl::Status applied = features_->Process(tx, absl::MakeSpan(pending.row));
  if (!applied.ok()) {
    ++stats_.refused;
    out.outcome = AppliedMessage::Outcome::kRefused;
    out.refusal = applied;
    return out;
  }
  ++stats_.payments;
  Remember(tx.id, fingerprint);
  pending.entry = std::move(*entry);
  pending_[partition].emplace(message.sequence, std::move(pending));
  return out;
}

AppliedMessage LogApplier::ApplyDecisions(int partition, const StreamMessage& message) {
  AppliedMessage out;
  out.partition = partition;
  PartitionProgress& progress = progress_[partition];
  progress.last_decision_sequence = message.sequence;
  if (message.Header(kKindHeader) == kTakeoverKind) {
    out.kind = AppliedMessage::Kind::kTakeover;
    progress.owner = std::string(message.Header(kOwnerHeader));
    uint64_t epoch = 0;
    progress.epoch = absl::SimpleAtoi(ToAbsl(message.Header(kEpochHeader)), &epoch) ? epoch : 0;
    ++progress.takeovers;
    return out;
  }
  out.kind = AppliedMessage::Kind::kDecisions;
  absl::StatusOr<std::vector<DecidedPayment>> batch = DecodeDecisions(message.data);
  if (!batch.ok() || message.Header(kKindHeader) != kDecisionsKind) {
    ++stats_.unreadable;
    out.kind = AppliedMessage::Kind::kUnreadable;
    out.refusal = batch.ok() ? absl::DataLossError(absl::StrCat(
                                   "message ", message.sequence, " on ", message.subject,
                                   " is of kind \"", ToAbsl(message.Header(kKindHeader)), "\""))
                             : batch.status();
    return out;
  }
  std::map<uint64_t, PendingPayment>& pending = pending_[partition];
  for (DecidedPayment& d : *batch) {
    const auto it = pending.find(d.payment_sequence);
    if (it == pending.end() || it->second.entry.transaction.id != d.transaction_id) {
      ++stats_.unexpected_decisions;
      continue;
    }
    features_->RecordRisk(it->second.entry.transaction, d.score, d.rule_hit, d.alert);
    out.trailing_messages.push_back(message.sequence - d.payment_sequence);
    out.trailing_ns.push_back(message.stored_unix_ns - it->second.stored_unix_ns);
    pending.erase(it);
    ++stats_.decisions;
    ++progress.decisions;
    out.decided.push_back(std::move(d));
  }
  return out;
}

void LogApplier::Remember(const std::string& id, const std::array<uint8_t, 32>& fingerprint) {
  seen_.emplace(id, Seen{fingerprint});
  seen_order_.push_back(id);
  while (seen_order_.size() > options_.idempotency_capacity) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

}  // namespace vigil::cluster
