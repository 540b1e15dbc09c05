#include "vigil/drift/live_window.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace vigil::drift {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

absl::StatusOr<LiveWindow> LiveWindow::Create(LiveWindowConfig config,
                                              std::vector<size_t> cells_per_subject) {
  if (config.slide.count() <= 0) {
    return absl::InvalidArgumentError("window slide must be positive");
  }
  if (config.size.count() <= 0 || config.size.count() % config.slide.count() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("window size (", config.size.count(),
                                                   " s) must be a positive multiple of its slide (",
                                                   config.slide.count(), " s)"));
  }
  if (config.decay_half_life.count() < 0) {
    return absl::InvalidArgumentError("window decay half-life must not be negative");
  }
  if (config.sample_rows_per_pane == 0) {
    return absl::InvalidArgumentError("sample_rows_per_pane must be at least 1");
  }
  if (cells_per_subject.empty()) return absl::InvalidArgumentError("a window needs a subject");
  std::vector<size_t> offsets{0};
  for (size_t s = 0; s < cells_per_subject.size(); ++s) {
    if (cells_per_subject[s] == 0) {
      return absl::InvalidArgumentError(absl::StrCat("subject ", s, " has no cells"));
    }
    offsets.push_back(offsets.back() + cells_per_subject[s]);
  }
  return LiveWindow(config, std::move(offsets));
}

LiveWindow::LiveWindow(LiveWindowConfig config, std::vector<size_t> offsets)
    : config_(config),
      slide_us_(std::chrono::duration_cast<std::chrono::microseconds>(config.slide).count()),
      offsets_(std::move(offsets)),
      rng_(config.seed) {
  panes_.resize(static_cast<size_t>(config.size.count() / config.slide.count()));
  for (Pane& p : panes_) {
    p.counts.assign(offsets_.back(), 0.0);
    p.sample.reserve(config.sample_rows_per_pane * subjects());
  }
}

uint64_t LiveWindow::Next() {
  // splitmix64
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t LiveWindow::PaneOf(UtcTime t) const { return FloorDiv(ToUnixMicros(t), slide_us_); }

bool LiveWindow::Add(UtcTime t, absl::Span<const uint32_t> cells,
                     absl::Span<const double> values) {
  const int64_t index = PaneOf(t);
  const int64_t n = static_cast<int64_t>(panes_.size());
  newest_ = std::max(newest_, index);
  if (index <= newest_ - n) {
    ++late_;
    return false;
  }
  Pane& p = panes_[static_cast<size_t>(((index % n) + n) % n)];
  if (p.index != index) {
    p.index = index;
    p.rows = 0;
    p.sampled = 0;
    std::fill(p.counts.begin(), p.counts.end(), 0.0);
    p.sample.clear();
  }
  ++p.rows;
  const size_t k = subjects();
  for (size_t s = 0; s < k; ++s) p.counts[offsets_[s] + cells[s]] += 1;
  // Reservoir sampling of rows: each row of the pane kept with equal odds.
  if (p.sampled < config_.sample_rows_per_pane) {
    p.sample.insert(p.sample.end(), values.begin(), values.begin() + static_cast<ptrdiff_t>(k));
    ++p.sampled;
  } else {
    const uint64_t j = Next() % p.rows;
    if (j < config_.sample_rows_per_pane) {
      std::copy_n(values.begin(), k, p.sample.begin() + static_cast<ptrdiff_t>(j * k));
    }
  }
  return true;
}

double LiveWindow::WeightOf(int64_t pane, int64_t as_of) const {
  if (config_.decay_half_life.count() == 0) return 1.0;
  const double age_s = static_cast<double>(as_of - pane) * static_cast<double>(config_.slide.count());
  return std::exp2(-age_s / static_cast<double>(config_.decay_half_life.count()));
}

uint64_t LiveWindow::RowsAsOf(int64_t as_of) const {
  const int64_t n = static_cast<int64_t>(panes_.size());
  uint64_t rows = 0;
  for (const Pane& p : panes_) {
    if (p.index != INT64_MIN && p.index > as_of - n && p.index <= as_of) rows += p.rows;
  }
  return rows;
}

void LiveWindow::Sum(int64_t as_of, Totals& out) const {
  out.rows = 0;
  out.weight = 0;
  out.cells.assign(offsets_.back(), 0.0);
  const int64_t n = static_cast<int64_t>(panes_.size());
  double weight_sq = 0;
  for (const Pane& p : panes_) {
    if (p.index == INT64_MIN || p.index <= as_of - n || p.index > as_of) continue;
    const double w = WeightOf(p.index, as_of);
    out.rows += p.rows;
    out.weight += w * static_cast<double>(p.rows);
    weight_sq += w * w * static_cast<double>(p.rows);
    for (size_t c = 0; c < out.cells.size(); ++c) out.cells[c] += w * p.counts[c];
  }
  out.effective_rows = weight_sq > 0 ? out.weight * out.weight / weight_sq : 0;
}

LiveWindow::Snapshot LiveWindow::Take(size_t subject, int64_t as_of, bool with_sample) const {
  Snapshot s;
  const size_t begin = offsets_[subject], width = offsets_[subject + 1] - begin;
  s.cells.assign(width, 0.0);
  s.end = FromUnixMicros((as_of + 1) * slide_us_);
  const int64_t n = static_cast<int64_t>(panes_.size());
  double weight_sq = 0;
  const size_t k = subjects();
  for (const Pane& p : panes_) {
    if (p.index == INT64_MIN || p.index <= as_of - n || p.index > as_of) continue;
    const double w = WeightOf(p.index, as_of);
    s.rows += p.rows;
    s.weight += w * static_cast<double>(p.rows);
    weight_sq += w * w * static_cast<double>(p.rows);
    for (size_t c = 0; c < width; ++c) s.cells[c] += w * p.counts[begin + c];
    if (with_sample) {
      for (size_t r = 0; r < p.sampled; ++r) {
        const double v = p.sample[r * k + subject];
        if (!std::isnan(v)) s.sample.push_back(v);
      }
    }
  }
  s.effective_rows = weight_sq > 0 ? s.weight * s.weight / weight_sq : 0;
  std::sort(s.sample.begin(), s.sample.end());
  return s;
}

}  // namespace vigil::drift
