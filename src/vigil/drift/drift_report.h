// Drift report: one self-contained HTML page showing how each subject's calibrated severity
// moved over a replay, meant to be looked at rather than read. `vigil replay --drift-report
// out.html` writes it.
//
// The page, top to bottom: the title and a headline naming the worst level reached; the facts
// table; an overview table, one row per subject (worst level, time at >= L2, peak severity and
// when, final level); one SVG plot per subject (severity in [0, 1] over UTC time on the level
// bands, one line per window, a tick at each of the subject's level changes) under a legend;
// the events table.
//
// Self-contained: inline CSS and SVG, no script, no external URL (the only "http" in the page
// is the SVG namespace), so it can be mailed or attached to a ticket as is. It is also
// well-formed XML (every element closed, only XML's predefined entities), so tools can
// parse it. The output depends on the report alone (no clock): a replay renders the same bytes
// every time.
//
// Thread safety: RenderDriftReportHtml is a pure function.
#ifndef VIGIL_DRIFT_DRIFT_REPORT_H_
#define VIGIL_DRIFT_DRIFT_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "vigil/common/clock.h"
#include "vigil/drift/drift_event.h"
#include "vigil/drift/drift_level.h"

namespace vigil::drift {

// One evaluation of a subject on a window.
struct DriftPoint {
  UtcTime time{};                        // event time of the evaluation
  double score = 0;                      // the raw weighted drift score
  double severity = 0;                   // calibrated, [0, 1]
  DriftLevel level = DriftLevel::kNone;  // the subject's level on this window after it
};

// One subject's history on one window: a feature name or "model_score"; window "short" or
// "long". Points need not be sorted by time.
struct DriftSeries {
  std::string subject;
  std::string window;
  std::vector<DriftPoint> points;
};

struct DriftReport {
  std::string title;  // e.g. "Drift of transactions.csv against model.json's reference"
  // Shown as a small table at the top, in this order (reference, rows, windows, calibration...).
  std::vector<std::pair<std::string, std::string>> facts;
  LevelCutoffs cutoffs;             // where the bands are drawn
  std::vector<DriftSeries> series;  // series of one subject are drawn on one plot
  std::vector<DriftEvent> events;   // the table (sorted by time, newest last) and plot marks
};

// Returns a complete HTML5 document (UTF-8). Every string from the report is escaped.
//
// Subjects are shown "model_score" first, then the subjects that reached L1 or above by peak
// severity descending, then the rest; ties and the rest keep report order. The subjects that
// never reached a level (model_score aside) are drawn as a grid of small plots. All plots share one time axis, from
// the report's earliest point to its latest.
//
// Points whose severity is not finite are skipped everywhere. Severity outside [0, 1] is
// clamped on the plots (the tables show it as is). On a full plot each series is downsampled to
// at most 400 points (so at most 800 for a subject with both windows) by equal time buckets,
// keeping each bucket's highest-severity point: peaks survive, troughs may be filled in.
//
// Time at >= L2: a point's level holds until the next point of its series (a series' last
// point adds nothing); a subject's windows are merged, so overlapping time counts once.
//
// Windows: "short" is drawn thin and light, any other window bold. Events: level_change events
// are marked on their subject's plot; the monitor's retrain requests, freezes and releases (not its
// level changes) as dashed lines on model_score's plot.
// A report without series renders a page that says there was nothing to plot.
std::string RenderDriftReportHtml(const DriftReport& report);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_REPORT_H_
