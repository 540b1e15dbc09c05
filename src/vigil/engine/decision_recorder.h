// DecisionRecorder: how vigil records the decisions it makes, the one path that `vigil serve` and
// `vigil replay` share, so that a backtest leaves the same verifiable record as production.
//
// For each decision it builds the audit record (docs/audit.md): the decision as answered, the
// normalized transaction, the feature row decided on, the SHA-256 of the input bytes as
// received, when it arrived and was decided, who asked, and where it came from; encodes it on
// the calling thread, and appends it to the audit log. With durable acknowledgement (the
// default) Record returns only once the records are durable: a caller that answers after
// Record has never acknowledged a decision the log does not hold. When the log seals personal
// data (AuditLogOptions::record_kek), the records are encoded with its current sealer.
//
// Thread safety: safe for concurrent use (the log serializes appends).
#ifndef VIGIL_ENGINE_DECISION_RECORDER_H_
#define VIGIL_ENGINE_DECISION_RECORDER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/common/clock.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"

namespace vigil {

// One decision to record. The pointers and views must stay valid during Record.
struct DecisionToRecord {
  const Transaction* transaction = nullptr;
  std::string_view input;  // the transaction's bytes as received (a JSON object, a CSV line)
  std::string_view input_format;  // when not empty, replaces DecisionRecorderOptions::input_format
  absl::Span<const double> features;
  const Decision* decision = nullptr;
  UtcTime received{};
  UtcTime decided{};
  // The payment's fingerprint (PaymentFingerprinter), recorded so that a later arrival of the
  // same id is told apart from another payment under it; null: none recorded.
  const audit::Hash* payment_fingerprint = nullptr;
};

struct DecisionRecorderOptions {
  std::string source;        // "serve" or "replay"
  std::string input_format;  // "json", "amlworld_csv", ...
  // Wait until the records are durable before Record returns (default). false: Record returns
  // once they are queued, and a crash may lose the last moments' records.
  bool durable_ack = true;
  // The admission bound of the durable path: at most this many records may be inside Record
  // calls at once (appended and waiting to become durable, with durable_ack); a call that would
  // go beyond it is refused at once (kResourceExhausted), unless nothing waits (a batch larger
  // than the bound still goes through alone). Each waiting record holds its caller and its
  // encoded record. 0: unbounded.
  size_t max_waiting = 0;
  // The admission bound in time (with durable_ack): while the oldest record inside a
  // RecordThen has waited longer than this, Congestion() says so and Record refuses new
  // records. Whatever slows the log (a slow disk, a committer starved of CPU) lengthens that
  // wait, so the excess is refused instead of queued behind it. max(): never by time.
  std::chrono::microseconds max_wait = std::chrono::microseconds::max();
  // The clock the wait is read from; null: std::chrono::steady_clock (tests inject one).
  std::function<std::chrono::steady_clock::time_point()> now;
};

class DecisionRecorder {
 public:
  // "log" must outlive the trail.
  DecisionRecorder(audit::AuditLog* log, DecisionRecorderOptions options);

  // Records the decisions in order, contiguously in the log. "actor": who asked ("token:<id>",
  // "tls:<subject>" or both; empty without authentication). Errors: kResourceExhausted when
  // max_waiting records wait already, or the log's queue is full (overload: retry); the log's
  // own (kUnavailable when it stopped after a failed write): nothing was recorded and nothing
  // may be acknowledged.
  absl::Status Record(absl::Span<const DecisionToRecord> decisions, std::string_view actor = {});

  // Record's asynchronous form, for a server that answers from the log's completion instead
  // of holding a thread per decision until its record is durable. Encodes and queues the
  // records on this thread, then returns: an error when they are refused (Record's errors;
  // nothing was recorded and "recorded" is never called), else OK, and "recorded" is called
  // exactly once with Record's outcome: with durable_ack on the log's notifier thread once the
  // records are durable (or their write failed), so it must be short and must not block
  // (audit::AuditLog::AppendThen); without, before RecordThen returns. The records count
  // against max_waiting and max_wait until "recorded" is called.
  using RecordedFn = absl::AnyInvocable<void(absl::Status) &&>;
  absl::Status RecordThen(absl::Span<const DecisionToRecord> decisions, std::string_view actor,
                          RecordedFn recorded);

  // Records an event the server raised about itself, not a decision (audit::AuditRecord::
  // event): "source" names what raised it ("drift"), "event_json" is the event as JSON, "at"
  // when it was raised, "actor" who caused it when someone did (an operator's release). It is
  // queued behind the decisions recorded before it and becomes durable with their group;
  // returns once queued. Errors: the log's (kResourceExhausted when its queue is full,
  // kUnavailable after a failed write).
  absl::Status RecordEvent(std::string_view source, std::string_view event_json, UtcTime at,
                           std::string_view actor = {});

  // The record of "transaction_id" when the log holds one (idempotency: a repeated id is
  // answered with what was recorded).
  absl::StatusOr<std::optional<audit::AuditRecord>> Recorded(std::string_view transaction_id) const;

  // kResourceExhausted, saying why, when a record now would be refused for the log's backlog:
  // max_waiting records wait already, or the oldest has waited longer than max_wait. For a
  // caller that would rather refuse a request before doing its work than after.
  absl::Status Congestion() const;

  audit::AuditLog& log() const { return *log_; }
  bool durable_ack() const { return options_.durable_ack; }
  // Records inside Record calls now (see max_waiting).
  size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }

 private:
  audit::AuditLog* const log_;
  // The admission bound: counts "n" records as waiting, or refuses them.
  absl::Status Admit(size_t n);
  // kResourceExhausted when the oldest record waiting has waited longer than max_wait.
  absl::Status Late() const;
  // The records of "decisions", encoded.
  absl::StatusOr<std::vector<audit::PendingRecord>> Encode(
      absl::Span<const DecisionToRecord> decisions, std::string_view actor) const;

  using Steady = std::chrono::steady_clock;
  Steady::time_point Now() const { return options_.now ? options_.now() : Steady::now(); }

  const DecisionRecorderOptions options_;
  std::atomic<size_t> waiting_{0};
  // When each RecordThen now waiting for the log was queued, in the log's order (its
  // completions come in that order): the front is the oldest.
  mutable absl::Mutex queued_mu_;
  std::deque<Steady::time_point> queued_ ABSL_GUARDED_BY(queued_mu_);
};

// The examiner's view of a record (audit::RecordViewFn): one JSON object, the line `vigil audit
// export` writes for it (docs/audit-cli.md, "export") before audit::ExportRecordLine marks its
// sealed fields. For audit::WriteExport, audit::InclusionBundle and audit::CheckProofBundle, so
// that the CLI and the server show records alike.
std::string AuditRecordViewJson(const audit::AuditRecord& record, const audit::Hash& leaf_hash);

// The signing key at "path": loaded when the file exists; otherwise a new Ed25519 key is
// written there (mode 0600, its directory created) and *created is set. A deployment should
// configure its own key (audit.signing_key); this default keeps a fresh data dir usable.
absl::StatusOr<std::shared_ptr<const audit::LogSigner>> LoadOrCreateSigningKey(
    const std::string& path, bool* created = nullptr);

// Where a data dir keeps its default signing key: "<data_dir>/audit_signing_key.pem".
std::string DefaultSigningKeyPath(const std::string& data_dir);

// The key that signs the log of "data_dir": the PEM file "configured" when one is given (it
// must exist), else the data dir's default key, created when missing (*created says so).
absl::StatusOr<std::shared_ptr<const audit::LogSigner>> DataDirSigningKey(
    const std::string& configured, const std::string& data_dir, bool* created = nullptr);

}  // namespace vigil

#endif  // VIGIL_ENGINE_DECISION_RECORDER_H_
