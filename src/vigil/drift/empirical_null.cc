#include "vigil/drift/empirical_null.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vigil::drift {
namespace {

constexpr size_t kMinExceedances = 10;

}  // namespace

EmpiricalNull::EmpiricalNull(std::vector<double> scores, double tail_fraction,
                             double fallback_scale)
    : sorted_(std::move(scores)) {
  std::sort(sorted_.begin(), sorted_.end());
  const size_t r = sorted_.size();
  mean_ = std::accumulate(sorted_.begin(), sorted_.end(), 0.0) / static_cast<double>(r);
  const size_t iu =
      std::min(r - 1, static_cast<size_t>((1.0 - tail_fraction) * static_cast<double>(r)));
  u_ = sorted_[iu];
  double excess = 0, excess_sq = 0;
  size_t above = 0;
  for (double z : sorted_) {
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
}

double EmpiricalNull::Sf(double score) const {
  if (score > u_) {
    const double y = (score - u_) / beta_;
    return xi_ < 1e-9 ? p_u_ * std::exp(-y) : p_u_ * std::pow(1 + xi_ * y, -1 / xi_);
  }
  const auto at_least = static_cast<double>(
      sorted_.end() - std::lower_bound(sorted_.begin(), sorted_.end(), score));
  return (at_least + 1) / static_cast<double>(sorted_.size() + 1);
}

}  // namespace vigil::drift
