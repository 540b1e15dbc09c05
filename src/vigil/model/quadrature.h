// Gauss-Legendre quadrature on [0, 1], which both TreeSHAP implementations (the CPU explainer
// and the CUDA backend's) use to integrate each leaf's path polynomial exactly.
#ifndef VIGIL_MODEL_QUADRATURE_H_
#define VIGIL_MODEL_QUADRATURE_H_

#include <vector>

namespace vigil {

// The n nodes t and weights w of Gauss-Legendre quadrature on [0, 1]: sum w_i p(t_i) equals the
// integral of p over [0, 1] for every polynomial p of degree < 2n. REQUIRES: n >= 1.
void GaussLegendre(int n, std::vector<double>& t, std::vector<double>& w);

}  // namespace vigil

#endif  // VIGIL_MODEL_QUADRATURE_H_
