#include "vigil/cluster/log_applier.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/cluster/internal/byte_codec.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"
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
      progress_(layout.partitions),
      seen_(std::max<size_t>(options.idempotency_capacity, 1)) {
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
  const std::string_view fingerprint_bytes(reinterpret_cast<const char*>(fingerprint.data()),
                                           fingerprint.size());
  if (const std::string* seen = seen_.Find(tx.id); seen != nullptr) {
    if (*seen == fingerprint_bytes) {
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
  seen_.Insert(tx.id, std::string(fingerprint_bytes));
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

namespace {

constexpr std::string_view kStateMagic("VAS\x01", 4);
constexpr std::string_view kStateKey = "applier";
constexpr std::string_view kSeenPrefix = "seen/";

}  // namespace

void LogApplier::SaveInto(KvWriteBatch& batch, std::string_view column_family) {
  using internal::PutDouble;
  using internal::PutString;
  using internal::ZigZag;
  std::string out(kStateMagic);
  PutString(layout_.name, &out);
  PutVarint(static_cast<uint64_t>(layout_.partitions), &out);
  PutVarint(position_, &out);
  for (const uint64_t v :
       {stats_.payments, stats_.duplicates, stats_.conflicts, stats_.refused, stats_.decisions,
        stats_.unexpected_decisions, stats_.unreadable, stats_.redeliveries}) {
    PutVarint(v, &out);
  }
  for (const PartitionProgress& p : progress_) {
    PutVarint(p.last_decision_sequence, &out);
    PutString(p.owner, &out);
    PutVarint(p.epoch, &out);
    PutVarint(p.decisions, &out);
    PutVarint(p.takeovers, &out);
  }
  for (const std::map<uint64_t, PendingPayment>& pending : pending_) {
    PutVarint(pending.size(), &out);
    for (const auto& [sequence, payment] : pending) {
      PutVarint(sequence, &out);
      PutVarint(ZigZag(payment.stored_unix_ns), &out);
      PutString(EncodePayment(payment.entry), &out);
      PutVarint(payment.row.size(), &out);
      for (const double v : payment.row) PutDouble(v, &out);
    }
  }
  batch.Put(ToAbsl(column_family), ToAbsl(kStateKey), out);
  seen_.SaveInto(batch, column_family, kSeenPrefix);
}

absl::Status LogApplier::Restore(const KvStore& store, std::string_view column_family) {
  VIGIL_ASSIGN_OR_RETURN(const std::optional<std::string> saved,
                         store.Get(ToAbsl(column_family), ToAbsl(kStateKey)));
  if (!saved.has_value()) return absl::OkStatus();
  internal::ByteReader in(*saved, "saved applied state");
  VIGIL_RETURN_IF_ERROR(in.Magic(kStateMagic));
  std::string name;
  uint64_t partitions = 0;
  VIGIL_RETURN_IF_ERROR(in.String("cluster", &name));
  VIGIL_RETURN_IF_ERROR(in.Varint("partitions", &partitions));
  if (name != layout_.name || partitions != static_cast<uint64_t>(layout_.partitions)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the saved applied state is of cluster ", name, " with ", partitions,
        " partitions; this node is of cluster ", layout_.name, " with ", layout_.partitions,
        ": start it on the data dir of its own cluster, or an empty one"));
  }
  uint64_t position = 0;
  VIGIL_RETURN_IF_ERROR(in.Varint("position", &position));
  LogApplierStats stats;
  for (uint64_t* v :
       {&stats.payments, &stats.duplicates, &stats.conflicts, &stats.refused, &stats.decisions,
        &stats.unexpected_decisions, &stats.unreadable, &stats.redeliveries}) {
    VIGIL_RETURN_IF_ERROR(in.Varint("counters", v));
  }
  std::vector<PartitionProgress> progress(layout_.partitions);
  for (PartitionProgress& p : progress) {
    VIGIL_RETURN_IF_ERROR(in.Varint("last_decision_sequence", &p.last_decision_sequence));
    VIGIL_RETURN_IF_ERROR(in.String("owner", &p.owner));
    VIGIL_RETURN_IF_ERROR(in.Varint("epoch", &p.epoch));
    VIGIL_RETURN_IF_ERROR(in.Varint("decisions", &p.decisions));
    VIGIL_RETURN_IF_ERROR(in.Varint("takeovers", &p.takeovers));
  }
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<std::map<uint64_t, PendingPayment>> pending(layout_.partitions);
  for (std::map<uint64_t, PendingPayment>& partition : pending) {
    uint64_t count = 0;
    VIGIL_RETURN_IF_ERROR(in.Varint("pending count", &count));
    for (uint64_t k = 0; k < count; ++k) {
      PendingPayment payment;
      uint64_t stored = 0, columns = 0;
      std::string entry;
      VIGIL_RETURN_IF_ERROR(in.Varint("pending sequence", &payment.sequence));
      VIGIL_RETURN_IF_ERROR(in.Varint("pending stored_unix_ns", &stored));
      payment.stored_unix_ns = internal::UnZigZag(stored);
      VIGIL_RETURN_IF_ERROR(in.String("pending payment", &entry));
      VIGIL_ASSIGN_OR_RETURN(payment.entry, DecodePayment(entry));
      VIGIL_RETURN_IF_ERROR(in.Varint("pending row width", &columns));
      if (columns != width) {
        return absl::FailedPreconditionError(
            absl::StrCat("the saved applied state holds rows of ", columns,
                         " columns; this build's feature "
                         "schema has ",
                         width, ": start the node on an empty data dir"));
      }
      payment.row.resize(width);
      for (double& v : payment.row) VIGIL_RETURN_IF_ERROR(in.Double("pending row", &v));
      const uint64_t sequence = payment.sequence;
      partition.emplace(sequence, std::move(payment));
    }
  }
  VIGIL_RETURN_IF_ERROR(in.End());
  VIGIL_RETURN_IF_ERROR(seen_.Restore(store, column_family, kSeenPrefix));
  position_ = position;
  stats_ = stats;
  progress_ = std::move(progress);
  pending_ = std::move(pending);
  return absl::OkStatus();
}

}  // namespace vigil::cluster
