#include "vigil/drift/empirical_null.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vigil::drift {
namespace {

constexpr size_t kMinExceedances = 10;
constexpr size_t kBodySteps = 256;

}  // namespace

EmpiricalNull::EmpiricalNull(std::vector<double> scores, double tail_fraction,
                             double fallback_scale) {
  // Kept only while the table and the tail are built.
  std::vector<double> sorted = std::move(scores);
  // Measured nulls arrive sorted (MeasuredNull::Compress); a monitor builds a hundred of them.
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
  const size_t r = sorted.size();
  mean_ = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(r);
  const size_t iu =
      std::min(r - 1, static_cast<size_t>((1.0 - tail_fraction) * static_cast<double>(r)));
  u_ = sorted[iu];
  double excess = 0, excess_sq = 0;
  size_t above = 0;
  for (double z : sorted) {
    if (z > u_) {
      excess += z - u_;
      excess_sq += (z - u_) * (z - u_);
      ++above;
    }
  }
  p_u_ = static_cast<double>(above + 1) / static_cast<double>(r + 1);
  if (above >= kMinExceedances) {
    // Generalized Pareto by the method of moments: xi = (1 - m^2 / v) / 2, sigma = m (1 - xi),
    // with xi kept in [0, 0.45]: never a lighter tail than the exponential, and finite variance.
    const double n = static_cast<double>(above);
    const double m = excess / n;
    const double v = std::max(excess_sq / n - m * m, 0.0);
    xi_ = v > 0 ? std::clamp(0.5 * (1 - m * m / v), 0.0, 0.45) : 0.0;
    beta_ = m * (1 - xi_);
  } else {
    beta_ = fallback_scale;
  }
  if (!(beta_ > 0)) beta_ = fallback_scale;
  const double lo = lowest_ = sorted.front();
  if (u_ > lo) {
    body_inverse_step_ = static_cast<double>(kBodySteps) / (u_ - lo);
    body_.resize(kBodySteps + 1);
    for (size_t b = 0; b <= kBodySteps; ++b) {
      const double at = b == kBodySteps ? u_ : lo + static_cast<double>(b) / body_inverse_step_;
      const auto at_least = sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), at);
      body_[b] = static_cast<float>(static_cast<double>(at_least + 1) / static_cast<double>(r + 1));
    }
  }
}

double EmpiricalNull::Sf(double score) const {
  if (score > u_) {
    const double y = (score - u_) / beta_;
    return xi_ < 1e-9 ? p_u_ * std::exp(-y) : p_u_ * std::pow(1 + xi_ * y, -1 / xi_);
  }
  if (body_.empty() || !(score > lowest_)) return 1.0;
  const double x = (score - lowest_) * body_inverse_step_;
  const size_t b = std::min(static_cast<size_t>(x), kBodySteps - 1);
  const double f = std::min(x - static_cast<double>(b), 1.0);
  return body_[b] + f * (body_[b + 1] - body_[b]);
}

}  // namespace vigil::drift
