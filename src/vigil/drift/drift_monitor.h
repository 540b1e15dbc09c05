// DriftMonitor: watches every feature and the model's score against the training reference on
// event time, and turns what it sees into levels, escalations and events (docs/drift.md).
//
//   rows (event time, feature vector, score) ──► per window: exact cell counts + row sample
//     at each pane boundary, per subject: divergences → weighted score → P(no drift gives
//     this much) → calibrated severity → level (hysteresis), escalation pattern
//     ──► events (DriftEventLog), monitor level, frozen flag, state for GET /v1/drift
//
// Severity: with the default null calibration, severity = l2 · ln p / ln α, clamped to [0, 1],
// where p is the subject's no-drift probability of a score at least this large for a window of
// this many rows — divided by the reference's dispersion at the window's length, because a
// real stream's windows differ from each other more than iid samples do, and only a change
// beyond that natural variation is drift — and α = slide / false_alarm_period / windows is the per-evaluation false-alarm
// budget of the window. So severity reaches the L2 cut-off exactly at the targeted false-alarm
// rate, for every feature and window size; L1 (below) fires more often and is only logged, L3
// (above) far less often. The raw preset maps the weighted score through fixed cut-offs.
//
// Monitor level: the highest subject level. Reaching L2 requests a retrain; reaching L3 (a
// subject at L3, or a critical escalation) freezes the model — frozen() turns true, and the
// engine decides rules-only and degraded — and opens a review ticket; leaving L3 releases the
// freeze, and so does an operator (Release). Every level change and these monitor events are
// appended to the event log and handed to the listener (SetListener).
//
// Burst resistance (docs/drift.md, "Who can move a window"): each row names its sources
// (RowSource); per window a SourceLedger caps what one account or client contributes and a
// window is evaluated only when its rows involve enough distinct accounts and clients; levels
// rise one step per DriftConfig::min_dwell of event time; no window is evaluated during the
// feature state's warm-up (DriftConfig::warmup).
//
// Thread safety: internally synchronized; Observe* are meant for one feeding thread (rows in
// roughly event-time order), State/History/frozen may be called from any thread. Events are
// written to the log after the state's lock is released, so a reader of the state never waits
// on the log's store: a freeze takes effect at once, its events are in the log moments later.
#ifndef VIGIL_DRIFT_DRIFT_MONITOR_H_
#define VIGIL_DRIFT_DRIFT_MONITOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/common/clock.h"
#include "vigil/drift/binned.h"
#include "vigil/drift/cell_layout.h"
#include "vigil/drift/drift_config.h"
#include "vigil/drift/drift_event_log.h"
#include "vigil/drift/drift_report.h"
#include "vigil/drift/empirical_null.h"
#include "vigil/drift/escalation.h"
#include "vigil/drift/live_window.h"
#include "vigil/drift/measured_null.h"
#include "vigil/drift/null_calibration.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/drift/source_ledger.h"

namespace vigil::drift {

struct DriftWindowState {
  std::string window;
  bool evaluated = false;     // false until the window first had min_rows rows
  UtcTime end{};              // of the last evaluation
  uint64_t rows = 0;
  double effective_rows = 0;
  Divergences divergences;
  double score = 0;           // weighted
  double dispersion = 1;      // the reference stream's variation at this window length
  double p_no_drift = 1;      // P(score at least this large | no drift)
  double severity = 0;
  DriftLevel level = DriftLevel::kNone;
  UtcTime level_since{};      // event time of the last level change
  // Exact two-sample statistics of the window's sample against the reference sample (State
  // with exact = true and a subject with present values in both).
  std::optional<double> ks, ks_pvalue, wasserstein, wasserstein_norm;
  uint64_t sample_size = 0;
  // Of the last evaluation: distinct accounts and clients among the window's rows.
  uint64_t accounts = 0, clients = 0;
};

struct DriftSubjectState {
  std::string name;
  DriftLevel level = DriftLevel::kNone;  // the highest of its windows
  DriftLevel worst = DriftLevel::kNone;  // the highest it has been since the start
  std::vector<DriftWindowState> windows;
};

struct DriftState {
  DriftLevel level = DriftLevel::kNone;
  DriftLevel worst_level = DriftLevel::kNone;  // the highest monitor level since the start
  bool frozen = false;
  UtcTime frozen_since{};
  // Event time spent frozen since the start, a freeze still on counted to the last evaluation.
  double frozen_seconds = 0;
  std::map<std::string, uint64_t> events_by_kind;
  double drifted_share = 0;   // features (not the score) at L2 or above / features monitored
  uint64_t rows = 0, late = 0, evaluations = 0, events = 0;
  // Rows left out of a window by the per-account and per-client caps (summed over windows);
  // evaluations skipped in the warm-up, and for too few distinct accounts or clients.
  uint64_t capped = 0, skipped_warmup = 0, skipped_sources = 0;
  UtcTime warm_from{};  // no window ending before this is evaluated (0: not yet known)
  bool released_by_operator = false;  // the current L3 episode's freeze was released by hand
  std::string calibration;    // "null", "null+measured" or "raw-preset"
  std::vector<DriftSubjectState> subjects;
  std::vector<std::string> unmonitored;  // schema features left out, with why
};

class DriftMonitor {
 public:
  // "feature_names": the feature vector's layout (schema order). Each feature is monitored
  // unless excluded by the config; a feature the profile lacks is reported as unmonitored.
  // "events" may be null (events are then only counted); it must outlive the monitor.
  // Errors: the config is invalid, the profile's feature schema version differs from
  // "schema_version", or no feature is left to monitor.
  // With a measured null: kFailedPrecondition when it was measured for another schema, other
  // windows, weights or smoothing.
  static absl::StatusOr<std::unique_ptr<DriftMonitor>> Create(
      const ReferenceProfile& profile, const std::string& schema_version,
      const std::vector<std::string>& feature_names, DriftConfig config,
      DriftEventLog* events);

  // One row at event time "t": "features" in the layout given at Create, "score" the model's
  // probability (NaN: not scored — such rows count for the features, and the score is judged on
  // the rows that have one). Windows whose panes "t" completes are evaluated first.
  // Errors: a wrong row width, or an event the log could not store (the monitor's state has
  // moved on regardless).
  // "source": who the row comes from (all 0: unknown, source_ledger.h).
  absl::Status Observe(UtcTime t, absl::Span<const double> features, double score,
                       const RowSource& source = {});
  // Rows r = 0..n-1: features[r * width, (r + 1) * width), scores[r], sources[r] ("sources"
  // empty: every row's sources unknown).
  absl::Status ObserveBatch(absl::Span<const UtcTime> times, absl::Span<const double> features,
                            absl::Span<const double> scores,
                            absl::Span<const RowSource> sources = {});
  // Evaluates every window as of its newest pane (the end of a replay).
  absl::Status Flush();

  // An operator's release of the freeze: the model decides again until the monitor leaves L3
  // and reaches it anew (the levels stay what the evidence says). Emits freeze_released naming
  // "actor" and "reason" and returns it as stored. kFailedPrecondition when the model is not
  // frozen; the store's error when the event could not be stored (the freeze is released).
  absl::StatusOr<DriftEvent> Release(std::string_view actor, std::string_view reason);

  // Called with every event the monitor raises, after it is stored, on the thread that fed the
  // row (or called Release), never under the monitor's lock. Set before the first row.
  using Listener = std::function<void(const DriftEvent&)>;
  void SetListener(Listener listener) { listener_ = std::move(listener); }

  bool frozen() const { return frozen_.load(std::memory_order_acquire); }
  DriftLevel level() const { return level_.load(std::memory_order_acquire); }

  // "exact": also the KS statistic and p-value and Wasserstein-1 of each window's current
  // sample (costlier: for GET /v1/drift, not for every evaluation).
  DriftState State(bool exact) const;
  // Per subject and window, the evaluations kept (DriftConfig::history_points).
  std::vector<DriftSeries> History() const;
  // With DriftConfig::record_null: every evaluation's score so far, as a measured null for
  // monitors with this configuration.
  MeasuredNull RecordedNull() const;

  size_t width() const { return width_; }

 private:
  struct Subject {
    std::string name;
    size_t column;  // in the feature row; width_ for the score
    const FeatureReference* reference;
    CellLayout cells;
    std::shared_ptr<NullCalibration> null;  // shared by subjects with equal reference cells
    std::vector<LevelTracker> trackers;  // per window
    std::vector<double> dispersion;      // per window
    std::vector<std::optional<EmpiricalNull>> measured;  // per window (DriftConfig::measured_null)
    std::vector<std::vector<double>> recorded;           // per window (DriftConfig::record_null)
    EscalationMatcher escalation;
    DriftLevel worst = DriftLevel::kNone;
    std::vector<DriftWindowState> last;  // per window
    std::vector<DriftSeries> history;    // per window
    std::vector<size_t> stride, pending_count;
    std::vector<DriftPoint> pending;
  };
  struct Window {
    DriftWindowSpec spec;
    LiveWindow live;
    double alpha;  // per-evaluation false-alarm budget
    SourceLedger ledger;
  };

  DriftMonitor(DriftConfig config, DriftEventLog* events) : config_(std::move(config)), events_(events) {}
  absl::Status ObserveLocked(UtcTime t, absl::Span<const double> features, double score,
                             const RowSource& source) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether window "w" as of pane "as_of" (ending at "end") may be evaluated: past the warm-up,
  // with enough rows, accounts and clients. Counts the skips.
  bool Evaluable(size_t w, int64_t as_of, UtcTime end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvaluateLocked(size_t window, int64_t as_of) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double Severity(double score, double p, const Window& w) const;
  void Remember(Subject& s, size_t window, const DriftPoint& point) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts the event and queues it for the log (StoreEvents writes it).
  void Emit(DriftEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores the queued events after releasing "lock" (which holds mu_): the first error, if any.
  // "last" (optional): set to the last event as stored.
  absl::Status StoreEvents(absl::ReleasableMutexLock& lock, DriftEvent* last = nullptr)
      ABSL_LOCKS_EXCLUDED(store_mu_);
  void UpdateMonitorLevel(UtcTime t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DriftConfig config_;
  DriftEventLog* const events_;
  size_t width_ = 0;
  std::string schema_version_;
  size_t features_monitored_ = 0;
  std::vector<std::string> unmonitored_;

  absl::Mutex store_mu_ ABSL_ACQUIRED_AFTER(mu_);  // orders the log's appends
  mutable absl::Mutex mu_;
  std::vector<Subject> subjects_ ABSL_GUARDED_BY(mu_);
  std::vector<Window> windows_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> row_cells_ ABSL_GUARDED_BY(mu_);
  std::vector<double> row_values_ ABSL_GUARDED_BY(mu_);
  LiveWindow::Totals totals_ ABSL_GUARDED_BY(mu_);
  std::vector<double> score_cells_ ABSL_GUARDED_BY(mu_);
  DriftLevel monitor_level_ ABSL_GUARDED_BY(mu_) = DriftLevel::kNone;
  DriftLevel worst_level_ ABSL_GUARDED_BY(mu_) = DriftLevel::kNone;
  UtcTime frozen_since_ ABSL_GUARDED_BY(mu_){};
  double frozen_seconds_ ABSL_GUARDED_BY(mu_) = 0;  // of freezes released
  UtcTime last_end_ ABSL_GUARDED_BY(mu_){};         // of the latest evaluation
  std::map<std::string, uint64_t> events_by_kind_ ABSL_GUARDED_BY(mu_);
  uint64_t rows_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evaluations_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t events_emitted_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<DriftEvent> unstored_ ABSL_GUARDED_BY(mu_);
  std::optional<UtcTime> warm_since_ ABSL_GUARDED_BY(mu_);  // the feature state's first payment
  uint64_t skipped_warmup_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t skipped_sources_ ABSL_GUARDED_BY(mu_) = 0;
  bool released_by_operator_ ABSL_GUARDED_BY(mu_) = false;
  Listener listener_;  // set before the first row, then constant
  std::atomic<bool> frozen_{false};
  std::atomic<DriftLevel> level_{DriftLevel::kNone};
};

std::string DriftStateToJson(const DriftState& state);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_MONITOR_H_
