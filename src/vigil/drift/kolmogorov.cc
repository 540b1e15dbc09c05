#include "vigil/drift/kolmogorov.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vigil::drift {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt2Pi = 2.50662827463100050242;
constexpr double kLog2Pi = 1.83787706640934548356;

double Clip(double p) { return std::clamp(p, 0.0, 1.0); }

// log(n! / n^n) by Stirling's series with the n log n removed up front (scipy's form).
double LogFactorialOverPower(double n) {
  static constexpr double kStirling[] = {
      -2.955065359477124183e-2, 6.4102564102564102564e-3, -1.9175269175269175269e-3,
      8.4175084175084175084e-4, -5.952380952380952381e-4, 7.9365079365079365079e-4,
      -2.7777777777777777778e-3, 8.3333333333333333333e-2};
  const double rn = 1.0 / n, x = rn / n;
  double poly = 0;
  for (double c : kStirling) poly = poly * x + c;
  return std::log(n) / 2 - n + kLog2Pi / 2 + rn * poly;
}

// Pr(D_n <= d) by the Durbin matrix, computed as Marsaglia, Tsang and Wang do (scaled powers).
double DurbinCdf(uint64_t n, double d) {
  const double nd = static_cast<double>(n) * d;
  if (d >= 1) return 1;
  if (nd <= 0.5) return 0;
  const int k = static_cast<int>(std::ceil(nd));
  const double h = k - nd;
  const int m = 2 * k - 1;
  std::vector<double> H(static_cast<size_t>(m * m), 0.0), v(static_cast<size_t>(m)),
      w(static_cast<size_t>(m));
  double fac = 1;
  for (int j = 1; j <= m; ++j) {
    w[j - 1] = fac;
    fac /= j;
    v[j - 1] = (1.0 - std::pow(h, j)) * fac;
  }
  const double tt = std::pow(std::max(2 * h - 1.0, 0.0), m) - 2 * std::pow(h, m);
  v[m - 1] = (1.0 + tt) * fac;
  const auto at = [m](std::vector<double>& a, int r, int c) -> double& {
    return a[static_cast<size_t>(r * m + c)];
  };
  for (int i = 1; i < m; ++i) {
    for (int r = i - 1; r < m; ++r) at(H, r, i) = w[static_cast<size_t>(r - (i - 1))];
  }
  for (int r = 0; r < m; ++r) at(H, r, 0) = v[static_cast<size_t>(r)];
  for (int c = 0; c < m; ++c) at(H, m - 1, c) = v[static_cast<size_t>(m - 1 - c)];
  std::vector<double> power(static_cast<size_t>(m * m), 0.0), tmp(static_cast<size_t>(m * m));
  for (int i = 0; i < m; ++i) at(power, i, i) = 1;
  const auto multiply = [&](const std::vector<double>& a, const std::vector<double>& b,
                            std::vector<double>& out) {
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < m; ++c) {
        double s = 0;
        for (int t = 0; t < m; ++t) s += a[static_cast<size_t>(r * m + t)] * b[static_cast<size_t>(t * m + c)];
        tmp[static_cast<size_t>(r * m + c)] = s;
      }
    }
    out = tmp;
  };
  constexpr int kE128 = 128;
  const double kEp128 = std::ldexp(1.0, kE128), kEm128 = std::ldexp(1.0, -kE128);
  int exponent = 0, h_exponent = 0;
  for (uint64_t nn = n; nn > 0; nn /= 2) {
    if (nn % 2) {
      multiply(power, H, power);
      exponent += h_exponent;
    }
    multiply(H, H, H);
    h_exponent *= 2;
    if (std::abs(at(H, k - 1, k - 1)) > kEp128) {
      for (double& x : H) x /= kEp128;
      h_exponent += kE128;
    }
  }
  double p = at(power, k - 1, k - 1);
  for (uint64_t i = 1; i <= n; ++i) {
    p = static_cast<double>(i) * p / static_cast<double>(n);
    if (std::abs(p) < kEm128) {
      p *= kEp128;
      exponent -= kE128;
    }
  }
  if (exponent != 0) p = std::ldexp(p, exponent);
  return p;
}

// Pelz–Good's approximation to Pr(D_n <= x) (or its complement).
double PelzGood(uint64_t n, double x, bool cdf) {
  if (x <= 0) return cdf ? 0 : 1;
  if (x >= 1) return cdf ? 1 : 0;
  const double z = std::sqrt(static_cast<double>(n)) * x;
  const double z2 = z * z, z3 = z2 * z, z4 = z2 * z2, z6 = z4 * z2;
  const double qlog = -kPi * kPi / 8 / z2;
  if (qlog < -708.3964185322641) return cdf ? 0 : 1;  // log of the smallest normal double
  double q = std::exp(qlog);
  const double pi2 = kPi * kPi, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
  const double k1a = -z2, k1b = pi2 / 4;
  const double k2a = 6 * z6 + 2 * z4, k2b = (2 * z4 - 5 * z2) * pi2 / 4,
               k2c = pi4 * (1 - 2 * z2) / 16;
  const double k3d = pi6 * (5 - 30 * z2) / 64, k3c = pi4 * (-60 * z2 + 212 * z4) / 16,
               k3b = pi2 * (135 * z4 - 96 * z6) / 4, k3a = -30 * z6 - 90 * std::pow(z, 8);
  double K[4] = {0, 0, 0, 0};
  const int maxk = static_cast<int>(std::ceil(16 * z / kPi));
  for (int k = maxk; k > 0; --k) {
    const double m = 2.0 * k - 1, m2 = m * m, m4 = m2 * m2, m6 = m4 * m2;
    const double qpower = std::pow(q, 8.0 * k);
    const double coeffs[4] = {1.0, k1a + k1b * m2, k2a + k2b * m2 + k2c * m4,
                              k3a + k3b * m2 + k3c * m4 + k3d * m6};
    for (int i = 0; i < 4; ++i) K[i] = K[i] * qpower + coeffs[i];
  }
  const double scale[4] = {z, 6 * z4, 72 * std::pow(z, 7), 6480 * std::pow(z, 10)};
  for (int i = 0; i < 4; ++i) K[i] = K[i] * q * kSqrt2Pi / scale[i];
  q = std::exp(-pi2 / 2 / z2);
  double k2extra = 0, k3extra = 0;
  const double sqrt3z = std::sqrt(3.0) * z;
  for (int k = maxk; k > 0; --k) {
    const double ks2 = static_cast<double>(k) * k, kspi = kPi * k;
    const double qp = std::pow(q, ks2);
    k2extra += ks2 * qp;
    k3extra += (sqrt3z + kspi) * (sqrt3z - kspi) * ks2 * qp;
  }
  K[2] += k2extra * pi2 * kSqrt2Pi / (-36 * z3);
  K[3] += k3extra * pi2 * kSqrt2Pi / (216 * z6);
  for (int i = 1; i < 4; ++i) K[i] /= std::pow(static_cast<double>(n), i / 2.0);
  if (!cdf) {
    for (double& v : K) v = -v;
    K[0] += 1;
  }
  return K[0] + K[1] + K[2] + K[3];
}

}  // namespace

double SmirnovSf(uint64_t n, double x) {
  if (!(x > 0)) return 1;
  if (x >= 1) return 0;
  const double nn = static_cast<double>(n);
  // d Σ_{j=0}^{floor(n(1-d))} C(n, j) (1 - d - j/n)^(n-j) (d + j/n)^(j-1), term by term in
  // logarithms (the terms span hundreds of orders of magnitude).
  const uint64_t last = static_cast<uint64_t>(std::floor(nn * (1 - x)));
  double sum = 0;
  const double lgn1 = std::lgamma(nn + 1);
  for (uint64_t j = 0; j <= last; ++j) {
    const double jj = static_cast<double>(j);
    const double a = 1 - x - jj / nn;
    if (a <= 0 && j < n) continue;
    const double log_term = lgn1 - std::lgamma(jj + 1) - std::lgamma(nn - jj + 1) +
                            (nn - jj) * std::log(a) + (jj - 1) * std::log(x + jj / nn);
    sum += std::exp(log_term);
  }
  return Clip(x * sum);
}

double KolmogorovSf(uint64_t n, double x) {
  const double nn = static_cast<double>(n);
  if (x >= 1) return 0;
  if (x <= 0) return 1;
  const double t = nn * x;
  if (t <= 1) {
    if (t <= 0.5) return 1;
    double prob;
    if (n <= 140) {
      prob = 1;
      for (uint64_t i = 1; i <= n; ++i) prob *= static_cast<double>(i) * (1.0 / nn) * (2 * t - 1);
    } else {
      prob = std::exp(LogFactorialOverPower(nn) + nn * std::log(2 * t - 1));
    }
    return Clip(1 - prob);
  }
  if (t >= nn - 1) return Clip(2 * std::pow(1 - x, nn));
  if (x >= 0.5) return Clip(2 * SmirnovSf(n, x));
  const double nx2 = t * x;
  if (n <= 140) {
    // scipy uses Pomeranz's recursion for 0.754693 < n x^2 <= 4; the Durbin matrix is exact
    // there too (only slower, m = 2 ceil(n x) - 1 <= 279), so both give the same value.
    if (nx2 <= 4) return Clip(1 - DurbinCdf(n, x));
    return Clip(2 * SmirnovSf(n, x));
  }
  if (nx2 >= 370) return 0;
  if (nx2 >= 2.2) return Clip(2 * SmirnovSf(n, x));
  double cdf;
  if (nx2 >= 18) {
    cdf = 1;
  } else if (n <= 100000 && nn * std::pow(x, 1.5) <= 1.4) {
    cdf = DurbinCdf(n, x);
  } else {
    cdf = PelzGood(n, x, true);
  }
  return Clip(1 - cdf);
}

}  // namespace vigil::drift
