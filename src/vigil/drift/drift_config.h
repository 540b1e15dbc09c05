// DriftConfig: what the drift monitor watches and when it alarms (docs/drift.md).
#ifndef VIGIL_DRIFT_DRIFT_CONFIG_H_
#define VIGIL_DRIFT_DRIFT_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/common/clock.h"
#include "vigil/drift/drift_level.h"
#include "vigil/drift/escalation.h"
#include "vigil/drift/null_calibration.h"

namespace vigil::drift {

class MeasuredNull;

struct DriftWindowSpec {
  std::string name;
  std::chrono::seconds size{60};
  std::chrono::seconds slide{10};
  std::chrono::seconds decay_half_life{0};  // 0: no decay (live_window.h)
};

enum class DriftCalibration {
  // Severity from each subject's simulated no-drift distribution for the window's size
  // (null_calibration.h), aimed at one false L2 per subject per false_alarm_period.
  kNull,
  // Severity from fixed raw score cut-offs (raw_preset), the same for every feature and window
  // size: the conventional setting, kept as a preset for comparison.
  kRawPreset,
};

struct DriftConfig {
  std::vector<DriftWindowSpec> windows = {
      {"short", std::chrono::seconds(60), std::chrono::seconds(10), std::chrono::seconds(0)},
      {"long", std::chrono::seconds(300), std::chrono::seconds(60), std::chrono::seconds(0)}};
  DriftScoreWeights weights;
  double pseudo_count = 0.5;
  DriftCalibration calibration = DriftCalibration::kNull;
  // Expected time between false L2 alarms of one subject, all its windows together (each
  // window gets an equal share of the budget at its own cadence).
  std::chrono::hours false_alarm_period{24 * 30};
  int null_windows = 2000;  // simulated no-drift windows per window size
  // A window with fewer rows is not evaluated (its levels hold).
  uint64_t min_rows = 50;
  LevelCutoffs levels;
  // kRawPreset: the raw weighted scores that map to severities l1, l2, l3 (piecewise linear
  // through (0, 0), these three points, and 1 at l3's score plus the l2→l3 step).
  double raw_l1 = 0.15, raw_l2 = 0.30, raw_l3 = 0.45;
  EscalationPattern escalation;
  // Features left out: those with known seasonality (hour of day, day of week) differ from a
  // whole-period reference every hour by design.
  std::vector<std::string> exclude = {"hour_of_day", "day_of_week"};
  bool monitor_score = true;  // the model's score distribution, when the profile has it
  bool freeze_on_l3 = true;   // L3 freezes the model: decisions rules-only and degraded
  size_t sample_rows_per_pane = 128;
  // Points kept per subject and window for reports (0: none). Beyond it, neighbouring points
  // merge (keeping the highest severity), so a long replay still fits.
  size_t history_points = 0;
  uint64_t seed = 1;
  // The no-drift scores of the training stream's windows (measured_null.h); with it a window
  // is drift only if unusual against both nulls. Must match the windows, weights and smoothing.
  std::shared_ptr<const MeasuredNull> measured_null;
  // Keep every evaluation's score, to write a measured null (DriftMonitor::RecordedNull).
  bool record_null = false;

  // Who may make up a window (source_ledger.h, docs/drift.md "Who can move a window"): an
  // account's rows count at most max(account_cap_rows, account_cap_share × the window's rows),
  // a client's at most max(account_cap_rows, client_cap_share × rows) (1: clients not capped,
  // as where one payments gateway submits everything), and a window is evaluated only when its
  // rows involve at least min_accounts distinct accounts and min_clients distinct clients.
  uint64_t account_cap_rows = 1;
  double account_cap_share = 0;
  double client_cap_share = 1.0;
  uint64_t min_accounts = 20;
  uint64_t min_clients = 1;
  // Levels rise one step at a time, each step after the first at least this long (event time)
  // after the previous one (drift_level.h): L3, the freeze, needs evidence that holds for twice
  // this, longer than any one burst's event times can span under the server's admission bounds
  // (allowed lateness behind the watermark plus the future skew allowed ahead of the clock).
  // 0: levels may jump at once.
  std::chrono::seconds min_dwell{15 * 60};
  // Warm-up: a fresh feature state describes every account as new (its 1 h, 24 h and 7 d
  // windows still filling) while the reference was taken over a warmed-up stream, so no window
  // ending within this long (event time) of the state's first payment is evaluated. The
  // feature state's first payment: warm_since when set (a state restored from a data dir),
  // else the monitor's first row. 0: no warm-up.
  std::chrono::seconds warmup{7 * 24 * 3600};
  std::optional<UtcTime> warm_since;

  // Errors name the member.
  absl::Status Validate() const;
};

// A calibration by name (serve drift.calibration, replay --drift-calibration): "null" (per window size, docs/drift.md) or "raw-preset".
absl::StatusOr<DriftCalibration> ParseDriftCalibration(std::string_view text);

// A window as written in configuration (drift.short_window, --drift-short): "SIZE/SLIDE" in whole seconds ("60/10"), SIZE a
// positive multiple of SLIDE, at most 10,000 panes and at most 7 days. Sets window->size and
// ->slide; errors name "key".
absl::Status ParseDriftWindow(std::string_view text, std::string_view key,
                              DriftWindowSpec* window);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_CONFIG_H_
