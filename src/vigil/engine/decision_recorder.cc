#include "vigil/engine/decision_recorder.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/log_hash.h"
#include "vigil/common/private_file.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/feature_schema.h"
#include "vigil/decision/decision_json.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/ingest/json_writer.h"

namespace vigil {

DecisionRecorder::DecisionRecorder(audit::AuditLog* log, DecisionRecorderOptions options)
    : log_(log), options_(std::move(options)) {}

absl::Status DecisionRecorder::Record(absl::Span<const DecisionToRecord> decisions,
                                      std::string_view actor) {
  absl::Notification done;
  absl::Status outcome;
  VIGIL_RETURN_IF_ERROR(RecordThen(decisions, actor, [&](absl::Status s) {
    outcome = std::move(s);
    done.Notify();
  }));
  done.WaitForNotification();
  return outcome;
}

absl::Status DecisionRecorder::RecordThen(absl::Span<const DecisionToRecord> decisions,
                                          std::string_view actor, RecordedFn recorded) {
  if (decisions.empty()) {
    std::move(recorded)(absl::OkStatus());
    return absl::OkStatus();
  }
  const size_t n = decisions.size();
  VIGIL_RETURN_IF_ERROR(Admit(n));
  absl::StatusOr<std::vector<audit::PendingRecord>> pending = Encode(decisions, actor);
  if (!pending.ok()) {
    waiting_.fetch_sub(n, std::memory_order_relaxed);
    return pending.status();
  }
  if (!options_.durable_ack) {
    const absl::StatusOr<std::vector<audit::AppendedRecord>> queued =
        log_->Append(*std::move(pending), /*wait=*/false);
    waiting_.fetch_sub(n, std::memory_order_relaxed);
    VIGIL_RETURN_IF_ERROR(queued.status());
    std::move(recorded)(absl::OkStatus());
    return absl::OkStatus();
  }
  // Queued under queued_mu_, so that queued_ holds the appends in the log's order.
  absl::MutexLock lock(&queued_mu_);
  const absl::Status queued = log_->AppendThen(
      *std::move(pending),
      [this, n, recorded = std::move(recorded)](
          absl::StatusOr<std::vector<audit::AppendedRecord>> appended) mutable {
        {
          absl::MutexLock done(&queued_mu_);
          queued_.pop_front();
        }
        waiting_.fetch_sub(n, std::memory_order_relaxed);
        std::move(recorded)(appended.status());
      });
  if (queued.ok()) {
    queued_.push_back(Now());
  } else {
    waiting_.fetch_sub(n, std::memory_order_relaxed);
  }
  return queued;
}

absl::Status DecisionRecorder::Admit(size_t n) {
  const size_t before = waiting_.fetch_add(n, std::memory_order_relaxed);
  if (options_.max_waiting > 0 && before > 0 && before + n > options_.max_waiting) {
    waiting_.fetch_sub(n, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(
        absl::StrCat(before, " records are waiting for the audit log already (at most ",
                     options_.max_waiting, ")"));
  }
  if (absl::Status late = Late(); !late.ok()) {
    waiting_.fetch_sub(n, std::memory_order_relaxed);
    return late;
  }
  return absl::OkStatus();
}

absl::Status DecisionRecorder::Late() const {
  if (!options_.durable_ack || options_.max_wait == std::chrono::microseconds::max()) {
    return absl::OkStatus();
  }
  Steady::time_point oldest;
  {
    absl::MutexLock lock(&queued_mu_);
    if (queued_.empty()) return absl::OkStatus();
    oldest = queued_.front();
  }
  const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(Now() - oldest);
  if (waited <= options_.max_wait) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the oldest record waiting for the audit log has waited ", waited.count() / 1000,
      " ms (at most ", options_.max_wait.count() / 1000, ": audit.max_wait_ms)"));
}

absl::Status DecisionRecorder::Congestion() const {
  const size_t waiting = waiting_.load(std::memory_order_relaxed);
  if (options_.max_waiting > 0 && waiting >= options_.max_waiting) {
    return absl::ResourceExhaustedError(
        absl::StrCat(waiting, " records are waiting for the audit log already (at most ",
                     options_.max_waiting, ")"));
  }
  return Late();
}

absl::StatusOr<std::vector<audit::PendingRecord>> DecisionRecorder::Encode(
    absl::Span<const DecisionToRecord> decisions, std::string_view actor) const {
  std::vector<audit::PendingRecord> pending;
  pending.reserve(decisions.size());
  // Null when the log writes in the clear; else the data key of the moment (docs/audit.md).
  const std::shared_ptr<const audit::RecordSealer> sealer = log_->sealer();
  for (const DecisionToRecord& d : decisions) {
    const audit::Hash input_sha256 = audit::Digest(audit::HashAlgorithm::kSha256, d.input);
    absl::StatusOr<std::string> body = audit::EncodeRecordBody(audit::RecordBodyFields{
        .received = d.received,
        .decided = d.decided,
        .actor = actor,
        .source = options_.source,
        .input_format = d.input_format.empty() ? std::string_view(options_.input_format)
                                               : d.input_format,
        .input_sha256 = &input_sha256,
        .transaction = d.transaction,
        .features = d.features,
        .decision = d.decision,
        .sealer = sealer.get(),
        .payment_fingerprint = d.payment_fingerprint});
    if (!body.ok()) return body.status();
    pending.push_back({d.transaction->id, *std::move(body)});
  }
  return pending;
}

absl::Status DecisionRecorder::RecordEvent(std::string_view source, std::string_view event_json,
                                           UtcTime at, std::string_view actor) {
  VIGIL_ASSIGN_OR_RETURN(std::string body,
                         audit::EncodeEventRecordBody(source, event_json, at, actor));
  std::vector<audit::PendingRecord> records;
  records.push_back({"", std::move(body)});  // no transaction id: not indexed
  return log_->Append(std::move(records), /*wait=*/false).status();
}

absl::StatusOr<std::optional<audit::AuditRecord>> DecisionRecorder::Recorded(
    std::string_view transaction_id) const {
  absl::StatusOr<std::optional<uint64_t>> sequence = log_->FindTransaction(transaction_id);
  if (!sequence.ok()) return sequence.status();
  if (!sequence->has_value()) return std::optional<audit::AuditRecord>();
  absl::StatusOr<std::string> bytes = log_->ReadRecord(**sequence);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<audit::AuditRecord> record = audit::DecodeRecord(*bytes);
  if (!record.ok()) return record.status();
  return std::optional<audit::AuditRecord>(*std::move(record));
}

std::string AuditRecordViewJson(const audit::AuditRecord& r, const audit::Hash& leaf_hash) {
  using Json = nlohmann::ordered_json;  // members in the order written
  // vigil's own writers always write valid JSON; the text as a string otherwise.
  const auto parse = [](const std::string& text) {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? Json(text) : j;
  };
  // Features named by FeatureExtractor::Schema() when the record's schema is this build's or
  // one it extends (whose columns are the first of this build's, in order).
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  const bool named = !r.features.empty() &&
                     SchemaExtends(schema->version(), r.decision.feature_schema_version) &&
                     r.features.size() <= schema->size();
  Json features = named ? Json::object() : Json::array();
  for (size_t i = 0; i < r.features.size(); ++i) {
    Json value = std::isfinite(r.features[i]) ? Json(r.features[i]) : Json(nullptr);
    if (named) {
      features[schema->names()[i]] = std::move(value);
    } else {
      features.push_back(std::move(value));
    }
  }
  Json j;
  j["sequence"] = r.sequence;
  j["leaf_hash"] = audit::HashHex(leaf_hash);
  j["previous_leaf_hash"] = audit::HashHex(r.previous_leaf_hash);
  if (!r.event.empty()) {
    // An event the server recorded about itself: no transaction, row or decision.
    j["recorded"] = FormatUtc(r.received);
    j["actor"] = r.actor;
    j["source"] = r.source;
    j["input_sha256"] = audit::HashHex(r.input_sha256);
    j["event"] = parse(r.event);
    return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  }
  j["received"] = FormatUtc(r.received);
  j["decided"] = FormatUtc(r.decided);
  j["actor"] = r.actor;
  j["source"] = r.source;
  j["input_format"] = r.input_format;
  j["input_sha256"] = audit::HashHex(r.input_sha256);
  if (r.payment_fingerprint != audit::Hash{}) {
    j["payment_fingerprint"] = audit::HashHex(r.payment_fingerprint);
  }
  j["transaction"] = parse(TransactionToJson(r.transaction));
  j["features"] = std::move(features);
  j["decision"] = parse(DecisionToJson(r.decision));
  Json fired = Json::array(), hits = Json::array();
  for (const Reason& reason : r.decision.reasons) {
    if (reason.kind == Reason::Kind::kRule && !reason.shadow) fired.push_back(reason.code);
    if (reason.kind == Reason::Kind::kScreening) hits.push_back(reason.code);
  }
  j["fired_rules"] = std::move(fired);
  j["screening_hits"] = std::move(hits);
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string DefaultSigningKeyPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "audit_signing_key.pem").string();
}

absl::StatusOr<std::shared_ptr<const audit::LogSigner>> DataDirSigningKey(
    const std::string& configured, const std::string& data_dir, bool* created) {
  if (configured.empty()) return LoadOrCreateSigningKey(DefaultSigningKeyPath(data_dir), created);
  if (created != nullptr) *created = false;
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer =
      audit::LogSigner::FromPemFile(configured);
  if (!signer.ok()) return signer.status();
  return std::shared_ptr<const audit::LogSigner>(*std::move(signer));
}

absl::StatusOr<std::shared_ptr<const audit::LogSigner>> LoadOrCreateSigningKey(
    const std::string& path, bool* created) {
  if (created != nullptr) *created = false;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    absl::StatusOr<std::string> pem =
        audit::GeneratePrivateKeyPem(audit::SignatureAlgorithm::kEd25519);
    if (!pem.ok()) return pem.status();
    // Of two processes starting on one fresh data dir exactly one key wins; the loser loads it.
    absl::StatusOr<bool> made = CreatePrivateFileOnce(path, *pem, "audit signing key");
    if (!made.ok()) return made.status();
    if (created != nullptr) *created = *made;
  }
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer = audit::LogSigner::FromPemFile(path);
  if (!signer.ok()) return signer.status();
  return std::shared_ptr<const audit::LogSigner>(*std::move(signer));
}

}  // namespace vigil
