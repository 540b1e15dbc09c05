#include "vigil/drift/drift_monitor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/feature_schema.h"
#include "vigil/core/transaction.h"
#include "vigil/drift/two_sample.h"

namespace vigil::drift {
namespace {

// Piecewise linear through (0, 0), (x1, y1), (x2, y2), (x3, y3) and (x3 + (x3 - x2), 1).
double RawPresetSeverity(double score, const DriftConfig& c) {
  const double xs[] = {0, c.raw_l1, c.raw_l2, c.raw_l3, c.raw_l3 + (c.raw_l3 - c.raw_l2)};
  const double ys[] = {0, c.levels.l1, c.levels.l2, c.levels.l3, 1};
  if (!(score > 0)) return 0;
  for (int i = 1; i < 5; ++i) {
    if (score <= xs[i]) return ys[i - 1] + (ys[i] - ys[i - 1]) * (score - xs[i - 1]) / (xs[i] - xs[i - 1]);
  }
  return 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DriftMonitor>> DriftMonitor::Create(
    const ReferenceProfile& profile, const std::string& schema_version,
    const std::vector<std::string>& feature_names, DriftConfig config, DriftEventLog* events) {
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  // A profile of an older schema that this one extends monitors the columns it has; the others
  // are listed as not in the profile.
  if (!SchemaExtends(schema_version, profile.feature_schema_version())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the reference profile is of feature schema '", profile.feature_schema_version(),
        "' but the engine computes '", schema_version,
        "': profile the training data of the deployed model (tools/train.py)"));
  }
  const MeasuredNull* measured = config.measured_null.get();
  std::vector<const MeasuredNull::Window*> measured_windows(config.windows.size(), nullptr);
  if (measured != nullptr) {
    const auto mismatch = [](std::string_view what) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the measured null was measured with ", ToAbsl(what),
          ": measure it again with this configuration (vigil replay --drift-null-out)"));
    };
    if (!SchemaExtends(schema_version, measured->feature_schema_version)) {
      return mismatch(absl::StrCat("feature schema '", measured->feature_schema_version, "'"));
    }
    if (measured->weights.kl != config.weights.kl || measured->weights.js != config.weights.js ||
        measured->weights.psi != config.weights.psi || measured->pseudo_count != config.pseudo_count) {
      return mismatch("other score weights or smoothing");
    }
    for (size_t w = 0; w < config.windows.size(); ++w) {
      const DriftWindowSpec& spec = config.windows[w];
      for (const MeasuredNull::Window& mw : measured->windows) {
        if (mw.spec.name == spec.name && mw.spec.size == spec.size && mw.spec.slide == spec.slide &&
            mw.spec.decay_half_life == spec.decay_half_life) {
          measured_windows[w] = &mw;
        }
      }
      if (measured_windows[w] == nullptr) {
        return mismatch(absl::StrCat("no window '", spec.name, "' of ", spec.size.count(), " s every ",
                                     spec.slide.count(), " s"));
      }
    }
  }
  std::unique_ptr<DriftMonitor> m(new DriftMonitor(std::move(config), events));
  const DriftConfig& c = m->config_;
  m->width_ = feature_names.size();
  m->schema_version_ = schema_version;
  absl::MutexLock lock(&m->mu_);
  // Subjects whose reference cell probabilities agree within 5% each (constant features,
  // one-hot columns never set in training, decile-binned features without missing values)
  // have the same null for all purposes: simulate it once.
  std::map<std::vector<int64_t>, std::shared_ptr<NullCalibration>> nulls;
  const auto null_key = [&](const std::vector<double>& counts) {
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    const double k = static_cast<double>(counts.size());
    std::vector<int64_t> key;
    for (double count : counts) {
      const double q = (count + c.pseudo_count) / (total + k * c.pseudo_count);
      key.push_back(std::llround(std::log(q) / 0.05));
    }
    return key;
  };
  const auto add_subject = [&](const std::string& name, size_t column,
                               const FeatureReference& ref) {
    NullCalibrationOptions null;
    null.windows = c.null_windows;
    null.pseudo_count = c.pseudo_count;
    null.weights = c.weights;
    null.seed = c.seed * 1000003 + nulls.size();
    CellLayout cells(ref);
    std::shared_ptr<NullCalibration>& shared = nulls[null_key(cells.reference_counts())];
    if (shared == nullptr) {
      shared = std::make_shared<NullCalibration>(cells.reference_counts(), null);
    }
    m->subjects_.push_back(Subject{name, column, &ref, std::move(cells), shared,
                                   {}, {}, {}, {}, EscalationMatcher(&c.escalation), {}, {}, {}, {}, {}});
    Subject& s = m->subjects_.back();
    for (const DriftWindowSpec& w : c.windows) {
      s.trackers.emplace_back(&c.levels, c.min_dwell);
      s.dispersion.push_back(ref.DispersionAt(static_cast<double>(w.size.count())));
      s.recorded.emplace_back();
      s.measured.emplace_back();
      const MeasuredNull::Window* mw = measured_windows[s.measured.size() - 1];
      if (mw != nullptr) {
        const auto it = mw->scores.find(name);
        // A subject the training stream rarely saw in a full window has no usable measure.
        if (it != mw->scores.end() && it->second.size() >= 20) {
          const double spread = it->second.back() - it->second.front();
          s.measured.back().emplace(it->second, 0.1, spread > 0 ? spread / 10 : 1e-3);
        }
      }
      DriftWindowState state;
      state.window = w.name;
      s.last.push_back(state);
      s.history.push_back(DriftSeries{name, w.name, {}});
      s.stride.push_back(1);
      s.pending_count.push_back(0);
      s.pending.push_back(DriftPoint{});
    }
  };
  for (size_t i = 0; i < feature_names.size(); ++i) {
    const std::string& name = feature_names[i];
    if (std::find(c.exclude.begin(), c.exclude.end(), name) != c.exclude.end()) {
      m->unmonitored_.push_back(absl::StrCat(name, " (excluded by configuration)"));
      continue;
    }
    const FeatureReference* ref = profile.Find(name);
    if (ref == nullptr) {
      m->unmonitored_.push_back(absl::StrCat(name, " (not in the reference profile)"));
      continue;
    }
    add_subject(name, i, *ref);
  }
  m->features_monitored_ = m->subjects_.size();
  if (c.monitor_score && profile.score().has_value()) {
    add_subject(std::string(kScoreSubject), m->width_, *profile.score());
  }
  if (m->subjects_.empty()) {
    return absl::InvalidArgumentError(
        "no feature to monitor: every feature is excluded or missing from the reference profile");
  }
  std::vector<size_t> cells_per_subject;
  for (const Subject& s : m->subjects_) cells_per_subject.push_back(s.cells.size());
  for (const DriftWindowSpec& w : c.windows) {
    absl::StatusOr<LiveWindow> live = LiveWindow::Create(
        {w.size, w.slide, w.decay_half_life, c.sample_rows_per_pane, c.seed + m->windows_.size()},
        cells_per_subject);
    if (!live.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("drift.windows.", w.name, ": ", live.status().message()));
    }
    const double alpha = static_cast<double>(w.slide.count()) /
                         static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                                 c.false_alarm_period)
                                                 .count()) /
                         static_cast<double>(c.windows.size());
    const SourceCaps caps{c.account_cap_rows, c.account_cap_share, c.client_cap_share};
    m->windows_.push_back(Window{w, *std::move(live), alpha,
                                 SourceLedger(static_cast<size_t>(w.size / w.slide), caps)});
  }
  m->warm_since_ = c.warm_since;
  m->row_cells_.resize(m->subjects_.size());
  m->row_values_.resize(m->subjects_.size());
  return m;
}

absl::Status DriftMonitor::Observe(UtcTime t, absl::Span<const double> features, double score,
                                   const RowSource& source) {
  absl::ReleasableMutexLock lock(&mu_);
  absl::Status status = ObserveLocked(t, features, score, source);
  status.Update(StoreEvents(lock));
  return status;
}

absl::Status DriftMonitor::ObserveBatch(absl::Span<const UtcTime> times,
                                        absl::Span<const double> features,
                                        absl::Span<const double> scores,
                                        absl::Span<const RowSource> sources) {
  if (features.size() != times.size() * width_ || scores.size() != times.size() ||
      (!sources.empty() && sources.size() != times.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("drift batch: ", times.size(), " rows need ", times.size() * width_,
                     " feature values and ", times.size(), " scores, got ", features.size(),
                     " and ", scores.size(), " (and as many sources, or none), got ",
                     sources.size(), " sources"));
  }
  absl::ReleasableMutexLock lock(&mu_);
  absl::Status status;
  for (size_t r = 0; r < times.size(); ++r) {
    status.Update(ObserveLocked(times[r], features.subspan(r * width_, width_), scores[r],
                                sources.empty() ? RowSource{} : sources[r]));
  }
  status.Update(StoreEvents(lock));
  return status;
}

absl::Status DriftMonitor::ObserveLocked(UtcTime t, absl::Span<const double> features,
                                         double score, const RowSource& source) {
  if (features.size() != width_) {
    return absl::InvalidArgumentError(absl::StrCat("drift: a row of ", features.size(),
                                                   " features, the schema has ", width_));
  }
  if (!warm_since_.has_value()) warm_since_ = t;
  for (size_t s = 0; s < subjects_.size(); ++s) {
    const Subject& subject = subjects_[s];
    const double v = subject.column < width_ ? features[subject.column] : score;
    row_values_[s] = v;
    row_cells_[s] = subject.cells.Cell(v);
  }
  for (size_t w = 0; w < windows_.size(); ++w) {
    LiveWindow& live = windows_[w].live;
    const int64_t pane = live.PaneOf(t);
    const int64_t newest = live.newest_pane();
    if (newest != INT64_MIN && pane > newest) {
      // Panes newest .. pane - 1 are complete: evaluate the window as of each boundary, as a
      // live monitor would have, while it still holds rows.
      const int64_t last = std::min(pane - 1, newest + static_cast<int64_t>(live.panes()) - 1);
      for (int64_t b = newest; b <= last; ++b) {
        windows_[w].ledger.AdvanceTo(b);
        EvaluateLocked(w, b);
      }
    }
    // A row over its account's or client's cap is left out of this window (the ledger counts
    // it); a late one goes to the live window, which counts it late.
    if (windows_[w].ledger.Admit(pane, source) == SourceLedger::Admission::kCapped) continue;
    live.Add(t, row_cells_, row_values_);
  }
  ++rows_;
  return absl::OkStatus();
}

absl::Status DriftMonitor::Flush() {
  absl::ReleasableMutexLock lock(&mu_);
  for (size_t w = 0; w < windows_.size(); ++w) {
    const int64_t newest = windows_[w].live.newest_pane();
    if (newest != INT64_MIN) EvaluateLocked(w, newest);
  }
  return StoreEvents(lock);
}

absl::StatusOr<DriftEvent> DriftMonitor::Release(std::string_view actor, std::string_view reason) {
  absl::ReleasableMutexLock lock(&mu_);
  if (!frozen_.load()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the model is not frozen (drift level ", ToAbsl(DriftLevelName(monitor_level_)),
        "): nothing to release"));
  }
  frozen_.store(false, std::memory_order_release);
  frozen_seconds_ += std::chrono::duration<double>(last_end_ - frozen_since_).count();
  released_by_operator_ = true;
  DriftEvent e;
  e.time = std::max(last_end_, frozen_since_);
  e.kind = std::string(kFreezeReleased);
  e.subject = std::string(kMonitorSubject);
  e.from = monitor_level_;
  e.to = monitor_level_;
  e.detail = absl::StrCat("released by an operator (", ToAbsl(actor.empty() ? "unknown" : actor),
                          ")", reason.empty() ? "" : ": ", ToAbsl(reason),
                          "; the model decides again until the monitor leaves L3 and reaches it "
                          "anew");
  Emit(e);
  VIGIL_RETURN_IF_ERROR(StoreEvents(lock, &e));
  return e;
}

double DriftMonitor::Severity(double score, double p, const Window& w) const {
  if (config_.calibration == DriftCalibration::kRawPreset) return RawPresetSeverity(score, config_);
  const double severity = config_.levels.l2 * std::log(p) / std::log(w.alpha);
  return std::clamp(severity, 0.0, 1.0);
}

bool DriftMonitor::Evaluable(size_t w, int64_t as_of, UtcTime end) {
  Window& window = windows_[w];
  if (window.live.RowsAsOf(as_of) < config_.min_rows) return false;
  // A fresh feature state describes every account as new: nothing to compare with a
  // reference taken over a warmed-up stream until its longest window has filled.
  if (warm_since_.has_value() && end < *warm_since_ + config_.warmup) {
    ++skipped_warmup_;
    return false;
  }
  if (window.ledger.distinct_accounts() < config_.min_accounts ||
      window.ledger.distinct_clients() < config_.min_clients) {
    ++skipped_sources_;
    return false;
  }
  return true;
}

void DriftMonitor::EvaluateLocked(size_t w, int64_t as_of) {
  Window& window = windows_[w];
  const UtcTime end = FromUnixMicros(
      (as_of + 1) * std::chrono::duration_cast<std::chrono::microseconds>(window.spec.slide).count());
  if (!Evaluable(w, as_of, end)) return;
  ++evaluations_;
  window.live.Sum(as_of, totals_);
  for (size_t i = 0; i < subjects_.size(); ++i) {
    Subject& s = subjects_[i];
    DriftWindowState& state = s.last[w];
    state.evaluated = true;
    state.end = end;
    state.rows = totals_.rows;
    state.accounts = window.ledger.distinct_accounts();
    state.clients = window.ledger.distinct_clients();
    absl::Span<const double> cells =
        absl::MakeConstSpan(totals_.cells).subspan(window.live.offset(i), s.cells.size());
    double effective_rows = totals_.effective_rows;
    if (s.column == width_) {
      // A missing score is a decision no model scored (a timeout, an open breaker, rules-only
      // deployments), not a change in the traffic: the score is judged on the scored rows.
      score_cells_.assign(cells.begin(), cells.end());
      const double all = std::accumulate(score_cells_.begin(), score_cells_.end(), 0.0);
      const double scored = all - score_cells_[0];
      score_cells_[0] = 0;
      if (!(scored > 0)) continue;  // nothing scored in this window: the score's levels hold
      effective_rows *= scored / all;
      cells = score_cells_;
    }
    state.effective_rows = effective_rows;
    state.divergences = s.null->Measure(cells, effective_rows);
    state.score = config_.weights.Score(state.divergences);
    state.dispersion = s.dispersion[w];
    state.p_no_drift = config_.calibration == DriftCalibration::kNull
                           ? s.null->Sf(state.score, effective_rows / s.dispersion[w])
                           : std::numeric_limits<double>::quiet_NaN();
    if (config_.calibration == DriftCalibration::kNull && s.measured[w].has_value()) {
      state.p_no_drift = std::max(state.p_no_drift, s.measured[w]->Sf(state.score));
    }
    if (config_.record_null) s.recorded[w].push_back(state.score);
    state.severity = Severity(state.score, state.p_no_drift, window);
    const auto level_event = [&](const LevelChange& change, std::string detail) {
      state.level = change.to;
      s.worst = std::max(s.worst, change.to);
      state.level_since = end;
      DriftEvent e;
      e.time = end;
      e.kind = std::string(kLevelChange);
      e.subject = s.name;
      e.window = window.spec.name;
      e.from = change.from;
      e.to = change.to;
      e.severity = state.severity;
      e.score = state.score;
      e.detail = std::move(detail);
      Emit(std::move(e));
    };
    if (const auto change = s.trackers[w].Observe(state.severity, end)) {
      level_event(*change, absl::StrCat(totals_.rows, " rows from ", state.accounts,
                                        " accounts and ", state.clients, " clients, severity ",
                                        state.severity, ", p(no drift) ", state.p_no_drift));
    }
    if (s.escalation.Observe(end, state.severity)) {
      DriftEvent e;
      e.time = end;
      e.kind = std::string(kCritical);
      e.subject = s.name;
      e.window = window.spec.name;
      e.from = s.trackers[w].level();
      e.to = DriftLevel::kL3;
      e.severity = state.severity;
      e.score = state.score;
      e.detail = "severity rose through the escalation pattern";
      Emit(std::move(e));
      if (const auto change = s.trackers[w].Raise(DriftLevel::kL3, end)) {
        level_event(*change, "raised by a critical escalation");
      }
    }
    Remember(s, w, DriftPoint{end, state.score, state.severity, s.trackers[w].level()});
  }
  last_end_ = std::max(last_end_, end);
  UpdateMonitorLevel(end);
}

void DriftMonitor::Remember(Subject& s, size_t w, const DriftPoint& point) {
  if (config_.history_points == 0) return;
  DriftPoint& pending = s.pending[w];
  if (s.pending_count[w] == 0 || point.severity > pending.severity) {
    const DriftLevel level = s.pending_count[w] == 0 ? point.level : std::max(pending.level, point.level);
    pending = point;
    pending.level = level;
  } else {
    pending.level = std::max(pending.level, point.level);
  }
  if (++s.pending_count[w] < s.stride[w]) return;
  std::vector<DriftPoint>& points = s.history[w].points;
  points.push_back(pending);
  s.pending_count[w] = 0;
  if (points.size() >= config_.history_points) {
    // Merge neighbours, keeping the higher severity: the history halves, peaks survive.
    std::vector<DriftPoint> merged;
    merged.reserve(points.size() / 2 + 1);
    for (size_t i = 0; i < points.size(); i += 2) {
      DriftPoint p = points[i];
      if (i + 1 < points.size()) {
        const DriftPoint& q = points[i + 1];
        const DriftLevel level = std::max(p.level, q.level);
        if (q.severity > p.severity) p = q;
        p.level = level;
      }
      merged.push_back(p);
    }
    points = std::move(merged);
    s.stride[w] *= 2;
  }
}

void DriftMonitor::Emit(DriftEvent event) {
  ++events_emitted_;
  ++events_by_kind_[event.kind];
  if (events_ != nullptr || listener_) unstored_.push_back(std::move(event));
}

absl::Status DriftMonitor::StoreEvents(absl::ReleasableMutexLock& lock, DriftEvent* last) {
  // The log's store writes synchronously: never while holding mu_, which State (GET
  // /v1/drift, /metrics) takes. store_mu_ is taken before mu_ is let go, so events are stored
  // in the order they happened whichever thread emitted them.
  std::vector<DriftEvent> events;
  events.swap(unstored_);
  absl::MutexLock store(&store_mu_);
  lock.Release();
  absl::Status status;
  for (DriftEvent& e : events) {
    if (events_ != nullptr) {
      absl::StatusOr<DriftEvent> stored = events_->Append(e);
      if (!stored.ok()) {
        status.Update(stored.status());
      } else {
        e = *std::move(stored);
      }
    }
    if (listener_) listener_(e);
  }
  if (last != nullptr && !events.empty()) *last = events.back();
  return status;
}

void DriftMonitor::UpdateMonitorLevel(UtcTime t) {
  DriftLevel level = DriftLevel::kNone;
  for (const Subject& s : subjects_) {
    for (const LevelTracker& tracker : s.trackers) level = std::max(level, tracker.level());
  }
  if (level == monitor_level_) return;
  const DriftLevel previous = monitor_level_;
  monitor_level_ = level;
  worst_level_ = std::max(worst_level_, level);
  level_.store(level, std::memory_order_release);
  // The subjects that carry the level, most severe first (at most 8 named).
  std::vector<std::pair<double, std::string>> drivers;
  for (const Subject& s : subjects_) {
    for (size_t w = 0; w < s.trackers.size(); ++w) {
      if (s.trackers[w].level() >= std::max(level, DriftLevel::kL1)) {
        drivers.emplace_back(s.last[w].severity,
                             absl::StrCat(s.name, " (", windows_[w].spec.name, " ",
                                          ToAbsl(DriftLevelName(s.trackers[w].level())), ")"));
      }
    }
  }
  std::sort(drivers.begin(), drivers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (size_t i = 0; i < drivers.size() && i < 8; ++i) names.push_back(drivers[i].second);
  const std::string detail =
      names.empty() ? "no subject above L1"
                    : absl::StrCat(absl::StrJoin(names, ", "),
                                   drivers.size() > 8 ? absl::StrCat(" and ", drivers.size() - 8, " more") : "");
  const auto event = [&](std::string_view kind) {
    DriftEvent e;
    e.time = t;
    e.kind = std::string(kind);
    e.subject = std::string(kMonitorSubject);
    e.from = previous;
    e.to = level;
    e.severity = drivers.empty() ? 0 : drivers.front().first;
    e.detail = detail;
    return e;
  };
  Emit(event(kLevelChange));
  if (previous < DriftLevel::kL2 && level >= DriftLevel::kL2) Emit(event(kRetrainRequested));
  if (config_.freeze_on_l3 && level == DriftLevel::kL3 && previous < DriftLevel::kL3) {
    released_by_operator_ = false;
    frozen_since_ = t;
    frozen_.store(true, std::memory_order_release);
    Emit(event(kFreeze));
    Emit(event(kTicketOpened));
  }
  if (previous == DriftLevel::kL3 && level < DriftLevel::kL3) released_by_operator_ = false;
  if (previous == DriftLevel::kL3 && level < DriftLevel::kL3 && frozen_.load()) {
    frozen_.store(false, std::memory_order_release);
    frozen_seconds_ += std::chrono::duration<double>(t - frozen_since_).count();
    Emit(event(kFreezeReleased));
  }
}

DriftState DriftMonitor::State(bool exact) const {
  // The exact statistics are computed after the lock is released, on copies of the samples:
  // a reader must not hold up the feeding thread.
  struct Exact {
    size_t subject, window;  // in state.subjects
    const FeatureReference* reference;
    std::vector<double> sample;  // sorted
  };
  std::vector<Exact> exacts;
  DriftState state;
  absl::ReleasableMutexLock lock(&mu_);
  state.level = monitor_level_;
  state.worst_level = worst_level_;
  state.frozen = frozen_.load();
  state.frozen_since = frozen_since_;
  state.frozen_seconds =
      frozen_seconds_ +
      (state.frozen ? std::chrono::duration<double>(last_end_ - frozen_since_).count() : 0.0);
  state.events_by_kind = events_by_kind_;
  state.rows = rows_;
  state.skipped_warmup = skipped_warmup_;
  state.skipped_sources = skipped_sources_;
  state.released_by_operator = released_by_operator_;
  if (warm_since_.has_value()) state.warm_from = *warm_since_ + config_.warmup;
  state.evaluations = evaluations_;
  state.events = events_emitted_;
  state.calibration = config_.calibration == DriftCalibration::kRawPreset ? "raw-preset"
                      : config_.measured_null != nullptr           ? "null+measured"
                                                                   : "null";
  state.unmonitored = unmonitored_;
  size_t drifted = 0;
  for (const Window& w : windows_) {
    state.late += w.live.late();
    state.capped += w.ledger.capped();
  }
  for (size_t i = 0; i < subjects_.size(); ++i) {
    const Subject& s = subjects_[i];
    DriftSubjectState subject;
    subject.name = s.name;
    subject.worst = s.worst;
    for (size_t w = 0; w < windows_.size(); ++w) {
      DriftWindowState ws = s.last[w];
      ws.level = s.trackers[w].level();
      subject.level = std::max(subject.level, ws.level);
      const LiveWindow& live = windows_[w].live;
      if (exact && s.reference->sample.has_value() && live.newest_pane() != INT64_MIN) {
        LiveWindow::Snapshot snap = live.Take(i, live.newest_pane(), /*with_sample=*/true);
        ws.sample_size = snap.sample.size();
        if (!snap.sample.empty()) exacts.push_back({i, w, s.reference, std::move(snap.sample)});
      }
      subject.windows.push_back(std::move(ws));
    }
    if (i < features_monitored_ && subject.level >= DriftLevel::kL2) ++drifted;
    state.subjects.push_back(std::move(subject));
  }
  state.drifted_share = features_monitored_ == 0 ? 0
                                                 : static_cast<double>(drifted) /
                                                       static_cast<double>(features_monitored_);
  lock.Release();
  for (const Exact& e : exacts) {
    const ReferenceSample& ref = *e.reference->sample;
    DriftWindowState& ws = state.subjects[e.subject].windows[e.window];
    const double d = KsStatistic(ref, e.sample);
    ws.ks = d;
    ws.ks_pvalue = KsPValue(ref.size(), e.sample.size(), d);
    ws.wasserstein = Wasserstein1(ref, e.sample);
    if (e.reference->stddev > 0) ws.wasserstein_norm = *ws.wasserstein / e.reference->stddev;
  }
  return state;
}

std::vector<DriftSeries> DriftMonitor::History() const {
  absl::MutexLock lock(&mu_);
  std::vector<DriftSeries> out;
  for (const Subject& s : subjects_) {
    for (size_t w = 0; w < s.history.size(); ++w) {
      DriftSeries series = s.history[w];
      if (s.pending_count[w] > 0) series.points.push_back(s.pending[w]);
      out.push_back(std::move(series));
    }
  }
  return out;
}

MeasuredNull DriftMonitor::RecordedNull() const {
  absl::MutexLock lock(&mu_);
  MeasuredNull out;
  out.feature_schema_version = schema_version_;
  out.weights = config_.weights;
  out.pseudo_count = config_.pseudo_count;
  for (size_t w = 0; w < windows_.size(); ++w) {
    MeasuredNull::Window window;
    window.spec = windows_[w].spec;
    for (const Subject& s : subjects_) {
      window.evaluations = std::max<uint64_t>(window.evaluations, s.recorded[w].size());
      if (!s.recorded[w].empty()) window.scores[s.name] = MeasuredNull::Compress(s.recorded[w]);
    }
    out.windows.push_back(std::move(window));
  }
  return out;
}

std::string DriftStateToJson(const DriftState& state) {
  const auto time = [](UtcTime t) -> nlohmann::json {
    if (ToUnixMicros(t) == 0) return nullptr;
    return FormatUtc(t);
  };
  const auto optional = [](const std::optional<double>& v) -> nlohmann::json {
    if (!v.has_value()) return nullptr;
    return *v;
  };
  nlohmann::json root = nlohmann::json::object();
  root["level"] = std::string(DriftLevelName(state.level));
  root["frozen"] = state.frozen;
  root["frozen_since"] = state.frozen ? time(state.frozen_since) : nlohmann::json(nullptr);
  root["drifted_share"] = state.drifted_share;
  root["rows"] = state.rows;
  root["late"] = state.late;
  root["evaluations"] = state.evaluations;
  root["events"] = state.events;
  root["calibration"] = state.calibration;
  root["capped_rows"] = state.capped;
  root["skipped_warmup"] = state.skipped_warmup;
  root["skipped_sources"] = state.skipped_sources;
  root["warm_from"] = time(state.warm_from);
  root["released_by_operator"] = state.released_by_operator;
  nlohmann::json subjects = nlohmann::json::array();
  for (const DriftSubjectState& s : state.subjects) {
    nlohmann::json windows = nlohmann::json::array();
    for (const DriftWindowState& w : s.windows) {
      windows.push_back({{"window", w.window},
                         {"evaluated", w.evaluated},
                         {"end", time(w.end)},
                         {"rows", w.rows},
                         {"effective_rows", w.effective_rows},
                         {"kl", w.divergences.kl},
                         {"js", w.divergences.js},
                         {"psi", w.divergences.psi},
                         {"score", w.score},
                         {"dispersion", w.dispersion},
                         {"p_no_drift", w.p_no_drift},
                         {"severity", w.severity},
                         {"level", std::string(DriftLevelName(w.level))},
                         {"since", time(w.level_since)},
                         {"ks", optional(w.ks)},
                         {"ks_pvalue", optional(w.ks_pvalue)},
                         {"wasserstein", optional(w.wasserstein)},
                         {"wasserstein_norm", optional(w.wasserstein_norm)},
                         {"sample_size", w.sample_size},
                         {"accounts", w.accounts},
                         {"clients", w.clients}});
    }
    subjects.push_back({{"name", s.name},
                        {"level", std::string(DriftLevelName(s.level))},
                        {"windows", std::move(windows)}});
  }
  root["subjects"] = std::move(subjects);
  root["unmonitored"] = state.unmonitored;
  return root.dump();
}

}  // namespace vigil::drift
