#include "vigil/drift/null_calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace vigil::drift {
namespace {

constexpr int kMinGrid = 6;  // n = 8

int64_t GridRows(int grid) { return std::llround(std::exp2(grid / 2.0)); }

// splitmix64 as a UniformRandomBitGenerator: the simulations draw millions of numbers, and
// mt19937_64's state refills cost more than the binomials they feed.
struct SplitMix64 {
  using result_type = uint64_t;
  uint64_t state;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }
  uint64_t operator()() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

}  // namespace

absl::Status DriftScoreWeights::Validate() const {
  for (double w : {kl, js, psi}) {
    if (!std::isfinite(w) || w < 0) {
      return absl::InvalidArgumentError("drift score weights must be finite and not negative");
    }
  }
  if (kl + js + psi <= 0) {
    return absl::InvalidArgumentError("drift score weights must not all be 0");
  }
  return absl::OkStatus();
}

NullCalibration::NullCalibration(std::vector<double> reference_counts,
                                 NullCalibrationOptions options)
    : reference_counts_(std::move(reference_counts)), options_(options) {
  const double total = std::accumulate(reference_counts_.begin(), reference_counts_.end(), 0.0);
  const double k = static_cast<double>(reference_counts_.size());
  for (double c : reference_counts_) {
    probabilities_.push_back((c + options_.pseudo_count) / (total + k * options_.pseudo_count));
    log_probabilities_.push_back(std::log(probabilities_.back()));
  }
  // Vose's construction of the alias table: columns of height k·p; each short column is
  // topped up from a tall one, which becomes its alias.
  const size_t cells = probabilities_.size();
  keep_.assign(cells, UINT32_MAX);
  alias_.resize(cells);
  std::iota(alias_.begin(), alias_.end(), 0u);
  std::vector<double> height(cells);
  std::vector<uint32_t> small, large;
  for (size_t c = 0; c < cells; ++c) {
    height[c] = probabilities_[c] * k;
    (height[c] < 1 ? small : large).push_back(static_cast<uint32_t>(c));
  }
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    keep_[s] = static_cast<uint32_t>(std::min(height[s] * 4294967296.0, 4294967295.0));
    alias_[s] = l;
    height[l] = (height[l] + height[s]) - 1;
    if (height[l] < 1) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left is 1 up to rounding: kept whole (alias_ is the column itself).
}

Divergences NullCalibration::Measure(absl::Span<const double> cells,
                                     double effective_rows) const {
  // BinnedDivergences with the reference's smoothed probabilities and their logarithms
  // computed once: two logarithms per cell instead of three, no allocation.
  double total = 0;
  for (double c : cells) total += c;
  if (total <= 0) return {};
  const double scale = effective_rows / total;
  const double a = options_.pseudo_count;
  const double norm = effective_rows + static_cast<double>(cells.size()) * a;
  Divergences d;
  double js = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    const double p = probabilities_[i];
    const double q = (cells[i] * scale + a) / norm;
    const double log_q = std::log(q);
    const double log_ratio = log_q - log_probabilities_[i];
    d.kl += q * log_ratio;
    d.psi += (q - p) * log_ratio;
    const double log_mid = std::log(0.5 * (p + q));
    js += p * (log_probabilities_[i] - log_mid) + q * (log_q - log_mid);
  }
  d.js = std::sqrt(std::max(0.0, js / 2));
  return d;
}

template <typename Rng>
void NullCalibration::DrawWindow(int64_t n, Rng& rng, std::vector<uint32_t>& counts) const {
  std::fill(counts.begin(), counts.end(), 0u);
  const size_t cells = counts.size();
  if (n <= kCategoricalMaxRows && cells <= kMaxAliasCells) {
    // Two rows per 64 random bits. Of 32 bits x, x·k = column · 2^32 + coin: the column is
    // uniform, and the coin uniform within it in steps of k / 2^32 (fine enough for a cell of
    // a reference of millions). Alternate rows count into two arrays, so that a run of rows in
    // one cell does not wait on its own increments.
    const uint64_t k = cells;
    std::array<uint32_t, 2 * kMaxAliasCells> twice{};
    uint32_t* const even = twice.data();
    uint32_t* const odd = twice.data() + cells;
    const auto draw = [&](uint32_t x) {
      const uint64_t scaled = static_cast<uint64_t>(x) * k;
      const auto column = static_cast<size_t>(scaled >> 32);
      return static_cast<uint32_t>(scaled) < keep_[column] ? column : alias_[column];
    };
    int64_t r = 0;
    for (; r + 1 < n; r += 2) {
      const uint64_t bits = rng();
      ++even[draw(static_cast<uint32_t>(bits))];
      ++odd[draw(static_cast<uint32_t>(bits >> 32))];
    }
    if (r < n) ++even[draw(static_cast<uint32_t>(rng()))];
    for (size_t c = 0; c < cells; ++c) counts[c] = even[c] + odd[c];
    return;
  }
  // Multinomial(n, p) as conditional binomials.
  int64_t left = n;
  double mass = 1.0;
  for (size_t c = 0; c < cells && left > 0; ++c) {
    if (c + 1 == cells) {
      counts[c] = static_cast<uint32_t>(left);
      break;
    }
    const double p = std::clamp(probabilities_[c] / mass, 0.0, 1.0);
    const int64_t x = std::binomial_distribution<int64_t>(left, p)(rng);
    counts[c] = static_cast<uint32_t>(x);
    left -= x;
    mass -= probabilities_[c];
    if (mass <= 0) mass = 1e-300;
  }
}

const EmpiricalNull& NullCalibration::NullFor(int grid) {
  const auto index = static_cast<size_t>(grid);
  if (index >= buckets_.size()) buckets_.resize(index + 1);
  if (buckets_[index] != nullptr) return *buckets_[index];
  const int64_t n = GridRows(grid);
  // One generator per grid size, seeded from the options: the same null whatever order sizes
  // are first asked for.
  SplitMix64 rng{options_.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(grid)};
  std::vector<double> scores;
  scores.reserve(static_cast<size_t>(options_.windows));
  const size_t cells = probabilities_.size();
  std::vector<uint32_t> counts(cells);
  if (n <= kTermTableMaxRows) {
    // Measure's terms per cell and count (NaN: not computed yet), for windows of n rows.
    const size_t stride = static_cast<size_t>(n) + 1;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> kl(cells * stride, nan), psi(cells * stride), js(cells * stride);
    const double a = options_.pseudo_count;
    const double norm = static_cast<double>(n) + static_cast<double>(cells) * a;
    for (int w = 0; w < options_.windows; ++w) {
      DrawWindow(n, rng, counts);
      Divergences d;
      double js_sum = 0;
      for (size_t c = 0; c < cells; ++c) {
        const size_t at = c * stride + counts[c];
        if (std::isnan(kl[at])) {
          const double p = probabilities_[c];
          const double q = (static_cast<double>(counts[c]) + a) / norm;
          const double log_q = std::log(q);
          const double log_ratio = log_q - log_probabilities_[c];
          const double log_mid = std::log(0.5 * (p + q));
          kl[at] = q * log_ratio;
          psi[at] = (q - p) * log_ratio;
          js[at] = p * (log_probabilities_[c] - log_mid) + q * (log_q - log_mid);
        }
        d.kl += kl[at];
        d.psi += psi[at];
        js_sum += js[at];
      }
      d.js = std::sqrt(std::max(0.0, js_sum / 2));
      scores.push_back(options_.weights.Score(d));
    }
  } else {
    std::vector<double> window(cells);
    for (int w = 0; w < options_.windows; ++w) {
      DrawWindow(n, rng, counts);
      std::copy(counts.begin(), counts.end(), window.begin());
      scores.push_back(options_.weights.Score(Measure(window, static_cast<double>(n))));
    }
  }
  // Fallback tail scale: chi-square's tail scale 2 carried through KL ≈ X / 2n, PSI ≈ X / n.
  const double fallback = (options_.weights.kl + 2 * options_.weights.psi) / static_cast<double>(n);
  buckets_[index] = std::make_unique<EmpiricalNull>(
      std::move(scores), options_.tail_fraction,
      fallback > 0 ? fallback : 1.0 / static_cast<double>(n));
  return *buckets_[index];
}

double NullCalibration::Sf(double score, double rows) {
  if (!std::isfinite(score)) return score > 0 ? std::numeric_limits<double>::min() : 1.0;
  rows = std::max(rows, 8.0);
  const double x = 2 * std::log2(rows);  // grid coordinate
  const int lo = std::max(kMinGrid, static_cast<int>(std::floor(x)));
  const double f = std::clamp(x - lo, 0.0, 1.0);
  const EmpiricalNull& low = NullFor(lo);
  if (f == 0) return std::max(low.Sf(score), std::numeric_limits<double>::min());
  const EmpiricalNull& high = NullFor(lo + 1);
  // Null scores shrink with the window roughly as n^-gamma (gamma 1 for KL and PSI, 1/2 for
  // the JS distance); gamma is measured from the two neighbouring grid sizes, and each one's
  // distribution is read at the score rescaled to its size. Interpolating at a fixed score
  // instead would understate P between grid sizes (log P is concave in log n).
  const double n_lo = static_cast<double>(GridRows(lo)), n_hi = static_cast<double>(GridRows(lo + 1));
  double gamma = 0.75;
  if (low.mean() > 0 && high.mean() > 0) {
    gamma = std::clamp(std::log(low.mean() / high.mean()) / std::log(n_hi / n_lo), 0.0, 1.5);
  }
  const double p_lo = low.Sf(score * std::pow(rows / n_lo, gamma));
  const double p_hi = high.Sf(score * std::pow(rows / n_hi, gamma));
  const double log_p = (1 - f) * std::log(std::max(p_lo, std::numeric_limits<double>::min())) +
                       f * std::log(std::max(p_hi, std::numeric_limits<double>::min()));
  return std::max(std::exp(log_p), std::numeric_limits<double>::min());
}

}  // namespace vigil::drift
