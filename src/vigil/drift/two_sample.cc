#include "vigil/drift/two_sample.h"

#include "vigil/drift/kolmogorov.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace vigil::drift {

ReferenceSample::ReferenceSample(std::vector<double> values) {
  sorted_.reserve(values.size());
  for (double v : values) {
    if (std::isnan(v)) {
      ++missing_;
    } else {
      sorted_.push_back(v);
    }
  }
  std::sort(sorted_.begin(), sorted_.end());
  prefix_.resize(sorted_.size() + 1);
  prefix_[0] = 0;
  for (size_t i = 0; i < sorted_.size(); ++i) prefix_[i + 1] = prefix_[i] + sorted_[i];
  if (!sorted_.empty()) {
    const long double n = static_cast<long double>(sorted_.size());
    const long double mean = prefix_.back() / n;
    long double squares = 0;
    for (double v : sorted_) squares += (v - mean) * (v - mean);
    mean_ = static_cast<double>(mean);
    stddev_ = static_cast<double>(std::sqrt(squares / n));
  }
}

size_t ReferenceSample::CountAtMost(double x) const {
  return static_cast<size_t>(std::upper_bound(sorted_.begin(), sorted_.end(), x) -
                             sorted_.begin());
}

size_t ReferenceSample::CountBelow(double x) const {
  return static_cast<size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), x) -
                             sorted_.begin());
}

namespace {

// Calls f(value, count of live values <= value) for each distinct live value, ascending.
template <typename F>
void ForEachDistinct(absl::Span<const double> live, F f) {
  size_t i = 0;
  while (i < live.size()) {
    size_t j = i + 1;
    while (j < live.size() && live[j] == live[i]) ++j;
    f(live[i], j);
    i = j;
  }
}

}  // namespace

double KsStatistic(const ReferenceSample& ref, absl::Span<const double> live) {
  const uint64_t n = ref.size(), m = live.size();
  if (n == 0 || m == 0) return 0;
  // Compared exactly as |a/n - b/m| = |a m - b n| / (n m); the supremum over the merged
  // samples is reached at a live value or just below it (F_live is constant in between).
  uint64_t best = 0;
  uint64_t previous = 0;  // live values below the current one
  ForEachDistinct(live, [&](double value, size_t at_most) {
    const uint64_t below = ref.CountBelow(value), upto = ref.CountAtMost(value);
    const auto gap = [&](uint64_t a, uint64_t b) {
      const uint64_t x = a * m, y = b * n;
      return x > y ? x - y : y - x;
    };
    if (below > 0) best = std::max(best, gap(below, previous));
    best = std::max(best, gap(upto, at_most));
    previous = at_most;
  });
  return static_cast<double>(best) / (static_cast<double>(n) * static_cast<double>(m));
}

double Wasserstein1(const ReferenceSample& ref, absl::Span<const double> live) {
  const size_t n = ref.size(), m = live.size();
  if (n == 0 || m == 0) return 0;
  const long double inv_n = 1.0L / static_cast<long double>(n);
  const absl::Span<const double> r = ref.sorted();
  // ∫_a^b F_ref(x) dx for finite a <= b: (1/n)[#(r <= a)(b - a) + Σ_{a < r_i < b} (b - r_i)].
  const auto integral = [&](double a, double b) -> long double {
    if (!(b > a)) return 0;
    const size_t lo = ref.CountAtMost(a), hi = ref.CountBelow(b);
    long double sum = static_cast<long double>(lo) * (static_cast<long double>(b) - a);
    if (hi > lo) {
      sum += static_cast<long double>(hi - lo) * b - (ref.SumOfSmallest(hi) - ref.SumOfSmallest(lo));
    }
    return sum * inv_n;
  };
  long double total = 0;
  // Below the first live value F_live = 0: ∫ F_ref = (1/n) Σ_{r_i < y_1} (y_1 - r_i).
  {
    const size_t k = ref.CountBelow(live.front());
    total += (static_cast<long double>(k) * live.front() - ref.SumOfSmallest(k)) * inv_n;
  }
  // Between live values y_j <= x < y_{j+1}, F_live = c = cnt/m: ∫ |F_ref - c| splits where
  // F_ref reaches c, at the t-th smallest reference value, t = ceil(cnt n / m).
  double a = 0;
  uint64_t cnt = 0;
  bool first = true;
  ForEachDistinct(live, [&](double value, size_t at_most) {
    if (!first) {
      const double b = value;
      const long double c = static_cast<long double>(cnt) / static_cast<long double>(m);
      const uint64_t t = (cnt * n + m - 1) / m;
      double s;
      if (t == 0) {
        s = a;
      } else if (t > n) {
        s = b;
      } else {
        s = std::clamp(r[t - 1], a, b);
      }
      total += c * (static_cast<long double>(s) - a) - integral(a, s);
      total += integral(s, b) - c * (static_cast<long double>(b) - s);
    }
    first = false;
    a = value;
    cnt = at_most;
  });
  // Above the last live value F_live = 1: ∫ (1 - F_ref) = (1/n) Σ_{r_i > y_k} (r_i - y_k).
  {
    const size_t k = ref.CountAtMost(live.back());
    total += ((ref.SumOfSmallest(n) - ref.SumOfSmallest(k)) -
              static_cast<long double>(n - k) * live.back()) *
             inv_n;
  }
  return static_cast<double>(total);
}

namespace {

// Pr(D_{n,n} >= h/n) = 2 (A0 (1 - A1 (1 - A2 (...)))) with A_k the ratios of binomials, in
// the Horner-like order scipy uses (no subtractive cancellation).
double ProbOutsideSquare(uint64_t n, uint64_t h) {
  double p = 0;
  for (int64_t k = static_cast<int64_t>(n / h); k >= 0; --k) {
    double p1 = 1;
    const double kh = static_cast<double>(static_cast<uint64_t>(k) * h);
    for (uint64_t j = 0; j < h; ++j) {
      p1 = (static_cast<double>(n) - kh - static_cast<double>(j)) * p1 /
           (static_cast<double>(n) + kh + static_cast<double>(j) + 1);
    }
    p = p1 * (1.0 - p);
  }
  return 2 * p;
}

// 1 - Pr(every point (x, y) of the path has |x n - y m| < h g), m >= n.
double ProbOutsideBand(uint64_t m, uint64_t n, uint64_t g, uint64_t h) {
  const int64_t hg = static_cast<int64_t>(h * g);
  const auto inside = [&](int64_t x, int64_t y) {
    const int64_t v = x * static_cast<int64_t>(n) - y * static_cast<int64_t>(m);
    return v < hg && -v < hg;
  };
  // column[y] = P(x, y): the share of paths to (x, y) that stayed inside (0 outside the band).
  std::vector<double> column(n + 1, 0.0);
  for (uint64_t y = 0; y <= n; ++y) {
    if (!inside(0, static_cast<int64_t>(y))) break;
    column[y] = 1;
  }
  // Only the band of y with |x n - y m| < h g can be inside: y_lo(x) <= y <= y_hi(x), both
  // non-decreasing in x, so each column is computed over its band only.
  const auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t mi = static_cast<int64_t>(m), ni = static_cast<int64_t>(n);
  int64_t previous_lo = 0;
  for (int64_t x = 1; x <= mi; ++x) {
    const int64_t lo = std::max<int64_t>(0, floor_div(x * ni - hg, mi) + 1);
    const int64_t hi = std::min<int64_t>(ni, floor_div(x * ni + hg - 1, mi));
    if (hi < lo) return 1.0;  // no path stays inside
    for (int64_t y = previous_lo; y < lo; ++y) column[static_cast<size_t>(y)] = 0;
    double below = 0;  // P(x, lo - 1): outside the band
    for (int64_t y = lo; y <= hi; ++y) {
      double& cell = column[static_cast<size_t>(y)];  // holds P(x - 1, y)
      cell = inside(x, y) ? (static_cast<double>(x) * cell + static_cast<double>(y) * below) /
                                static_cast<double>(x + y)
                          : 0.0;
      below = cell;
    }
    previous_lo = lo;
  }
  return 1 - column[n];
}

}  // namespace

double KsPValueExact(uint64_t n1, uint64_t n2, double d) {
  const uint64_t g = std::gcd(n1, n2);
  const uint64_t lcm = (n1 / g) * n2;
  const uint64_t h = static_cast<uint64_t>(std::llround(d * static_cast<double>(lcm)));
  if (h == 0) return 1.0;
  const double p = n1 == n2 ? ProbOutsideSquare(n1, h)
                            : ProbOutsideBand(std::max(n1, n2), std::min(n1, n2), g, h);
  return std::clamp(p, 0.0, 1.0);
}

double KsPValue(uint64_t n1, uint64_t n2, double d) {
  constexpr uint64_t kMaxExact = 10'000;
  if (std::max(n1, n2) <= kMaxExact) return KsPValueExact(n1, n2, d);
  const double a = static_cast<double>(std::max(n1, n2)), b = static_cast<double>(std::min(n1, n2));
  const double en = a * b / (a + b);
  return KolmogorovSf(static_cast<uint64_t>(std::nearbyint(en)), d);
}

}  // namespace vigil::drift
