// ForestLayout: a tree ensemble laid out for the CUDA kernels, built on the host from the same
// TreeEnsemble the CPU predictor and explainer read, and uploaded once per model version.
//
// Scoring: each tree's nodes breadth-first with siblings adjacent, 8 bytes each (forest_node.h),
// trees in model order. Inputs are the model's features in model order ("inputs": row column
// i of a device row is model feature i), rounded to float32 as XGBoost rounds them. A row's
// margin is the base margin plus its trees' leaf values, summed in float32 in tree order: the CPU
// predictor's (and XGBoost's) order, so GPU and CPU margins are equal bit for bit.
//
// Explanations: every root-to-leaf path of every tree, as in GPUTreeShap (Mitchell et al. 2022):
// a path is its leaf value and its distinct features ("elements"), each with the product of the
// cover shares of its edges (z) and the edges themselves (threshold and side), from which a row's
// one-fraction (o: 1 when the row follows every edge of that feature on the path) is read. The
// leaf's contribution to element i's feature is v (o_i - z_i) times the integral over [0, 1] of
// the product over the other elements j of (z_j + (o_j - z_j) t), which Gauss-Legendre quadrature
// with ceil(elements / 2) nodes computes exactly (docs/model.md, "Explanations"). Paths are
// grouped by that quadrature width so that a kernel instantiated per width walks each group.
//
// Host-only and CUDA-free: the tests check the layout against the CPU predictor and explainer on
// any machine (Margin, ShapValues below are the kernels' reference).
#ifndef VIGIL_MODEL_CUDA_FOREST_LAYOUT_H_
#define VIGIL_MODEL_CUDA_FOREST_LAYOUT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/model/cuda/forest_node.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil::cuda {

// Quadrature widths the SHAP kernel is instantiated for; a path uses the smallest that covers
// ceil(its elements / 2). More nodes than needed stay exact.
inline constexpr std::array<int, 10> kShapWidths = {1, 2, 3, 4, 5, 6, 8, 12, 16, 32};
inline constexpr int kMaxShapElements = 64;

struct ForestLayout {
  uint32_t num_inputs = 0;  // model features
  float base_margin = 0;    // float32, as the margins start from it

  std::vector<ForestNode> nodes;
  std::vector<uint32_t> tree_root;  // per tree: its root's index in nodes
  std::vector<uint8_t> tree_depth;  // per tree: steps from the root to its deepest leaf

  // Paths, grouped by quadrature width: group g (width kShapWidths[g]) holds paths
  // [group_begin[g], group_begin[g + 1]).
  std::array<uint32_t, kShapWidths.size() + 1> group_begin{};
  std::vector<double> path_value;
  std::vector<uint32_t> path_element_begin;  // size paths + 1
  std::vector<uint32_t> element_input;       // model feature
  std::vector<double> element_zero;          // product of the feature's cover shares on the path
  std::vector<uint32_t> element_edge_begin;  // size elements + 1
  std::vector<ShapEdge> edges;
  double shap_bias = 0;  // expected margin: base margin + each tree's cover-weighted mean leaf

  size_t num_trees() const { return tree_root.size(); }
  size_t num_paths() const { return path_value.size(); }

  // Builds the layout. Fails, naming the reason, for what the kernels do not take: LightGBM
  // models (double thresholds; they score on the CPU), several output groups, more than
  // kMaxInputs features, a tree whose breadth-first child offset exceeds kMaxChildOffset, a path
  // through more than kMaxShapElements distinct features.
  static absl::StatusOr<ForestLayout> Build(const TreeEnsemble& model);

  // Host reference of the kernels. x: the row's model features in float32 (NaN when missing).
  float Margin(const float* x) const;
  // SHAP values of the margin: num_inputs contributions then the bias. out.size() ==
  // num_inputs + 1.
  void ShapValues(const float* x, absl::Span<double> out) const;
};

// The Gauss-Legendre nodes and weights of every width in kShapWidths, each padded to 32.
struct ShapQuadrature {
  std::array<std::array<double, 32>, kShapWidths.size()> t{}, w{};
  static const ShapQuadrature& Get();
};

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_FOREST_LAYOUT_H_
