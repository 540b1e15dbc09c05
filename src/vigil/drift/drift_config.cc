#include "vigil/drift/drift_config.h"

#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace vigil::drift {

absl::Status DriftConfig::Validate() const {
  if (windows.empty()) return absl::InvalidArgumentError("drift.windows: at least one window");
  std::set<std::string> names;
  for (const DriftWindowSpec& w : windows) {
    if (w.name.empty()) return absl::InvalidArgumentError("drift.windows: a window needs a name");
    if (!names.insert(w.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("drift.windows: '", w.name, "' twice"));
    }
    if (w.slide.count() <= 0 || w.size.count() <= 0 || w.size.count() % w.slide.count() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("drift.windows.", w.name, ": size (", w.size.count(),
                       " s) must be a positive multiple of slide (", w.slide.count(), " s)"));
    }
    if (w.size.count() / w.slide.count() > 10'000) {
      return absl::InvalidArgumentError(
          absl::StrCat("drift.windows.", w.name, ": more than 10,000 panes (size / slide)"));
    }
    if (w.decay_half_life.count() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("drift.windows.", w.name, ": decay_half_life must not be negative"));
    }
  }
  if (absl::Status s = weights.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("drift.weights: ", s.message()));
  }
  if (!(pseudo_count > 0 && std::isfinite(pseudo_count))) {
    return absl::InvalidArgumentError("drift.pseudo_count must be positive");
  }
  if (false_alarm_period.count() <= 0) {
    return absl::InvalidArgumentError("drift.false_alarm_period must be positive");
  }
  if (null_windows < 100 || null_windows > 1'000'000) {
    return absl::InvalidArgumentError("drift.null_windows must be in [100, 1000000]");
  }
  if (min_rows < 1) return absl::InvalidArgumentError("drift.min_rows must be at least 1");
  if (absl::Status s = levels.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("drift.", s.message()));
  }
  if (!(raw_l1 > 0 && raw_l1 < raw_l2 && raw_l2 < raw_l3)) {
    return absl::InvalidArgumentError("drift.raw_preset: need 0 < l1 < l2 < l3");
  }
  if (absl::Status s = escalation.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("drift.", s.message()));
  }
  if (sample_rows_per_pane < 1 || sample_rows_per_pane > 100'000) {
    return absl::InvalidArgumentError("drift.sample_rows_per_pane must be in [1, 100000]");
  }
  if (account_cap_rows < 1) {
    return absl::InvalidArgumentError("drift.account_cap_rows must be at least 1");
  }
  if (!(account_cap_share >= 0 && account_cap_share <= 1)) {
    return absl::InvalidArgumentError("drift.account_cap_share must be in [0, 1]");
  }
  if (!(client_cap_share > 0 && client_cap_share <= 1)) {
    return absl::InvalidArgumentError("drift.client_cap_share must be in (0, 1]");
  }
  if (min_accounts < 1) return absl::InvalidArgumentError("drift.min_accounts must be at least 1");
  if (min_clients < 1) return absl::InvalidArgumentError("drift.min_clients must be at least 1");
  if (min_dwell.count() < 0) {
    return absl::InvalidArgumentError("drift.min_dwell must not be negative");
  }
  if (warmup.count() < 0) return absl::InvalidArgumentError("drift.warmup must not be negative");
  return absl::OkStatus();
}

absl::StatusOr<DriftCalibration> ParseDriftCalibration(std::string_view text) {
  if (text == "null") return DriftCalibration::kNull;
  if (text == "raw-preset") return DriftCalibration::kRawPreset;
  return absl::InvalidArgumentError(absl::StrCat("drift.calibration: unknown calibration '",
                                                 absl::string_view(text.data(), text.size()),
                                                 "' (null or raw-preset)"));
}

absl::Status ParseDriftWindow(std::string_view text, std::string_view key,
                              DriftWindowSpec* window) {
  const absl::string_view k(key.data(), key.size());
  const absl::string_view t(text.data(), text.size());
  const size_t slash = t.find('/');
  int64_t size = 0;
  int64_t slide = 0;
  if (slash == absl::string_view::npos || !absl::SimpleAtoi(t.substr(0, slash), &size) ||
      !absl::SimpleAtoi(t.substr(slash + 1), &slide)) {
    return absl::InvalidArgumentError(absl::StrCat(
        k, ": '", t, "' is not SIZE/SLIDE in whole seconds (e.g. 60/10: 60 s sliding by 10 s)"));
  }
  constexpr int64_t kWeek = 7 * 24 * 3600;
  if (slide < 1 || size < slide || size > kWeek || size % slide != 0 || size / slide > 10'000) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, ": '", t, "': SIZE must be a multiple of SLIDE >= 1 s, at most 7 days ",
                     "and at most 10000 slides"));
  }
  window->size = std::chrono::seconds(size);
  window->slide = std::chrono::seconds(slide);
  return absl::OkStatus();
}

}  // namespace vigil::drift
