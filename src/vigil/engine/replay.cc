#include "vigil/engine/replay.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_log.h"
#include "vigil/common/csv_field.h"
#include "vigil/common/status_macros.h"
#include "vigil/drift/drift_event_log.h"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/drift_report.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/drift/source_ledger.h"
#include "vigil/engine/decide_in_order.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/engine/drift_feed.h"
#include "vigil/engine/payment_fingerprint.h"
#include "vigil/evaluation/feature_row_writer.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/features/feature_store.h"
#include "vigil/ingest/event_time_orderer.h"
#include "vigil/ingest/event_time_outliers.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/metrics/latency_histogram.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

// Cursor keys stored with each feature-state checkpoint.
constexpr char kCursorInput[] = "replay.input";
constexpr char kCursorPosition[] = "replay.position";
constexpr char kCursorFeaturesOut[] = "replay.features_out";
constexpr char kCursorFeaturesOutBytes[] = "replay.features_out_bytes";

// FNV-1a, 64 bit: a stable content fingerprint (same bytes, same value, on every run and
// machine), so a restarted replay can tell whether it is resuming the same input.
class Fingerprint {
 public:
  void Add(std::string_view bytes) {
    for (unsigned char c : bytes) h_ = (h_ ^ c) * 0x100000001b3ULL;
    h_ = (h_ ^ 0xff) * 0x100000001b3ULL;  // record separator
    ++records_;
  }
  std::string ToString() const { return absl::StrFormat("fnv1a64:%016x:%d", h_, records_); }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
  int64_t records_ = 0;
};

int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      int64_t kb = 0;
      if (absl::SimpleAtoi(
              absl::StripAsciiWhitespace(absl::string_view(line).substr(6, line.size() - 9)),
              &kb)) {
        return kb * 1024;
      }
    }
  }
  return 0;
}

// Feature-stage errors become reject reasons like parse errors do.
std::string FeatureRejectReason(const absl::Status& s) {
  return s.code() == absl::StatusCode::kOutOfRange ? "event_too_late" : "unconvertible_amount";
}

class RejectsFile {
 public:
  absl::Status Open(const std::string& path) {
    if (path.empty()) return absl::OkStatus();
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_)
      return absl::UnavailableError(absl::StrCat("cannot write rejects file '", path, "'"));
    out_ << "line\tfield\treason\tmessage\trecord\n";
    path_ = path;
    return absl::OkStatus();
  }
  void Write(int64_t line, std::string_view field, std::string_view reason,
             std::string_view message, std::string_view record) {
    if (path_.empty()) return;
    out_ << line << '\t' << Clean(field) << '\t' << reason << '\t' << Clean(message) << '\t'
         << Clean(record) << '\n';
  }
  absl::Status Close() {
    if (path_.empty()) return absl::OkStatus();
    out_.close();
    if (!out_)
      return absl::UnavailableError(absl::StrCat("writing rejects file '", path_, "' failed"));
    return absl::OkStatus();
  }

 private:
  static std::string Clean(std::string_view s) {
    std::string out(s);
    std::replace_if(
        out.begin(), out.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    return out;
  }
  std::ofstream out_;
  std::string path_;
};

class Progress {
 public:
  Progress(std::ostream* out, std::chrono::milliseconds interval, const Clock& clock)
      : out_(out),
        interval_(interval),
        clock_(clock),
        start_(clock.Monotonic()),
        next_(start_ + interval) {}

  void Maybe(std::string_view phase, int64_t done, int64_t total) {
    if (out_ == nullptr) return;
    const auto now = clock_.Monotonic();
    if (now < next_) return;
    next_ = now + interval_;
    const double s = std::chrono::duration<double>(now - start_).count();
    *out_ << absl::StrFormat("[replay] %-8s %12d", phase, done);
    if (total > 0) *out_ << absl::StrFormat(" / %d (%.0f%%)", total, 100.0 * done / total);
    *out_ << absl::StrFormat("  %.1f s  rss %.0f MiB\n", s, PeakRssBytes() / 1048576.0);
    out_->flush();
  }

 private:
  std::ostream* out_;
  const std::chrono::milliseconds interval_;
  const Clock& clock_;
  const Steady::time_point start_;
  Steady::time_point next_;
};

StageLatency Summarize(std::string stage, const LatencyHistogram& h) {
  StageLatency s;
  s.stage = std::move(stage);
  s.count = h.count();
  if (s.count == 0) return s;
  s.p50 = h.Percentile(50);
  s.p90 = h.Percentile(90);
  s.p99 = h.Percentile(99);
  s.p999 = h.Percentile(99.9);
  s.max = h.max();
  return s;
}

// One row of --decisions-out. Fields that may hold commas are quoted (RFC 4180).
void WriteDecision(std::ostream& out, const Transaction& tx, const Decision& d) {
  std::string rules, shadow;
  for (const Reason& r : d.reasons) {
    if (r.kind != Reason::Kind::kRule) continue;
    std::string& list = r.shadow ? shadow : rules;
    if (!list.empty()) list += ';';
    list += r.code;
  }
  out << CsvField(tx.id) << ',' << FormatUtc(tx.event_time) << ','
      << CsvField(tx.originator.account_id) << ',' << CsvField(tx.beneficiary.account_id) << ','
      << ActionName(d.action) << ',';
  if (!std::isnan(d.score)) out << absl::StrFormat("%.6f", d.score);
  out << ',' << (d.degraded ? 1 : 0) << ',' << rules << ',' << shadow << ',';
  if (tx.label.has_value()) out << (tx.label->is_laundering ? 1 : 0);
  out << ',' << CsvField(tx.label.has_value() ? tx.label->typology : "") << ','
      << AccountAlertCauseName(d.originator_account.alert ? d.originator_account.cause
                                                          : AccountAlertCause::kNone)
      << ','
      << AccountAlertCauseName(d.beneficiary_account.alert ? d.beneficiary_account.cause
                                                           : AccountAlertCause::kNone)
      << '\n';
}

// Owns the replay's moving parts; Run() is the whole algorithm.
class Replayer {
 public:
  Replayer(const ReplayOptions& options, const FxRates& fx, const Clock& clock)
      : options_(options),
        fx_(fx),
        clock_(clock),
        progress_(options.progress, options.progress_interval, clock) {}

  absl::StatusOr<ReplaySummary> Run();

 private:
  absl::Status OpenState();
  absl::Status ReadAndOrder(TransactionReader& reader, EventTimeOrderer& orderer);
  // Steps 3 and on: every record in event-time order, a batch at a time (TakeBatch), through
  // the features, the decide step (DecideBatch), the drift monitor (FeedDrift) and the
  // outputs (OutputRecord), checkpointed every checkpoint_every records.
  absl::Status ProcessInOrder(TransactionReader& reader, EventTimeOrderer& orderer);
  // The buffers of one batch of records, reused from batch to batch.
  struct Batch {
    static constexpr int64_t kSize = 256;
    Batch(size_t width, bool decide, bool compare)
        : records(kSize),
          positions(kSize),
          txs(kSize),
          rows(static_cast<size_t>(kSize) * width),
          statuses(kSize),
          decide_txs(kSize),
          decide_rows(decide ? kSize * width : 0),
          decisions(decide ? kSize : 0),
          compared(compare ? kSize : 0),
          decision_of(kSize),
          record_of(kSize) {}
    size_t n = 0;        // records taken
    size_t decided = 0;  // of them, accepted by the features and decided
    std::vector<EventTimeOrderer::Record> records;
    std::vector<int64_t> positions;  // in the ordered stream, from 1
    std::vector<Transaction> txs;
    std::vector<double> rows;
    std::vector<absl::Status> statuses;
    // With decisions: the accepted records, compacted; decision_of[record], record_of[decision].
    std::vector<const Transaction*> decide_txs;
    std::vector<double> decide_rows;
    std::vector<Decision> decisions, compared;
    std::vector<size_t> decision_of, record_of;
    RiskReads risk_reads;         // what each row's risk columns read (engine/decide_in_order.h)
    AccountsChanged risk_changed;
  };
  absl::Status OpenDecisionsOut();
  // Takes up to "limit" (at least one) records of this run from the ordered stream; false once
  // the stream is exhausted.
  absl::StatusOr<bool> TakeBatch(TransactionReader& reader, EventTimeOrderer& orderer,
                                 int64_t limit, Batch& b);
  // Decides the records the features accepted, compares, and records them in the audit log.
  absl::Status DecideBatch(Batch& b, UuidV7Generator& ids);
  void FeedDrift(const Batch& b);
  // Counts, backtests and writes record i, which the features accepted.
  absl::Status OutputRecord(const Batch& b, size_t i);
  // The event-time span, the decisions file closed and the final checkpoint.
  absl::Status FinishOutputs();
  absl::Status OpenFeaturesOut(int64_t resume_offset);
  absl::Status OpenDrift();
  absl::Status FinishDrift();
  absl::Status Checkpoint(int64_t position);
  // Records the batch's decisions in the audit log (those it does not hold yet).
  absl::Status RecordDecisions(absl::Span<const EventTimeOrderer::Record> records,
                               absl::Span<const Transaction> txs, absl::Span<const double> rows,
                               absl::Span<const absl::Status> statuses,
                               absl::Span<const Decision> decisions,
                               absl::Span<const size_t> decision_of);
  void Reject(int64_t line, std::string_view field, std::string_view reason,
              std::string_view message, std::string_view record);
  void RejectOutlier(const EventTimeOutliers::Record& record,
                     const EventTimeOutliers::Verdict& verdict);

  const ReplayOptions& options_;
  const FxRates& fx_;
  const Clock& clock_;
  Progress progress_;
  ReplaySummary summary_;
  RejectsFile rejects_;
  Fingerprint fingerprint_;

  std::unique_ptr<FeatureStore> store_;          // with a data dir
  // With ReplayOptions::audit_signer (and a data dir and decisions). The log is declared after
  // the store whose KvStore it writes, so it is closed (its last tree head signed) first.
  std::unique_ptr<audit::AuditLog> audit_log_;
  std::unique_ptr<DecisionRecorder> audit_;
  // The data dir's payment fingerprints (as vigil serve records them), with the audit log.
  std::optional<PaymentFingerprinter> fingerprints_;
  std::unique_ptr<FeatureExtractor> in_memory_;  // without one
  FeatureExtractor* extractor_ = nullptr;
  std::unique_ptr<evaluation::FeatureRowWriter> features_out_;
  int64_t resume_position_ = 0;
  int64_t position_ = 0;  // records taken from the ordered stream
  int64_t first_time_ = INT64_MAX, last_time_ = INT64_MIN;  // accepted records' event times

  LatencyHistogram read_latency_, order_latency_, features_latency_, decide_latency_,
      output_latency_;
  evaluation::Backtest backtest_;
  evaluation::PolicyComparer comparer_;
  std::ofstream decisions_out_;

  // With ReplayOptions::drift_profile: the monitor, fed by its own thread (the tap blocks when
  // full, so every row is observed and the drift seen does not depend on timing).
  std::unique_ptr<drift::DriftEventLog> drift_log_;
  std::unique_ptr<drift::DriftMonitor> drift_;
  std::unique_ptr<drift::DriftTap> drift_tap_;
};

absl::Status Replayer::OpenDrift() {
  if (options_.drift_profile == nullptr) return absl::OkStatus();
  // Events stay in memory: the replay reports them (summary, HTML); a replay is a what-if, not
  // the deployment's record.
  VIGIL_ASSIGN_OR_RETURN(drift_log_, drift::DriftEventLog::Open(nullptr, clock_, 100'000));
  drift::DriftConfig config = options_.drift;
  if (!options_.drift_report.empty() && config.history_points == 0) config.history_points = 2048;
  if (!options_.drift_null_out.empty()) config.record_null = true;
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  VIGIL_ASSIGN_OR_RETURN(drift_, drift::DriftMonitor::Create(*options_.drift_profile,
                                                             schema->version(), schema->names(),
                                                             std::move(config), drift_log_.get()));
  drift_tap_ = std::make_unique<drift::DriftTap>(drift_.get(), 256 * 1024,
                                                 drift::DriftTap::WhenFull::kBlock,
                                                 /*wake_rows=*/16 * 1024);
  return absl::OkStatus();
}

absl::Status Replayer::FinishDrift() {
  if (drift_ == nullptr) return absl::OkStatus();
  const auto drain_start = clock_.Monotonic();
  drift_tap_->Drain();
  const double drain_seconds = std::chrono::duration<double>(clock_.Monotonic() - drain_start).count();
  VIGIL_RETURN_IF_ERROR(drift_tap_->status());
  VIGIL_RETURN_IF_ERROR(drift_->Flush());
  DriftSummary out;
  out.blocked_seconds = drift_tap_->blocked_seconds();
  out.drain_seconds = drain_seconds;
  out.monitor_cpu_seconds = drift_tap_->monitor_cpu_seconds();
  const drift::DriftState state = drift_->State(/*exact=*/false);
  out.final_level = std::string(drift::DriftLevelName(state.level));
  out.evaluations = static_cast<int64_t>(state.evaluations);
  out.rows_late = static_cast<int64_t>(state.late);
  out.rows_capped = static_cast<int64_t>(state.capped);
  out.skipped_warmup = static_cast<int64_t>(state.skipped_warmup);
  out.skipped_sources = static_cast<int64_t>(state.skipped_sources);
  // From the monitor's own tallies: the in-memory event log keeps only the recent events.
  for (const auto& [kind, n] : state.events_by_kind) out.events[kind] = static_cast<int64_t>(n);
  for (const drift::DriftSubjectState& s : state.subjects) {
    if (s.worst >= drift::DriftLevel::kL2) out.drifted[s.name] = std::string(drift::DriftLevelName(s.worst));
  }
  out.frozen_seconds = state.frozen_seconds;
  out.worst_level = std::string(drift::DriftLevelName(state.worst_level));
  out.calibration = state.calibration;
  if (!options_.drift_null_out.empty()) {
    std::ofstream null_out(options_.drift_null_out, std::ios::binary | std::ios::trunc);
    null_out << drift_->RecordedNull().ToJson();
    null_out.close();
    if (!null_out) {
      return absl::UnavailableError(
          absl::StrCat("cannot write the measured null to '", options_.drift_null_out, "'"));
    }
  }
  if (!options_.drift_report.empty()) {
    drift::DriftReport report;
    report.title = absl::StrCat("Drift of ", options_.input_path);
    report.facts = {
        {"input", options_.input_path},
        {"rows observed", absl::StrCat(state.rows)},
        {"feature schema", options_.drift_profile->feature_schema_version()},
        {"reference rows", absl::StrCat(options_.drift_profile->rows())},
        {"calibration", state.calibration == "raw-preset"
                            ? "raw preset (fixed cut-offs)"
                            : absl::StrCat(state.calibration == "null+measured"
                                               ? "simulated null per window size and the "
                                                 "training stream's measured null"
                                               : "simulated null per window size",
                                           ", one false L2 per subject per ",
                                           options_.drift.false_alarm_period.count() / 24, " days")},
        {"worst level", out.worst_level},
        {"time frozen (L3)", absl::StrFormat("%.0f s", out.frozen_seconds)},
    };
    std::string windows;
    for (const drift::DriftWindowSpec& w : options_.drift.windows) {
      absl::StrAppend(&windows, windows.empty() ? "" : ", ", w.name, " ", w.size.count(), " s every ",
                      w.slide.count(), " s",
                      w.decay_half_life.count() > 0
                          ? absl::StrCat(" (half-life ", w.decay_half_life.count(), " s)")
                          : "");
    }
    report.facts.emplace_back("windows", windows);
    if (!state.unmonitored.empty()) {
      std::string list;
      for (const std::string& u : state.unmonitored) absl::StrAppend(&list, list.empty() ? "" : ", ", u);
      report.facts.emplace_back("not monitored", list);
    }
    report.cutoffs = options_.drift.levels;
    report.series = drift_->History();
    report.events = drift_log_->Recent(100'000);
    std::ofstream html(options_.drift_report, std::ios::binary | std::ios::trunc);
    html << drift::RenderDriftReportHtml(report);
    html.close();
    if (!html) {
      return absl::UnavailableError(
          absl::StrCat("cannot write the drift report to '", options_.drift_report, "'"));
    }
    out.report = options_.drift_report;
  }
  summary_.drift = std::move(out);
  return absl::OkStatus();
}

absl::Status Replayer::OpenState() {
  if (options_.data_dir.empty()) {
    in_memory_ = std::make_unique<FeatureExtractor>(fx_, options_.features);
    extractor_ = in_memory_.get();
    return absl::OkStatus();
  }
  const bool audited = options_.audit_signer != nullptr && options_.decisions != nullptr;
  VIGIL_ASSIGN_OR_RETURN(
      store_, FeatureStore::Open(options_.data_dir, fx_, options_.features,
                                 audited ? audit::AuditColumnFamilies()
                                         : std::vector<std::string>{}));
  extractor_ = &store_->extractor();
  if (audited) {
    audit::AuditLogOptions log_options;
    log_options.signer = options_.audit_signer;
    log_options.hash = options_.audit_hash;
    log_options.record_kek = options_.audit_record_kek;
    log_options.record_suite = options_.audit_record_suite;
    VIGIL_ASSIGN_OR_RETURN(audit_log_,
                           audit::AuditLog::Open(&store_->kv(), std::move(log_options), clock_));
    VIGIL_ASSIGN_OR_RETURN(PaymentFingerprinter fingerprints,
                           PaymentFingerprinter::ForStore(store_->kv()));
    fingerprints_.emplace(std::move(fingerprints));
    audit_ = std::make_unique<DecisionRecorder>(
        audit_log_.get(), DecisionRecorderOptions{.source = "replay",
                                                  .input_format = summary_.format,
                                                  .durable_ack = options_.audit_durable_ack});
    // Assigned, not emplace()d: clang does not count a nested struct with default member
    // initializers as default-constructible inside its enclosing class.
    summary_.audit = ReplaySummary::Audit{.log_id = audit_log_->header().log_id};
  }
  return absl::OkStatus();
}

absl::Status Replayer::RecordDecisions(absl::Span<const EventTimeOrderer::Record> records,
                                       absl::Span<const Transaction> txs,
                                       absl::Span<const double> rows,
                                       absl::Span<const absl::Status> statuses,
                                       absl::Span<const Decision> decisions,
                                       absl::Span<const size_t> decision_of) {
  const size_t width = FeatureExtractor::Schema()->size();
  const UtcTime now = clock_.Now();
  std::vector<DecisionToRecord> batch;
  batch.reserve(txs.size());
  // Each payment's fingerprint, as vigil serve records it: a later arrival of the same id in
  // this data dir (a serve after the backtest) is then told apart from another payment. The
  // formats whose messages carry no time of their own are timed by their arrival.
  std::vector<audit::Hash> fingerprints(txs.size());
  const EventTimeSource time = summary_.format == "swift_mt" || summary_.format == "iso20022"
                                   ? EventTimeSource::kArrival
                                   : EventTimeSource::kSender;
  for (size_t i = 0; i < txs.size(); ++i) {
    if (!statuses[i].ok()) continue;
    // A resumed run meets the records its interrupted predecessor wrote after its last
    // checkpoint: recorded once, by whichever run decided first.
    VIGIL_ASSIGN_OR_RETURN(std::optional<uint64_t> known, audit_log_->FindTransaction(txs[i].id));
    if (known.has_value()) {
      ++summary_.audit->already_recorded;
      continue;
    }
    fingerprints[i] = fingerprints_->Of(txs[i], time);
    batch.push_back({.transaction = &txs[i],
                     .input = records[i].payload,
                     .features = rows.subspan(i * width, width),
                     .decision = &decisions[decision_of[i]],
                     .received = now,
                     .decided = now,
                     .payment_fingerprint = &fingerprints[i]});
  }
  VIGIL_RETURN_IF_ERROR(audit_->Record(batch));
  summary_.audit->recorded += static_cast<int64_t>(batch.size());
  return absl::OkStatus();
}

void Replayer::Reject(int64_t line, std::string_view field, std::string_view reason,
                      std::string_view message, std::string_view record) {
  ++summary_.rejected;
  ++summary_.rejects_by_reason[std::string(reason)];
  rejects_.Write(line, field, reason, message, record);
}

absl::Status Replayer::ReadAndOrder(TransactionReader& reader, EventTimeOrderer& orderer) {
  Transaction tx;
  RecordError error;
  int64_t n = 0;
  // Records far ahead of their neighbours in the file are reported, not applied (their event
  // time would become the state's watermark: see EventTimeOutliers).
  EventTimeOutliers outliers({.max_lead = options_.max_event_lead});
  EventTimeOutliers::Record held;
  EventTimeOutliers::Verdict verdict;
  auto release = [&]() -> absl::Status {
    while (outliers.Pop(&held, &verdict)) {
      if (verdict.outlier) {
        RejectOutlier(held, verdict);
        continue;
      }
      fingerprint_.Add(held.raw);
      VIGIL_RETURN_IF_ERROR(orderer.Add(held.event_time_us, held.line, held.raw));
    }
    return absl::OkStatus();
  };
  for (;;) {
    const auto t0 = Steady::now();
    VIGIL_ASSIGN_OR_RETURN(ReadResult r, reader.Next(&tx, &error));
    if (r == ReadResult::kEnd) break;
    if (r == ReadResult::kRejected) {
      Reject(error.line, error.field, error.reason, error.message, reader.raw_record());
      continue;
    }
    outliers.Add(ToUnixMicros(tx.event_time), reader.line(), reader.raw_record());
    VIGIL_RETURN_IF_ERROR(release());
    read_latency_.Record(Steady::now() - t0);
    progress_.Maybe("reading", ++n, 0);
  }
  outliers.Finish();
  VIGIL_RETURN_IF_ERROR(release());
  return orderer.Finish();
}

void Replayer::RejectOutlier(const EventTimeOutliers::Record& record,
                             const EventTimeOutliers::Verdict& verdict) {
  std::string message = absl::StrCat("event time ", FormatUtc(FromUnixMicros(record.event_time_us)),
                                     " is more than ", options_.max_event_lead.count() / 3'600'000'000,
                                     " h ahead of the records around it (median");
  if (verdict.has_before) {
    absl::StrAppend(&message, " ", FormatUtc(FromUnixMicros(verdict.before_median_us)), " before");
  }
  if (verdict.has_after) {
    absl::StrAppend(&message, verdict.has_before ? "," : "", " ",
                    FormatUtc(FromUnixMicros(verdict.after_median_us)), " after");
  }
  absl::StrAppend(&message, "); not applied, so that it cannot make later payments too late");
  Reject(record.line, "$.timestamp", "event_time_outlier", message, record.raw);
}

absl::Status Replayer::OpenFeaturesOut(int64_t resume_offset) {
  if (options_.features_out.empty()) return absl::OkStatus();
  if (resume_offset > 0) {
    VIGIL_ASSIGN_OR_RETURN(features_out_,
                           evaluation::FeatureRowWriter::ResumeAt(options_.features_out, resume_offset));
  } else {
    VIGIL_ASSIGN_OR_RETURN(features_out_, evaluation::FeatureRowWriter::Create(options_.features_out,
                                                                   *FeatureExtractor::Schema()));
  }
  return absl::OkStatus();
}

absl::Status Replayer::Checkpoint(int64_t position) {
  if (store_ == nullptr) return absl::OkStatus();
  std::map<std::string, std::string> cursor = {
      {kCursorInput, fingerprint_.ToString()},
      {kCursorPosition, absl::StrCat(position)},
  };
  if (features_out_ != nullptr) {
    // The rows must be durable before the checkpoint that says they were written.
    VIGIL_RETURN_IF_ERROR(features_out_->Sync());
    cursor[kCursorFeaturesOut] = options_.features_out;
    cursor[kCursorFeaturesOutBytes] = absl::StrCat(features_out_->offset());
  }
  VIGIL_RETURN_IF_ERROR(store_->Checkpoint(cursor).status());
  ++summary_.checkpoints;
  return absl::OkStatus();
}

absl::Status Replayer::OpenDecisionsOut() {
  if (options_.decisions == nullptr || options_.decisions_out.empty()) return absl::OkStatus();
  decisions_out_.open(options_.decisions_out, std::ios::binary | std::ios::trunc);
  if (!decisions_out_) {
    return absl::UnavailableError(
        absl::StrCat("cannot write decisions to '", options_.decisions_out, "'"));
  }
  decisions_out_ << "tx_id,timestamp,originator,beneficiary,action,score,degraded,rules,"
                    "shadow_rules,label,typology,originator_alert,beneficiary_alert\n";
  return absl::OkStatus();
}

absl::StatusOr<bool> Replayer::TakeBatch(TransactionReader& reader, EventTimeOrderer& orderer,
                                         int64_t limit, Batch& b) {
  b.n = 0;
  b.decided = 0;
  bool more = true;
  RecordError error;
  while (static_cast<int64_t>(b.n) < std::max<int64_t>(limit, 1)) {
    EventTimeOrderer::Record& record = b.records[b.n];
    VIGIL_ASSIGN_OR_RETURN(more, orderer.Next(&record));
    if (!more) break;
    ++position_;
    if (position_ <= resume_position_) continue;  // done by the interrupted run
    const ReadResult r = reader.ParseRecord(record.payload, record.sequence, &b.txs[b.n], &error);
    if (r != ReadResult::kRecord) {
      // The record parsed in the first pass; failing now means the file changed underneath.
      return absl::DataLossError(absl::StrCat(options_.input_path, ":", record.sequence,
                                              ": record changed while replaying: ",
                                              error.ToString()));
    }
    b.positions[b.n++] = position_;
  }
  return more;
}

absl::Status Replayer::DecideBatch(Batch& b, UuidV7Generator& ids) {
  const size_t width = FeatureExtractor::Schema()->size();
  // The records whose features were computed, compacted.
  for (size_t i = 0; i < b.n; ++i) {
    if (!b.statuses[i].ok()) continue;
    b.decide_txs[b.decided] = &b.txs[i];
    std::copy_n(b.rows.begin() + static_cast<std::ptrdiff_t>(i * width), width,
                b.decide_rows.begin() + static_cast<std::ptrdiff_t>(b.decided * width));
    b.record_of[b.decided] = i;
    b.decision_of[i] = b.decided++;
  }
  // Replay is bulk traffic with no deadline: every record is scored. The decide step and the
  // account step are vigil serve's (engine/decide_in_order.h), in event-time order, repairing
  // the rows an earlier decision of the batch made stale. The policy being compared
  // (options_.compare) is compared on payment decisions only, over the repaired rows: its
  // account alerts would need state of their own.
  ScoreContext context;
  context.priority = Priority::kP2;
  // The only model of a replay is its champion, as vigil serve names it.
  const DecisionStep step{
      .decider = options_.decisions,
      .features = extractor_,
      .ids = &ids,
      .model_role = options_.decisions->model_version().empty() ? "none" : "champion"};
  b.risk_changed.clear();
  VIGIL_ASSIGN_OR_RETURN(
      const int64_t redecided,
      DecideInOrder(step,
                    {.txs = absl::MakeConstSpan(b.decide_txs).subspan(0, b.decided),
                     .rows = absl::MakeSpan(b.decide_rows).subspan(0, b.decided * width),
                     .reads = &b.risk_reads,
                     .read_of = absl::MakeConstSpan(b.record_of).subspan(0, b.decided)},
                    context, b.risk_changed, absl::MakeSpan(b.decisions)));
  summary_.redecided += redecided;
  if (redecided > 0) {
    // The repaired rows are the ones recorded, written and watched.
    for (size_t k = 0; k < b.decided; ++k) {
      std::copy_n(b.decide_rows.begin() + static_cast<std::ptrdiff_t>(k * width), width,
                  b.rows.begin() + static_cast<std::ptrdiff_t>(b.record_of[k] * width));
    }
  }
  if (options_.compare != nullptr) {
    VIGIL_RETURN_IF_ERROR(options_.compare->DecideBatch(
        absl::MakeConstSpan(b.decide_txs).subspan(0, b.decided), b.decide_rows,
        absl::MakeSpan(b.compared), ids, context));
  }
  if (audit_ != nullptr && b.decided > 0) {
    // Before any output of the batch: what a replay reports, it has recorded.
    VIGIL_RETURN_IF_ERROR(RecordDecisions(
        absl::MakeConstSpan(b.records).subspan(0, b.n), absl::MakeConstSpan(b.txs).subspan(0, b.n),
        b.rows, absl::MakeConstSpan(b.statuses).subspan(0, b.n), b.decisions, b.decision_of));
  }
  return absl::OkStatus();
}

void Replayer::FeedDrift(const Batch& b) {
  const size_t width = FeatureExtractor::Schema()->size();
  // The accepted rows with their scores, in event-time order, to the monitor's thread, in
  // buffers it has already observed.
  drift::DriftTap::Rows batch = drift_tap_->Spare();
  batch.times.reserve(b.n);
  batch.scores.reserve(b.n);
  batch.features.reserve(b.n * width);
  batch.sources.reserve(b.n);
  for (size_t i = 0; i < b.n; ++i) {
    if (!b.statuses[i].ok()) continue;
    // A file has no client: one unknown client (0).
    AppendDriftRow(b.txs[i], absl::MakeConstSpan(b.rows).subspan(i * width, width),
                   options_.decisions != nullptr ? b.decisions[b.decision_of[i]].score
                                                 : std::nan(""),
                   0, batch);
  }
  drift_tap_->Offer(std::move(batch));
}

absl::Status Replayer::OutputRecord(const Batch& b, size_t i) {
  const size_t width = FeatureExtractor::Schema()->size();
  const Transaction& tx = b.txs[i];
  ++summary_.records;
  const int64_t t = ToUnixMicros(tx.event_time);
  first_time_ = std::min(first_time_, t);
  last_time_ = std::max(last_time_, t);
  if (tx.label.has_value() && tx.label->is_laundering) {
    ++summary_.labelled_laundering;
    if (!tx.label->typology.empty()) ++summary_.typologies[tx.label->typology];
  }
  const absl::Span<const double> row = absl::MakeConstSpan(b.rows).subspan(i * width, width);
  const Decision* d = options_.decisions != nullptr ? &b.decisions[b.decision_of[i]] : nullptr;
  if (d != nullptr) {
    backtest_.Add(tx, *d);
    if (decisions_out_.is_open()) WriteDecision(decisions_out_, tx, *d);
    if (options_.compare != nullptr) comparer_.Add(tx, *d, b.compared[b.decision_of[i]]);
  }
  if (features_out_ != nullptr) VIGIL_RETURN_IF_ERROR(features_out_->Append(tx, row));
  if (options_.on_record) options_.on_record(tx, row, d);
  return absl::OkStatus();
}

absl::Status Replayer::FinishOutputs() {
  if (summary_.records > 0) {
    summary_.first_event_time = FormatUtc(FromUnixMicros(first_time_));
    summary_.last_event_time = FormatUtc(FromUnixMicros(last_time_));
  }
  if (decisions_out_.is_open()) {
    decisions_out_.close();
    if (!decisions_out_) {
      return absl::UnavailableError(
          absl::StrCat("writing decisions to '", options_.decisions_out, "' failed"));
    }
  }
  // Final checkpoint, also when nothing was left to do, so the position is recorded.
  if (store_ != nullptr) return Checkpoint(position_);
  if (features_out_ != nullptr) return features_out_->Sync();
  return absl::OkStatus();
}

absl::Status Replayer::ProcessInOrder(TransactionReader& reader, EventTimeOrderer& orderer) {
  // Records go to the extractor in batches (FeatureExtractor::ProcessBatch overlaps the memory
  // misses of a batch's transactions). A batch never crosses a checkpoint, so the state a
  // checkpoint saves is exactly that of the position it records.
  const size_t width = FeatureExtractor::Schema()->size();
  Batch b(width, options_.decisions != nullptr, options_.compare != nullptr);
  UuidV7Generator ids(clock_, 0x5eed);
  VIGIL_RETURN_IF_ERROR(OpenDecisionsOut());
  int64_t since_checkpoint = 0;
  for (bool more = true; more;) {
    const int64_t limit = std::min(Batch::kSize, options_.checkpoint_every - since_checkpoint);
    const auto t0 = Steady::now();
    VIGIL_ASSIGN_OR_RETURN(more, TakeBatch(reader, orderer, limit, b));
    if (b.n == 0) continue;
    const auto t1 = Steady::now();
    extractor_->ProcessBatch(absl::MakeConstSpan(b.txs).subspan(0, b.n),
                             absl::MakeSpan(b.rows).subspan(0, b.n * width),
                             absl::MakeSpan(b.statuses).subspan(0, b.n),
                             options_.decisions != nullptr ? &b.risk_reads : nullptr);
    const auto t2 = Steady::now();
    if (options_.decisions != nullptr) VIGIL_RETURN_IF_ERROR(DecideBatch(b, ids));
    const auto t2b = Steady::now();
    if (drift_tap_ != nullptr) FeedDrift(b);
    // Per-record stage latencies are the batch's time shared evenly among its records.
    const auto n = static_cast<int64_t>(b.n);
    const auto order_each = (t1 - t0) / n;
    const auto features_each = (t2 - t1) / n;
    const auto decide_each = b.decided == 0 ? Steady::duration{0}
                                            : (t2b - t2) / static_cast<int64_t>(b.decided);
    for (size_t i = 0; i < b.n; ++i) {
      const auto t3 = Steady::now();
      order_latency_.Record(order_each);
      features_latency_.Record(features_each);
      const EventTimeOrderer::Record& record = b.records[i];
      const absl::Status& s = b.statuses[i];
      if (!s.ok()) {
        Reject(record.sequence, "amount", FeatureRejectReason(s),
               std::string_view(s.message().data(), s.message().size()), record.payload);
      } else {
        if (options_.decisions != nullptr) decide_latency_.Record(decide_each);
        VIGIL_RETURN_IF_ERROR(OutputRecord(b, i));
        output_latency_.Record(Steady::now() - t3);
      }
      if (options_.crash_after_records >= 0 &&
          b.positions[i] - resume_position_ >= options_.crash_after_records) {
        std::_Exit(137);  // fault injection: die like SIGKILL, nothing flushed
      }
      if (++since_checkpoint >= options_.checkpoint_every) {
        VIGIL_RETURN_IF_ERROR(Checkpoint(b.positions[i]));
        since_checkpoint = 0;
      }
      progress_.Maybe("features", b.positions[i], summary_.total_in_order);
    }
  }
  return FinishOutputs();
}

absl::StatusOr<ReplaySummary> Replayer::Run() {
  const auto start = clock_.Monotonic();
  summary_.input = options_.input_path;
  VIGIL_ASSIGN_OR_RETURN(FileFormat format, DetectFileFormat(options_.input_path));
  summary_.format = FileFormatName(format);
  ReaderOptions reader_options;
  reader_options.default_priority = options_.default_priority;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<TransactionReader> reader,
                         OpenTransactionFile(options_.input_path, reader_options));
  VIGIL_RETURN_IF_ERROR(OpenState());
  VIGIL_RETURN_IF_ERROR(rejects_.Open(options_.rejects_out));

  EventTimeOrderer::Options order_options;
  order_options.memory_budget_bytes = options_.order_memory_bytes;
  order_options.temp_dir = options_.temp_dir;
  EventTimeOrderer orderer(order_options);
  VIGIL_RETURN_IF_ERROR(ReadAndOrder(*reader, orderer));
  summary_.total_in_order = orderer.stats().records;
  summary_.spilled_runs = orderer.stats().runs_spilled;

  // Resume only the same input (same accepted records in the same file order) into the same
  // features output; any other input continues the account history as a new stream.
  int64_t resume_offset = 0;
  if (store_ != nullptr) {
    const auto& cursor = store_->cursor();
    auto input = cursor.find(kCursorInput);
    auto position = cursor.find(kCursorPosition);
    if (input != cursor.end() && input->second == fingerprint_.ToString() &&
        position != cursor.end() && absl::SimpleAtoi(position->second, &resume_position_)) {
      if (!options_.features_out.empty() && resume_position_ > 0) {
        // The output must continue the file the interrupted run wrote, from its checkpoint.
        auto out = cursor.find(kCursorFeaturesOut);
        auto bytes = cursor.find(kCursorFeaturesOutBytes);
        if (out == cursor.end() || out->second != options_.features_out || bytes == cursor.end() ||
            !absl::SimpleAtoi(bytes->second, &resume_offset)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the data dir holds an interrupted replay of this input, ", resume_position_,
              " records in, that wrote features output '",
              out == cursor.end() ? "(none)" : out->second,
              "'; resume with that --features-out, or use a new --data-dir to start over"));
        }
      }
      summary_.resumed_from = resume_position_;
    }
  }
  VIGIL_RETURN_IF_ERROR(OpenFeaturesOut(resume_offset));
  VIGIL_RETURN_IF_ERROR(OpenDrift());
  VIGIL_RETURN_IF_ERROR(ProcessInOrder(*reader, orderer));
  VIGIL_RETURN_IF_ERROR(FinishDrift());
  VIGIL_RETURN_IF_ERROR(rejects_.Close());
  if (audit_log_ != nullptr) {
    VIGIL_RETURN_IF_ERROR(audit_log_->Flush());
    summary_.audit->log_size = static_cast<int64_t>(audit_log_->size());
  }

  summary_.elapsed_seconds = std::chrono::duration<double>(clock_.Monotonic() - start).count();
  summary_.records_per_second =
      summary_.elapsed_seconds > 0 ? summary_.records / summary_.elapsed_seconds : 0;
  summary_.stages = {Summarize("read", read_latency_), Summarize("order", order_latency_),
                     Summarize("features", features_latency_)};
  if (options_.decisions != nullptr) {
    summary_.stages.push_back(Summarize("decide", decide_latency_));
    summary_.backtest = backtest_.Summary();
    summary_.policy_version = options_.decisions->policy_version();
    summary_.model_version = options_.decisions->model_version();
    if (options_.compare != nullptr) {
      summary_.comparison = comparer_.Summary(options_.decisions->policy_version(),
                                              options_.compare->policy_version());
    }
  }
  summary_.stages.push_back(Summarize("output", output_latency_));
  const FeatureMemoryStats mem = extractor_->Memory(/*per_account=*/true);
  summary_.accounts = static_cast<int64_t>(mem.accounts);
  if (mem.accounts > 0) {
    summary_.state_bytes_per_account =
        static_cast<double>(mem.state_bytes + mem.index_bytes) / static_cast<double>(mem.accounts);
    std::vector<uint32_t> sizes = mem.per_account_bytes;
    // Each account's share of the key index is added evenly: it has no per-account outliers.
    const uint32_t index_share = static_cast<uint32_t>(mem.index_bytes / mem.accounts);
    std::sort(sizes.begin(), sizes.end());
    const auto at = [&](double q) {
      return static_cast<int64_t>(
                 sizes[std::min(sizes.size() - 1, static_cast<size_t>(q * sizes.size()))]) +
             index_share;
    };
    summary_.state_bytes_percentiles = {
        {"p50", at(0.5)}, {"p90", at(0.9)}, {"p99", at(0.99)}, {"max", at(1.0)}};
  }
  summary_.peak_rss_bytes = PeakRssBytes();
  return summary_;
}

nlohmann::json StageJson(const StageLatency& s) {
  const auto us = [](std::chrono::nanoseconds d) { return d.count() / 1000.0; };
  return {{"count", s.count},    {"p50_us", us(s.p50)},   {"p90_us", us(s.p90)},
          {"p99_us", us(s.p99)}, {"p999_us", us(s.p999)}, {"max_us", us(s.max)}};
}

}  // namespace

absl::StatusOr<ReplaySummary> RunReplay(const ReplayOptions& options, const FxRates& fx,
                                        const Clock& clock) {
  if (options.checkpoint_every <= 0) {
    return absl::InvalidArgumentError("checkpoint_every must be positive");
  }
  Replayer replayer(options, fx, clock);
  return replayer.Run();
}

std::string ReplaySummaryToJson(const ReplaySummary& s) {
  nlohmann::json stages = nlohmann::json::object();
  for (const StageLatency& st : s.stages) stages[st.stage] = StageJson(st);
  nlohmann::json j = {
      {"input", s.input},
      {"format", s.format},
      {"records", s.records},
      {"rejected", s.rejected},
      {"rejects_by_reason", s.rejects_by_reason},
      {"resumed_from", s.resumed_from},
      {"total_in_order", s.total_in_order},
      {"spilled_runs", s.spilled_runs},
      {"checkpoints", s.checkpoints},
      {"redecided", s.redecided},
      {"elapsed_seconds", s.elapsed_seconds},
      {"records_per_second", s.records_per_second},
      {"stage_latency", stages},
      {"accounts", s.accounts},
      {"state_bytes_per_account", s.state_bytes_per_account},
      {"state_bytes_per_account_percentiles", s.state_bytes_percentiles},
      {"peak_rss_bytes", s.peak_rss_bytes},
      {"labelled_laundering", s.labelled_laundering},
      {"typologies", s.typologies},
      {"first_event_time", s.first_event_time},
      {"last_event_time", s.last_event_time},
  };
  if (s.backtest.has_value()) {
    j["policy_version"] = s.policy_version;
    j["model_version"] = s.model_version;
    j["backtest"] = BacktestToJson(*s.backtest);
  }
  if (s.comparison.has_value()) j["comparison"] = ComparisonToJson(*s.comparison);
  if (s.audit.has_value()) {
    j["audit"] = {{"recorded", s.audit->recorded},
                  {"already_recorded", s.audit->already_recorded},
                  {"log_size", s.audit->log_size},
                  {"log_id", s.audit->log_id}};
  }
  if (s.drift.has_value()) {
    j["drift"] = {{"calibration", s.drift->calibration},
                  {"worst_level", s.drift->worst_level},
                  {"final_level", s.drift->final_level},
                  {"evaluations", s.drift->evaluations},
                  {"rows_late", s.drift->rows_late},
                  {"rows_capped", s.drift->rows_capped},
                  {"skipped_warmup", s.drift->skipped_warmup},
                  {"skipped_sources", s.drift->skipped_sources},
                  {"events", s.drift->events},
                  {"drifted", s.drift->drifted},
                  {"frozen_seconds", s.drift->frozen_seconds},
                  {"blocked_seconds", s.drift->blocked_seconds},
                  {"drain_seconds", s.drift->drain_seconds},
                  {"monitor_cpu_seconds", s.drift->monitor_cpu_seconds},
                  {"report", s.drift->report}};
  }
  return j.dump(2) + "\n";
}

std::string ReplaySummaryToText(const ReplaySummary& s) {
  std::string out;
  absl::StrAppendFormat(&out, "replay of %s (%s)\n", s.input, s.format);
  absl::StrAppendFormat(&out, "  records      %d accepted, %d rejected", s.records, s.rejected);
  if (s.resumed_from > 0) absl::StrAppendFormat(&out, ", resumed after %d", s.resumed_from);
  out += "\n";
  for (const auto& [reason, n] : s.rejects_by_reason) {
    absl::StrAppendFormat(&out, "    rejected   %-24s %d\n", reason, n);
  }
  if (!s.first_event_time.empty()) {
    absl::StrAppendFormat(&out, "  event time   %s .. %s\n", s.first_event_time, s.last_event_time);
  }
  absl::StrAppendFormat(&out, "  throughput   %.0f records/s (%.2f s)\n", s.records_per_second,
                        s.elapsed_seconds);
  out += "  latency      stage        p50 us    p90 us    p99 us  p99.9 us    max us\n";
  for (const StageLatency& st : s.stages) {
    absl::StrAppendFormat(&out, "               %-9s %9.2f %9.2f %9.2f %9.2f %9.1f\n", st.stage,
                          st.p50.count() / 1e3, st.p90.count() / 1e3, st.p99.count() / 1e3,
                          st.p999.count() / 1e3, st.max.count() / 1e3);
  }
  absl::StrAppendFormat(&out, "  accounts     %d, state %.0f bytes/account", s.accounts,
                        s.state_bytes_per_account);
  if (!s.state_bytes_percentiles.empty()) {
    absl::StrAppendFormat(&out, " (p50 %d, p90 %d, p99 %d, max %d)",
                          s.state_bytes_percentiles.at("p50"), s.state_bytes_percentiles.at("p90"),
                          s.state_bytes_percentiles.at("p99"), s.state_bytes_percentiles.at("max"));
  }
  absl::StrAppendFormat(&out, "\n  memory       peak RSS %.1f MiB\n", s.peak_rss_bytes / 1048576.0);
  if (s.labelled_laundering > 0) {
    absl::StrAppendFormat(&out, "  labels       %d laundering records", s.labelled_laundering);
    for (const auto& [typology, n] : s.typologies)
      absl::StrAppendFormat(&out, ", %s %d", typology, n);
    out += "\n";
  }
  if (s.checkpoints > 0) absl::StrAppendFormat(&out, "  checkpoints  %d\n", s.checkpoints);
  if (s.backtest.has_value()) {
    absl::StrAppendFormat(
        &out, "backtest of policy %s%s\n", s.policy_version,
        s.model_version.empty() ? " (rules only)" : absl::StrCat(" with model ", s.model_version));
    out += BacktestToText(*s.backtest);
  }
  if (s.comparison.has_value()) out += ComparisonToText(*s.comparison);
  if (s.audit.has_value()) {
    absl::StrAppendFormat(&out, "audit: %d decisions recorded", s.audit->recorded);
    if (s.audit->already_recorded > 0) {
      absl::StrAppendFormat(&out, " (%d already in the log)", s.audit->already_recorded);
    }
    absl::StrAppendFormat(&out, "; the log holds %d (log %s; `vigil audit verify`)\n",
                          s.audit->log_size, s.audit->log_id);
  }
  if (s.drift.has_value()) {
    const DriftSummary& d = *s.drift;
    absl::StrAppendFormat(&out, "drift: worst level %s, final %s, %d evaluations (calibration %s)",
                          d.worst_level, d.final_level, d.evaluations, d.calibration);
    if (d.frozen_seconds > 0) {
      absl::StrAppendFormat(&out, ", frozen (L3) %.0f s of event time", d.frozen_seconds);
    }
    if (d.skipped_warmup > 0) {
      absl::StrAppendFormat(&out, "; %d evaluations skipped in the warm-up", d.skipped_warmup);
    }
    out += "\n";
    if (!d.events.empty()) {
      out += "  events      ";
      for (const auto& [kind, n] : d.events) absl::StrAppendFormat(&out, " %s %d", kind, n);
      out += "\n";
    }
    if (!d.drifted.empty()) {
      out += "  drifted     ";
      for (const auto& [subject, level] : d.drifted) absl::StrAppendFormat(&out, " %s (%s)", subject, level);
      out += "\n";
    }
    if (!d.report.empty()) absl::StrAppendFormat(&out, "  report       %s\n", d.report);
  }
  return out;
}

}  // namespace vigil
