#include "vigil/cluster/cluster_node.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "vigil/audit/audit_record.h"
#include "vigil/cluster/checkpoint_shipping.h"
#include "vigil/cluster/internal/byte_codec.h"
#include "vigil/cluster/cluster_status.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"
#include "vigil/core/payment_identity.h"
#include "vigil/decision/decision_json.h"

namespace vigil::cluster {
namespace {

constexpr std::chrono::milliseconds kReadWait{20};
// Threads that write decision batches of different partitions at the same time (besides the
// applying thread): a round's batches wait for their acknowledgements together.
constexpr int kWriterThreads = 7;
// How long a node that has more to do looks for the next message of the log.
constexpr std::chrono::milliseconds kPollWait{1};
// Decide at least this often while the log keeps coming (messages applied in between).
constexpr int kDecideEvery = 256;

// The payment's canonical bytes, timed as the applier times it (log_applier.cc).
std::string CanonicalOf(const PaymentEntry& entry) {
  return CanonicalPaymentBytes(entry.transaction, entry.input_format == "json"
                                                      ? EventTimeSource::kSender
                                                      : EventTimeSource::kArrival);
}

// A payment's message id: its transaction id and the hash of its canonical bytes, so that the
// stream drops a retry of the same payment but lets another payment under the same id reach the
// log (where it is refused as a conflict, or decided when the first was refused: a corrected
// retry, as `vigil serve` decides it).
std::string MessageIdOf(const PaymentEntry& entry, std::string_view canonical) {
  return absl::StrCat(entry.transaction.id, ":", Sha256Hex(canonical).substr(0, 32));
}

// Where the node's applied state lives beside the features in its FeatureStore.
constexpr std::string_view kStateFamily = kNodeStateFamily;
constexpr std::string_view kAnswerPrefix = "answer/";
constexpr std::string_view kRefusalPrefix = "refusal/";

// A refusal as the node remembers it: its status code (varint), message and payloads (the
// field path the answer names is one), each a varint-prefixed string.
std::string EncodeRefusal(const absl::Status& status) {
  std::string out;
  PutVarint(static_cast<uint64_t>(status.code()), &out);
  internal::PutString(ToStd(status.message()), &out);
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    internal::PutString(ToStd(type_url), &out);
    internal::PutString(std::string(payload), &out);
  });
  return out;
}

absl::Status DecodeRefusal(std::string_view bytes) {
  internal::ByteReader in(bytes, "remembered refusal");
  uint64_t code = 0;
  std::string message;
  if (!in.Varint("code", &code).ok() || code == 0 || code > 16 ||
      !in.String("message", &message).ok()) {
    return absl::InternalError("a remembered refusal that cannot be read");
  }
  absl::Status status(static_cast<absl::StatusCode>(code), message);
  while (!in.AtEnd()) {
    std::string type_url, payload;
    if (!in.String("type_url", &type_url).ok() || !in.String("payload", &payload).ok()) break;
    status.SetPayload(type_url, absl::Cord(payload));
  }
  return status;
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NodeKey(std::string_view node) { return absl::StrCat("n.", ToAbsl(node)); }

uint64_t RendezvousScore(int partition, std::string_view node) {
  const std::array<uint8_t, 32> digest =
      Sha256(absl::StrCat("vigil.owner.v1/", partition, "/", ToAbsl(node)));
  uint64_t score = 0;
  for (int k = 0; k < 8; ++k) score = (score << 8) | digest[k];
  return score;
}

}  // namespace

ClusterNode::ClusterNode(NatsConnection* nats, FeatureExtractor* features, FeatureStore* store,
                         std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
                         ClusterNodeOptions options)
    : nats_(nats),
      features_(features),
      store_(store),
      decider_(std::move(decider)),
      clock_(clock),
      options_(std::move(options)),
      ids_(clock, std::random_device{}()),
      applier_(options_.layout, features),
      answers_(std::max<size_t>(options_.answer_memory, 1)),
      refusals_(std::max<size_t>(options_.answer_memory, 1)),
      saved_at_(std::chrono::steady_clock::now()) {}

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::Start(
    NatsConnection* nats, FeatureExtractor* features,
    std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
    ClusterNodeOptions options) {
  return StartNode(nats, features, nullptr, std::move(decider), clock, std::move(options));
}

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::Start(
    NatsConnection* nats, FeatureStore* state, std::shared_ptr<const PartitionDecider> decider,
    const Clock& clock, ClusterNodeOptions options) {
  return StartNode(nats, &state->extractor(), state, std::move(decider), clock, std::move(options));
}

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::StartNode(
    NatsConnection* nats, FeatureExtractor* features, FeatureStore* store,
    std::shared_ptr<const PartitionDecider> decider, const Clock& clock,
    ClusterNodeOptions options) {
  const ClusterLayout layout = options.layout;  // a copy: "options" moves into the node
  VIGIL_RETURN_IF_ERROR(CheckLayout(layout));
  if (options.node_id.empty() || absl::StrContains(options.node_id, ".")) {
    return absl::InvalidArgumentError(absl::StrCat("cluster.node_id \"", options.node_id,
                                                   "\": required, letters, digits, '-' or '_'"));
  }
  VIGIL_ASSIGN_OR_RETURN(auto config, nats->EnsureBucket({.name = BucketName(layout, "config"),
                                                          .replicas = layout.replicas}));
  VIGIL_RETURN_IF_ERROR(AgreeLayout(*config, layout).status());
  VIGIL_RETURN_IF_ERROR(nats->EnsureStream(
      {.name = LogStreamName(layout),
       .subjects = LogSubjects(layout),
       .replicas = layout.replicas,
       .max_age = std::chrono::duration_cast<std::chrono::seconds>(options.log_retention),
       .duplicate_window = options.duplicate_window}));
  VIGIL_RETURN_IF_ERROR(EnsureCheckpointStream(nats, layout));
  std::unique_ptr<ClusterNode> node(
      new ClusterNode(nats, features, store, std::move(decider), clock, std::move(options)));
  const ClusterNodeOptions& o = node->options_;
  VIGIL_ASSIGN_OR_RETURN(node->leases_bucket_,
                         nats->EnsureBucket({.name = BucketName(layout, "leases"),
                                             .replicas = layout.replicas,
                                             .storage = StreamStorage::kMemory,
                                             .ttl = o.lease_ttl}));
  VIGIL_ASSIGN_OR_RETURN(node->nodes_bucket_,
                         nats->EnsureBucket({.name = BucketName(layout, "nodes"),
                                             .replicas = layout.replicas,
                                             .storage = StreamStorage::kMemory,
                                             .ttl = o.lease_ttl}));
  node->leases_ = std::make_unique<LeaseTable>(node->leases_bucket_.get(), o.node_id);
  VIGIL_RETURN_IF_ERROR(node->RestoreSaved());
  uint64_t from = 0;
  {
    absl::MutexLock lock(&node->mu_);
    from = node->applier_.position() + 1;
  }
  VIGIL_ASSIGN_OR_RETURN(node->reader_, nats->Read(LogStreamName(layout), "", from));
  for (int k = 0; k < kWriterThreads; ++k) {
    node->writer_threads_.emplace_back([n = node.get()] { n->WriterLoop(); });
  }
  node->apply_thread_ = std::thread([n = node.get()] { n->ApplyLoop(); });
  node->lease_thread_ = std::thread([n = node.get()] { n->LeaseLoop(); });
  if (store != nullptr && !o.scratch_dir.empty() && o.ship_interval.count() > 0) {
    node->ship_thread_ = std::thread([n = node.get()] { n->ShipLoop(); });
  }
  return node;
}

absl::Status ClusterNode::RestoreSaved() {
  uint64_t position = 0;
  if (store_ != nullptr) {
    absl::MutexLock lock(&mu_);
    VIGIL_RETURN_IF_ERROR(applier_.Restore(store_->kv(), kStateFamily));
    VIGIL_RETURN_IF_ERROR(answers_.Restore(store_->kv(), kStateFamily, kAnswerPrefix));
    VIGIL_RETURN_IF_ERROR(refusals_.Restore(store_->kv(), kStateFamily, kRefusalPrefix));
    position = applier_.position();
  }
  // A log that does not hold the messages after the state's position cannot continue it.
  VIGIL_ASSIGN_OR_RETURN(const StreamStatus log, nats_->StatusOf(LogStreamName(options_.layout)));
  if (position > log.last_sequence) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this node's saved state is at log position ", position, ", the cluster's log ends at ",
        log.last_sequence, ": the data dir is of another log (move it away to start empty)"));
  }
  if (log.messages > 0 && log.first_sequence > position + 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("this node's state is at log position ", position,
                     ", and the log's first message is ", log.first_sequence,
                     " (older ones expired after log_retention): start the node on an "
                     "empty data dir, which restores the last shipped checkpoint"));
  }
  saved_position_ = position;
  {
    absl::MutexLock lock(&save_mu_);
    durable_position_ = position;
  }
  restored_position_ = position;
  checkpoint_position_ = position;
  return absl::OkStatus();
}

void ClusterNode::MaybeCheckpoint(bool force) {
  if (store_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  std::optional<KvWriteBatch> batch;
  uint64_t position = 0;
  if (!unwritten_.has_value()) {
    absl::MutexLock lock(&mu_);
    position = applier_.position();
    if (position == saved_position_) return;
    if (!force && position - saved_position_ < options_.checkpoint_every &&
        now - saved_at_ < options_.checkpoint_interval) {
      return;
    }
    batch.emplace();
    store_->StageInto(*batch);
    applier_.SaveInto(*batch, kStateFamily);
    answers_.SaveInto(*batch, kStateFamily, kAnswerPrefix);
    refusals_.SaveInto(*batch, kStateFamily, kRefusalPrefix);
    unwritten_ = std::move(batch);
    unwritten_position_ = position;
  } else if (!force && now - saved_at_ < std::chrono::milliseconds(500)) {
    return;  // a failed write is tried again, not at every message
  }
  saved_at_ = now;
  absl::MutexLock lock(&save_mu_);
  if (!store_->kv().Write(*unwritten_).ok()) {
    ++checkpoint_failures_;
    return;
  }
  unwritten_.reset();
  saved_position_ = unwritten_position_;
  durable_position_ = unwritten_position_;
  checkpoint_position_ = unwritten_position_;
  ++checkpoints_;
}

void ClusterNode::ShipLoop() {
  auto next = std::chrono::steady_clock::now() + options_.ship_interval;
  const std::string copy = absl::StrCat(options_.scratch_dir, "/shipping");
  while (!stopping_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() < next) continue;
    next = std::chrono::steady_clock::now() + options_.ship_interval;
    {
      absl::MutexLock lock(&mu_);
      const auto it = owned_.find(0);
      if (it == owned_.end() || it->second.writer == nullptr) continue;  // not the shipper
    }
    std::error_code ignored;
    std::filesystem::remove_all(copy, ignored);
    uint64_t position = 0;
    absl::Status copied;
    {
      absl::MutexLock lock(&save_mu_);
      position = durable_position_;
      if (position == 0 || position == shipped_position_) continue;  // nothing new to ship
      copied = store_->kv().Checkpoint(copy);
    }
    absl::Status shipped = copied;
    if (copied.ok()) {
      shipped =
          ShipCheckpoint(nats_, options_.layout, copy, position, options_.node_id, UnixMillis())
              .status();
    }
    std::filesystem::remove_all(copy, ignored);
    if (!shipped.ok()) {
      ++shipment_failures_;
      continue;
    }
    shipped_position_ = position;
    ++shipments_;
  }
}

ClusterNode::~ClusterNode() { Stop(/*release=*/true); }

void ClusterNode::Abandon() { Stop(/*release=*/false); }

void ClusterNode::Stop(bool release) {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  if (apply_thread_.joinable()) apply_thread_.join();
  if (lease_thread_.joinable()) lease_thread_.join();
  if (ship_thread_.joinable()) ship_thread_.join();
  if (release) MaybeCheckpoint(/*force=*/true);  // a crash (Abandon) saves nothing more
  {
    absl::MutexLock lock(&writes_mu_);
    writers_stop_ = true;
  }
  for (std::thread& t : writer_threads_) t.join();
  writer_threads_.clear();
  if (!release) return;
  std::vector<Lease> held;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [p, owned] : owned_) held.push_back(owned.lease);
    owned_.clear();
  }
  for (const Lease& lease : held) leases_->Release(lease).IgnoreError();  // expires otherwise
}

absl::StatusOr<PublishAck> ClusterNode::Submit(const PaymentEntry& payment) {
  return Publish(payment, MessageIdOf(payment, CanonicalOf(payment)));
}

absl::StatusOr<PublishAck> ClusterNode::Publish(const PaymentEntry& payment,
                                                const std::string& msg_id) {
  const Transaction& tx = payment.transaction;
  const int p = applier_.partitions().Of(tx.originator.bank_id, tx.originator.account_id);
  PublishOptions once;
  once.msg_id = msg_id;
  return nats_->Publish(PaymentSubject(options_.layout, p), EncodePayment(payment), once);
}

void ClusterNode::Answer(const AppliedMessage& applied, const StreamMessage& message) {
  using Outcome = AppliedMessage::Outcome;
  if (applied.kind == AppliedMessage::Kind::kDecisions) {
    for (size_t k = 0; k < applied.decided.size(); ++k) {
      const double ms = static_cast<double>(applied.trailing_ns[k]) / 1e6;
      counters_.max_trailing_messages =
          std::max(counters_.max_trailing_messages, applied.trailing_messages[k]);
      counters_.max_trailing_ms = std::max(counters_.max_trailing_ms, ms);
    }
    for (const DecidedPayment& d : applied.decided) {
      answers_.Insert(d.transaction_id, d.record);
      if (auto it = waiters_.find(d.transaction_id); it != waiters_.end()) {
        for (Waiter* w : it->second) {
          w->done = true;
          w->answer.kind = ClusterAnswer::Kind::kDecided;
          w->record = d.record;
        }
      }
    }
    return;
  }
  if (applied.kind != AppliedMessage::Kind::kPayment ||
      (applied.outcome != Outcome::kRefused && applied.outcome != Outcome::kConflict)) {
    return;
  }
  absl::StatusOr<PaymentEntry> entry = DecodePayment(message.data);
  if (!entry.ok()) return;
  if (applied.outcome == Outcome::kRefused) {
    // For a retry of this very payment, which the stream drops as a duplicate message.
    refusals_.Insert(MessageIdOf(*entry, CanonicalOf(*entry)), EncodeRefusal(applied.refusal));
  }
  const auto it = waiters_.find(applied.transaction_id);
  if (it == waiters_.end()) return;
  // Only the callers of this very payment: a refused or conflicting arrival says nothing of
  // another payment under the same id.
  const std::string canonical = CanonicalOf(*entry);
  for (Waiter* w : it->second) {
    if (w->canonical != canonical) continue;
    w->done = true;
    w->answer.kind = applied.outcome == Outcome::kConflict ? ClusterAnswer::Kind::kConflict
                                                           : ClusterAnswer::Kind::kRefused;
    w->answer.refusal = applied.refusal;
  }
}

absl::StatusOr<ClusterAnswer> ClusterNode::Decide(const PaymentEntry& payment,
                                                  std::chrono::milliseconds wait) {
  std::vector<absl::StatusOr<ClusterAnswer>> answers = DecideAll({&payment, 1}, wait);
  return std::move(answers[0]);
}

std::vector<absl::StatusOr<ClusterAnswer>> ClusterNode::DecideAll(
    absl::Span<const PaymentEntry> payments, std::chrono::milliseconds wait) {
  const absl::Time deadline = absl::Now() + absl::FromChrono(wait);
  std::vector<Waiter> waiters(payments.size());
  std::vector<absl::StatusOr<ClusterAnswer>> out(payments.size(), ClusterAnswer{});
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < payments.size(); ++i) {
      Waiter& waiter = waiters[i];
      const std::string& id = payments[i].transaction.id;
      waiter.canonical = CanonicalOf(payments[i]);
      waiter.msg_id = MessageIdOf(payments[i], waiter.canonical);
      if (const std::string* record = answers_.Find(id); record != nullptr) {
        waiter.done = true;
        waiter.answer.kind = ClusterAnswer::Kind::kDecided;
        waiter.answer.repeated = true;
        waiter.record = *record;
      } else if (const std::string* refused = refusals_.Find(waiter.msg_id); refused != nullptr) {
        waiter.done = true;
        waiter.answer.kind = ClusterAnswer::Kind::kRefused;
        waiter.answer.refusal = DecodeRefusal(*refused);
      } else {
        waiters_[id].push_back(&waiter);  // before publishing: its decision cannot slip past
      }
    }
  }
  // Published one after the other, each acknowledged by the stream's quorum; the decisions are
  // then awaited together, so a batch waits about as long as its slowest payment.
  std::vector<bool> published(payments.size(), false);
  for (size_t i = 0; i < payments.size(); ++i) {
    if (waiters[i].done) continue;
    absl::StatusOr<PublishAck> ack = Publish(payments[i], waiters[i].msg_id);
    if (!ack.ok()) {
      out[i] = ack.status();
      continue;
    }
    published[i] = true;
    if (ack->duplicate) waiters[i].answer.repeated = true;
  }
  {
    absl::MutexLock lock(&mu_);
    const auto all_done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (size_t i = 0; i < waiters.size(); ++i) {
        if (published[i] && !waiters[i].done) return false;
      }
      return true;
    };
    // A duplicate of a payment refused before this call registered: the log will not apply it
    // again, its refusal is remembered.
    for (size_t i = 0; i < payments.size(); ++i) {
      if (!published[i] || waiters[i].done || !waiters[i].answer.repeated) continue;
      if (const std::string* refused = refusals_.Find(waiters[i].msg_id); refused != nullptr) {
        waiters[i].done = true;
        waiters[i].answer.kind = ClusterAnswer::Kind::kRefused;
        waiters[i].answer.refusal = DecodeRefusal(*refused);
      }
    }
    mu_.AwaitWithDeadline(absl::Condition(&all_done), deadline);
    for (size_t i = 0; i < payments.size(); ++i) {
      auto it = waiters_.find(payments[i].transaction.id);
      if (it == waiters_.end()) continue;
      std::erase(it->second, &waiters[i]);
      if (it->second.empty()) waiters_.erase(it);
    }
  }
  for (size_t i = 0; i < payments.size(); ++i) {
    Waiter& waiter = waiters[i];
    if (!out[i].ok()) continue;
    if (!waiter.done) {
      out[i] = ClusterAnswer{};  // kPending
      continue;
    }
    if (waiter.answer.kind != ClusterAnswer::Kind::kDecided) {
      out[i] = waiter.answer;
      continue;
    }
    absl::StatusOr<audit::AuditRecord> record = DecodeDecidedRecord(waiter.record);
    if (!record.ok()) {
      out[i] = record.status();
      continue;
    }
    // The decision of the id's first payment: this caller's only if it is the same payment.
    const std::string decided = CanonicalPaymentBytes(
        record->transaction,
        record->input_format == "json" ? EventTimeSource::kSender : EventTimeSource::kArrival);
    if (decided != waiter.canonical) {
      waiter.answer.kind = ClusterAnswer::Kind::kConflict;
      waiter.answer.refusal = absl::AlreadyExistsError(absl::StrCat(
          "transaction id ", payments[i].transaction.id, " is already used by another payment"));
      out[i] = waiter.answer;
      continue;
    }
    waiter.answer.decision_json = DecisionToJson(record->decision);
    waiter.answer.decision = std::move(record->decision);
    out[i] = std::move(waiter.answer);
  }
  return out;
}

ClusterNodeStatus ClusterNode::status() const {
  absl::MutexLock lock(&mu_);
  ClusterNodeStatus out = counters_;
  out.position = applier_.position();
  out.applied = applier_.stats();
  out.restored_position = restored_position_;
  out.checkpoint_position = checkpoint_position_;
  out.checkpoints = checkpoints_;
  out.checkpoint_failures = checkpoint_failures_;
  out.shipped_position = shipped_position_;
  out.shipments = shipments_;
  out.shipment_failures = shipment_failures_;
  for (const auto& [p, owned] : owned_) {
    if (owned.writer != nullptr) out.owned.push_back(p);
  }
  for (int p = 0; p < options_.layout.partitions; ++p) {
    const PartitionProgress& progress = applier_.progress(p);
    PartitionStatus& ps = out.partitions.emplace_back();
    ps.partition = p;
    ps.decided_here = std::binary_search(out.owned.begin(), out.owned.end(), p);
    ps.pending = applier_.pending(p).size();
    ps.decisions = progress.decisions;
    ps.takeovers = progress.takeovers;
  }
  return out;
}

void ClusterNode::ApplyLoop() {
  int since_decided = 0;
  uint64_t since_checkpoint_check = 0;
  bool idle = false;
  while (!stopping_) {
    // Caught up and nothing left to decide: wait for the log; else only look whether more
    // came meanwhile (a batch being written).
    absl::StatusOr<std::optional<StreamMessage>> next = reader_->Next(idle ? kReadWait : kPollWait);
    if (!next.ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // reconnecting
      continue;
    }
    if (next->has_value()) {
      absl::MutexLock lock(&mu_);
      // A subject of another cluster cannot be in this cluster's stream; nothing to do if so.
      absl::StatusOr<AppliedMessage> applied = applier_.Apply(**next);
      if (applied.ok()) Answer(*applied, **next);
      idle = false;
    }
    if (next->has_value()) {
      // Whether a checkpoint is due is looked at every 64 messages, not at each (its lock).
      if (++since_checkpoint_check % 64 == 0) MaybeCheckpoint(/*force=*/false);
      // Decide once what has arrived is applied (or every kDecideEvery under a flood).
      if (++since_decided < kDecideEvery && reader_->buffered() > 0) continue;
    }
    since_decided = 0;
    const bool acted = TakeOverAndDecide();
    idle = !next->has_value() && !acted;
    if (idle) MaybeCheckpoint(/*force=*/false);  // the interval's checkpoint of a quiet log
  }
}

bool ClusterNode::TakeOverAndDecide() {
  bool acted = false;
  // Takeovers: a marker after the last message of the partition's subject applied here.
  std::vector<std::pair<int, Lease>> to_take;
  std::map<int, uint64_t> applied_through;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [p, owned] : owned_) {
      if (owned.writer != nullptr) continue;
      to_take.push_back({p, owned.lease});
      applied_through[p] = applier_.progress(p).last_decision_sequence;
    }
  }
  for (const auto& [p, lease] : to_take) {
    auto writer = std::make_shared<PartitionWriter>(nats_, DecisionSubject(options_.layout, p),
                                                    options_.node_id, lease.epoch);
    if (!writer->Takeover(applied_through[p]).ok()) continue;  // apply more, then again
    absl::MutexLock lock(&mu_);
    const auto it = owned_.find(p);
    if (it == owned_.end() || it->second.lease.epoch != lease.epoch) continue;  // lost meanwhile
    it->second.writer = std::move(writer);
    it->second.decided_up_to = 0;
    ++counters_.takeovers;
    acted = true;
  }
  // Decisions: each owned partition's pending payments not yet in a batch of this node's.
  std::vector<int> partitions;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [p, owned] : owned_) {
      if (owned.writer != nullptr) partitions.push_back(p);
    }
  }
  // Each partition's batch decided (one model call each), then all written at once: a batch
  // waits for the quorum's acknowledgement of its own subject only, not for the others'.
  struct Write {
    int partition = 0;
    std::shared_ptr<PartitionWriter> writer;
    std::string batch;
    uint64_t last = 0;
    absl::Status appended;
  };
  std::vector<Write> writes;
  for (const int p : partitions) {
    absl::MutexLock lock(&mu_);
    const auto it = owned_.find(p);
    if (it == owned_.end() || it->second.writer == nullptr) continue;
    std::vector<const PendingPayment*> payments;
    for (auto pi = applier_.pending(p).upper_bound(it->second.decided_up_to);
         pi != applier_.pending(p).end() && payments.size() < options_.max_batch; ++pi) {
      payments.push_back(&pi->second);
    }
    if (payments.empty()) continue;
    absl::StatusOr<std::vector<DecidedPayment>> decided =
        decider_->Decide(payments, *features_, ids_);
    if (!decided.ok()) continue;  // overloaded: they stay pending, decided next round
    writes.push_back(
        {p, it->second.writer, EncodeDecisions(*decided), payments.back()->sequence, {}});
  }
  if (writes.empty()) return acted;
  WriteAll(writes.size(), [&writes](size_t k) {
    writes[k].appended = writes[k].writer->Append(writes[k].batch).status();
  });
  absl::MutexLock lock(&mu_);
  for (const Write& w : writes) {
    const auto it = owned_.find(w.partition);
    if (w.appended.ok()) {
      ++counters_.batches_written;
      if (it != owned_.end() && it->second.writer == w.writer) it->second.decided_up_to = w.last;
    } else if (absl::IsFailedPrecondition(w.appended)) {
      ++counters_.fenced;
      if (it != owned_.end() && it->second.writer == w.writer) owned_.erase(it);
    }
  }
  return true;
}

void ClusterNode::WriteAll(size_t count, const std::function<void(size_t)>& write) {
  if (count == 1) return write(0);
  absl::MutexLock lock(&writes_mu_);
  write_job_ = &write;
  write_count_ = count;
  write_next_ = 0;
  write_done_ = 0;
  // This thread writes too; the writer threads take what it has not.
  while (write_next_ < write_count_) {
    const size_t k = write_next_++;
    writes_mu_.Unlock();
    write(k);
    writes_mu_.Lock();
    ++write_done_;
  }
  writes_mu_.Await(absl::Condition(
      +[](ClusterNode* n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(n->writes_mu_) {
        return n->write_done_ == n->write_count_;
      },
      this));
  write_job_ = nullptr;
}

void ClusterNode::WriterLoop() {
  absl::MutexLock lock(&writes_mu_);
  while (true) {
    writes_mu_.Await(absl::Condition(
        +[](ClusterNode* n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(n->writes_mu_) {
          return n->writers_stop_ || (n->write_job_ != nullptr && n->write_next_ < n->write_count_);
        },
        this));
    if (writers_stop_) return;
    const size_t k = write_next_++;
    const std::function<void(size_t)>* job = write_job_;
    writes_mu_.Unlock();
    (*job)(k);
    writes_mu_.Lock();
    ++write_done_;
  }
}

std::vector<std::string> ClusterNode::LiveNodes() {
  std::vector<std::string> nodes;
  absl::StatusOr<std::vector<std::string>> keys = nodes_bucket_->Keys();
  if (!keys.ok()) return nodes;
  for (const std::string& key : *keys) {
    if (absl::StartsWith(key, "n.")) nodes.push_back(key.substr(2));
  }
  return nodes;
}

std::string ClusterNode::AssignedNode(int partition, const std::vector<std::string>& nodes) const {
  std::string best;
  uint64_t best_score = 0;
  for (const std::string& node : nodes) {
    const uint64_t score = RendezvousScore(partition, node);
    if (best.empty() || score > best_score) {
      best = node;
      best_score = score;
    }
  }
  return best;
}

void ClusterNode::LeaseLoop() {
  uint64_t registration = 0;
  const auto every = std::max(options_.lease_ttl / 3, std::chrono::milliseconds(1));
  while (!stopping_) {
    const auto round = std::chrono::steady_clock::now();
    // The node's own registration, renewed as its leases are, with how far it applied the
    // log (for `vigil cluster status`).
    std::string registration_value;
    {
      absl::MutexLock lock(&mu_);
      int deciding = 0;
      for (const auto& [p, owned] : owned_) deciding += owned.writer != nullptr ? 1 : 0;
      registration_value = EncodeRegistration(applier_.position(), deciding);
    }
    absl::StatusOr<uint64_t> registered =
        registration == 0
            ? nodes_bucket_->Create(NodeKey(options_.node_id), registration_value)
            : nodes_bucket_->Update(NodeKey(options_.node_id), registration_value, registration);
    registration = registered.ok() ? *registered : 0;
    std::vector<std::string> nodes = LiveNodes();
    if (std::find(nodes.begin(), nodes.end(), options_.node_id) == nodes.end()) {
      nodes.push_back(options_.node_id);
    }
    for (int p = 0; p < options_.layout.partitions && !stopping_; ++p) {
      std::optional<Lease> held;
      {
        absl::MutexLock lock(&mu_);
        if (const auto it = owned_.find(p); it != owned_.end()) held = it->second.lease;
      }
      const std::string assigned = AssignedNode(p, nodes);
      if (held.has_value()) {
        if (assigned != options_.node_id) {  // a planned move to the node it belongs to
          {
            absl::MutexLock lock(&mu_);
            owned_.erase(p);
          }
          leases_->Release(*held).IgnoreError();
          continue;
        }
        absl::StatusOr<Lease> renewed = leases_->Renew(*held);
        absl::MutexLock lock(&mu_);
        const auto it = owned_.find(p);
        if (it == owned_.end() || it->second.lease.epoch != held->epoch) continue;
        if (renewed.ok()) {
          it->second.lease = *renewed;
        } else if (absl::IsFailedPrecondition(renewed.status())) {
          owned_.erase(it);
          ++counters_.leases_lost;
        }
        continue;
      }
      absl::StatusOr<Lease> holder = leases_->Holder(p);
      const auto now = std::chrono::steady_clock::now();
      bool take = false;
      {
        absl::MutexLock lock(&mu_);
        if (holder.ok()) {
          free_since_.erase(p);
        } else if (absl::IsNotFound(holder.status())) {
          const auto since = free_since_.emplace(p, now).first->second;
          // The assigned node takes a free partition; any node does once it stayed free for a
          // lease's time to live (its assigned node is gone or cannot).
          take = assigned == options_.node_id || now - since >= options_.lease_ttl;
        }
      }
      if (!take) continue;
      absl::StatusOr<Lease> acquired = leases_->Acquire(p);
      if (!acquired.ok()) continue;
      absl::MutexLock lock(&mu_);
      free_since_.erase(p);
      owned_[p] = Owned{*acquired, nullptr, 0};
    }
    std::this_thread::sleep_until(round + every);
  }
}

}  // namespace vigil::cluster
