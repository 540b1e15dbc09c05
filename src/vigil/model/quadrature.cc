#include "vigil/model/quadrature.h"

#include <cmath>
#include <cstddef>
#include <numbers>

namespace vigil {

// Newton's method on the Legendre polynomial P_n from the usual cosine starting points.
void GaussLegendre(int n, std::vector<double>& t, std::vector<double>& w) {
  t.assign(static_cast<size_t>(n), 0.0);
  w.assign(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    double x = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5));
    double derivative = 1;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p0 = 1, p1 = x;  // P_0, P_1; then P_k by Bonnet's recursion
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      derivative = n * (x * p1 - p0) / (x * x - 1);
      const double step = p1 / derivative;
      x -= step;
      if (std::abs(step) < 1e-16) break;
    }
    t[static_cast<size_t>(i)] = (1 + x) / 2;
    w[static_cast<size_t>(i)] = 1 / ((1 - x * x) * derivative * derivative);  // (2 / ...) / 2
  }
}

}  // namespace vigil
