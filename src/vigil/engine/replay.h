// Replay: streams a transaction file through the pipeline in event-time order, the way live
// traffic would have arrived, and reports what happened. `vigil replay` is a thin face over it;
// later stages (scoring, decisions, audit) join the same loop so a backtest decides exactly as
// production does.
//
// Steps: (1) read every record (parse, validate, count and optionally write rejects),
// fingerprinting the input; (2) order accepted records by event time, stable in file order, in
// memory or spilled to disk (EventTimeOrderer); (3) for each record in order, update and extract
// features and write the row. With a data dir, feature state is restored at start and
// checkpointed every `checkpoint_every` records together with the position reached and the
// byte offset of the features output; a replay of the same input after a crash resumes there,
// so the combined output equals an uninterrupted run's and no account is counted twice.
//
// Thread safety: RunReplay is reentrant; one call uses one thread.
#ifndef VIGIL_ENGINE_REPLAY_H_
#define VIGIL_ENGINE_REPLAY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/signing_key.h"
#include "vigil/common/clock.h"
#include "vigil/core/fx_rates.h"
#include "vigil/core/transaction.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/drift/drift_config.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/evaluation/backtest.h"
#include "vigil/features/feature_config.h"

namespace vigil {

struct ReplayOptions {
  std::string input_path;
  // Feature state directory (RocksDB). Empty: state in memory only, nothing survives the run.
  std::string data_dir;
  // Feature vectors CSV (see FeatureRowWriter); empty: none.
  std::string features_out;
  // Rejected records, one per line: "line<TAB>field<TAB>reason<TAB>message<TAB>record"; empty:
  // not written (rejects are still counted).
  std::string rejects_out;
  FeatureConfig features;
  // Priority of records that carry none (files are bulk traffic).
  Priority default_priority = Priority::kP2;
  // A record whose event time is more than this ahead of the records around it in the file
  // (the median of eight on each side) is rejected, reason "event_time_outlier", instead of
  // applied: a mistyped year would otherwise become the state's watermark and make every later
  // payment into this data dir too late (EventTimeOutliers). 0: off.
  std::chrono::microseconds max_event_lead = std::chrono::hours(24 * 30);
  // Memory for ordering records by event time before spilling sorted runs to temp_dir.
  size_t order_memory_bytes = size_t{256} << 20;
  std::string temp_dir;  // empty: the system temp directory
  // Records between durable checkpoints (with a data dir). Fewer means less rework after a
  // crash and more fsyncs: each checkpoint costs one RocksDB sync plus one of the output.
  int64_t checkpoint_every = 200'000;
  // Progress lines go here (nullptr: none), at most every progress_interval.
  std::ostream* progress = nullptr;
  std::chrono::milliseconds progress_interval{1000};
  // Decides every record with this policy (and model) and backtests the decisions against the
  // labels (ReplaySummary::backtest); nullptr: features only. A resumed run backtests only the
  // records it processes itself.
  const DecisionMaker* decisions = nullptr;
  // With decisions: decide every record with this policy too and report how the decisions
  // change (ReplaySummary::comparison); nullptr: no comparison.
  const DecisionMaker* compare = nullptr;
  // With decisions: one CSV row per decision (docs/replay.md); empty: none. Written from the
  // start each run (a resumed run writes only its own records).
  std::string decisions_out;
  // Drift (docs/drift.md): with a reference profile, every processed row — and with decisions
  // its score — is watched on event time exactly as `vigil serve` watches live traffic, so the
  // replay shows drift as it would have been seen live; nullptr: off. Decisions are not frozen
  // by an L3 here: a backtest measures the policy and model as configured, and the summary and
  // report show when a live deployment would have frozen.
  const drift::ReferenceProfile* drift_profile = nullptr;
  drift::DriftConfig drift;
  // With drift_profile: a self-contained HTML report (plots of severity per subject, events)
  // written here; empty: none.
  std::string drift_report;
  // With drift_profile: write the no-drift scores of this replay's windows here, as a measured
  // null for monitors with the same configuration (replay the training stream); empty: none.
  std::string drift_null_out;
  // With decisions and a data dir: every decision is recorded in the data dir's audit log
  // through the same DecisionRecorder as `vigil serve` (docs/audit.md), so a backtest leaves a
  // verifiable record; the log's tree heads are signed with this key. Null: not recorded. A
  // resumed run records nothing twice: a transaction id the log holds is not recorded again.
  std::shared_ptr<const audit::LogSigner> audit_signer;
  audit::HashAlgorithm audit_hash = audit::HashAlgorithm::kSha256;  // for a new log
  // Seals the recorded personal fields (audit::AuditLogOptions::record_kek, record_suite):
  // the public half of the key-encryption key; null: records in the clear.
  std::shared_ptr<const crypto::KeyEncryptionKey> audit_record_kek;
  crypto::CipherSuite audit_record_suite = crypto::CipherSuite::kAes256Gcm;
  // Wait for each batch's records to be durable before its outputs are written (default).
  bool audit_durable_ack = true;
  // Called for every record the features accepted, in event-time order, with its feature row
  // (FeatureExtractor::Schema()) and, with decisions, its decision (else null): for tools that
  // work on the replayed rows in memory (`vigil policy tune`). Empty: none.
  std::function<void(const Transaction& tx, absl::Span<const double> row, const Decision* d)>
      on_record;
  // Fault injection for crash-recovery tests: after this many records of this run are processed,
  // the process exits at once with status 137 (like SIGKILL): no flush, no checkpoint. < 0: off.
  int64_t crash_after_records = -1;
};

struct StageLatency {
  std::string stage;  // "read", "order", "features", "decide", "output"
  uint64_t count = 0;
  std::chrono::nanoseconds p50{0}, p90{0}, p99{0}, p999{0}, max{0};
};

struct DriftSummary {
  std::string calibration;  // "null", "null+measured" or "raw-preset"
  std::string worst_level = "none", final_level = "none";
  int64_t evaluations = 0;
  int64_t rows_late = 0;  // rows older than a window when they arrived (not observed)
  // Rows left out of a window by the per-account caps (summed over windows), and evaluations
  // skipped in the feature state's warm-up or for too few distinct accounts (docs/drift.md).
  int64_t rows_capped = 0, skipped_warmup = 0, skipped_sources = 0;
  std::map<std::string, int64_t> events;  // by kind
  // Subjects that reached L2 or above, with their worst level ("amount_reporting": "L3").
  std::map<std::string, std::string> drifted;
  double frozen_seconds = 0;  // event time spent at L3 (a live deployment decides rules-only)
  double blocked_seconds = 0;  // the replay waited this long for room in the monitor's queue
  double drain_seconds = 0;    // and this long at the end, for the monitor to finish
  double monitor_cpu_seconds = 0;  // the monitor's own work (its thread's CPU time)
  std::string report;         // the HTML report's path, when written
};

struct ReplaySummary {
  std::string input;
  std::string format;    // FileFormatName: "amlworld_csv", "json_lines", "swift_mt", "iso20022"
  int64_t records = 0;   // transactions accepted and processed by this run
  int64_t rejected = 0;  // records refused (parse or feature stage)
  std::map<std::string, int64_t> rejects_by_reason;
  int64_t resumed_from = 0;    // records already processed by an earlier, interrupted run
  int64_t total_in_order = 0;  // accepted records of the input, in event-time order
  int64_t spilled_runs = 0;    // sorted runs written to disk while ordering
  int64_t checkpoints = 0;
  // Decisions made again because an earlier decision of the same batch changed the account
  // risk their row read (the repair that makes a batch decide as payments one by one do).
  int64_t redecided = 0;
  double elapsed_seconds = 0;
  double records_per_second = 0;  // records / elapsed_seconds
  std::vector<StageLatency> stages;
  int64_t accounts = 0;
  // Feature state per account, bytes: mean and distribution over accounts (state + key index).
  double state_bytes_per_account = 0;
  std::map<std::string, int64_t> state_bytes_percentiles;  // "p50", "p90", "p99", "max"
  int64_t peak_rss_bytes = 0;
  int64_t labelled_laundering = 0;                // records labelled as laundering
  std::map<std::string, int64_t> typologies;      // labelled records per typology
  std::string first_event_time, last_event_time;  // RFC 3339, empty when no records
  std::optional<evaluation::BacktestSummary> backtest;        // with ReplayOptions::decisions
  std::string policy_version, model_version;      // of the decisions, when made
  std::optional<evaluation::PolicyComparison> comparison;     // with ReplayOptions::compare
  std::optional<DriftSummary> drift;              // with ReplayOptions::drift_profile
  // With ReplayOptions::audit_signer: decisions recorded by this run, those found already
  // recorded (by an interrupted run of the same input, or an earlier replay), and the log's
  // size at the end.
  struct Audit {
    int64_t recorded = 0;
    int64_t already_recorded = 0;
    int64_t log_size = 0;
    std::string log_id;
  };
  std::optional<Audit> audit;
};

// Errors: the input cannot be opened or read (kNotFound / kUnavailable), the data dir is
// unusable or holds state of another schema, the features output cannot be written. Bad
// records are not errors: they are counted in the summary.
absl::StatusOr<ReplaySummary> RunReplay(const ReplayOptions& options, const FxRates& fx,
                                        const Clock& clock);

// The summary as JSON (stable key names, documented in docs/replay.md) and as the human-readable
// block `vigil replay` prints.
std::string ReplaySummaryToJson(const ReplaySummary& s);
std::string ReplaySummaryToText(const ReplaySummary& s);

}  // namespace vigil

#endif  // VIGIL_ENGINE_REPLAY_H_
