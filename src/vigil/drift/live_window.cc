#include "vigil/drift/live_window.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace vigil::drift {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

absl::StatusOr<LiveWindow> LiveWindow::Create(LiveWindowConfig config, const ReferenceBins& bins) {
  if (config.slide.count() <= 0) {
    return absl::InvalidArgumentError("window slide must be positive");
  }
  if (config.size.count() <= 0 || config.size.count() % config.slide.count() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("window size (", config.size.count(),
                                                   " s) must be a positive multiple of its slide (",
                                                   config.slide.count(), " s)"));
  }
  if (config.sample_per_pane == 0) {
    return absl::InvalidArgumentError("sample_per_pane must be at least 1");
  }
  return LiveWindow(config, bins);
}

LiveWindow::LiveWindow(LiveWindowConfig config, const ReferenceBins& bins)
    : config_(config), bins_(&bins), rng_(config.seed) {
  panes_.resize(static_cast<size_t>(config.size.count() / config.slide.count()));
  for (Pane& p : panes_) p.bins.assign(bins.size(), 0.0);
}

uint64_t LiveWindow::Next() {
  // splitmix64
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void LiveWindow::Add(UtcTime t, double value) {
  const int64_t slide_us = std::chrono::duration_cast<std::chrono::microseconds>(config_.slide).count();
  const int64_t index = FloorDiv(ToUnixMicros(t), slide_us);
  const int64_t panes = static_cast<int64_t>(panes_.size());
  newest_ = std::max(newest_, index);
  if (index <= newest_ - panes) {
    ++late_;
    return;
  }
  Pane& p = panes_[static_cast<size_t>(((index % panes) + panes) % panes)];
  if (p.index != index) {
    p.index = index;
    p.present = p.missing = p.seen = 0;
    std::fill(p.bins.begin(), p.bins.end(), 0.0);
    p.sample.clear();
  }
  if (std::isnan(value)) {
    ++p.missing;
    return;
  }
  ++p.present;
  p.bins[bins_->Bin(value)] += 1;
  ++p.seen;
  if (p.sample.size() < config_.sample_per_pane) {
    p.sample.push_back(value);
  } else {
    const uint64_t j = Next() % p.seen;  // reservoir sampling: each value kept with equal odds
    if (j < config_.sample_per_pane) p.sample[j] = value;
  }
}

LiveWindow::Snapshot LiveWindow::Take() const {
  Snapshot s;
  s.bin_counts.assign(bins_->size(), 0.0);
  if (newest_ == INT64_MIN) return s;
  const int64_t slide_us = std::chrono::duration_cast<std::chrono::microseconds>(config_.slide).count();
  s.end = FromUnixMicros((newest_ + 1) * slide_us);
  const int64_t panes = static_cast<int64_t>(panes_.size());
  for (const Pane& p : panes_) {
    if (p.index == INT64_MIN || p.index <= newest_ - panes) continue;  // empty or expired
    s.present += p.present;
    s.missing += p.missing;
    for (size_t b = 0; b < p.bins.size(); ++b) s.bin_counts[b] += p.bins[b];
    s.sample.insert(s.sample.end(), p.sample.begin(), p.sample.end());
  }
  std::sort(s.sample.begin(), s.sample.end());
  return s;
}

}  // namespace vigil::drift
