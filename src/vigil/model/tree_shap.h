// TreeShapExplainer: exact SHAP values of a tree ensemble's margin for one row, path-dependent
// TreeSHAP (Lundberg, Erion and Lee 2018) computed in O(nodes × depth / 2) per tree.
//
// For each output group the contributions of the model's features plus a bias term (the
// expected margin: the base margin plus each tree's cover-weighted mean leaf value) sum to the
// row's margin. "Missing" follows the model's own rule: the path a missing value takes is the
// path the predictor takes. Computed in double precision.
//
// The method (docs/model.md, "Explanations"): each leaf's share of a feature's value is an
// integral over [0, 1] of a polynomial (the product of the path's per-feature factors
// z + (o - z) t), which Gauss-Legendre quadrature with ceil(path features / 2) nodes computes
// exactly. The per-node products and per-subtree sums are shared across leaves, so a tree costs
// two linear passes over its nodes, each node a few vector operations over the quadrature nodes,
// instead of Algorithm 2's leaves × depth² path updates.
//
// Thread safety: immutable after Create; Explain may run concurrently (scratch is per thread).
#ifndef VIGIL_MODEL_TREE_SHAP_H_
#define VIGIL_MODEL_TREE_SHAP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/feature_schema.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

class TreeShapExplainer {
 public:
  // Fails if the model does not validate, its features do not bind, or a root-to-leaf path
  // runs through more than kMaxPathFeatures distinct features.
  static absl::StatusOr<TreeShapExplainer> Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const FeatureSchema& schema);
  // The same for rows whose columns are "columns" (a CSV header, say); "what" names them in
  // the binding error.
  static absl::StatusOr<TreeShapExplainer> Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const std::vector<std::string>& columns,
                                                  std::string_view what);

  static constexpr int kMaxPathFeatures = 64;

  const TreeEnsemble& model() const { return *model_; }
  // Values per row: (number of model features + 1) per output group, the bias last in each.
  size_t output_size() const {
    return (model_->feature_names.size() + 1) * static_cast<size_t>(model_->num_groups);
  }

  // Row column of model feature i.
  uint32_t column(size_t feature) const { return column_[feature]; }
  // Quadrature nodes per integral: ceil(largest number of distinct features on a path / 2),
  // rounded up to a supported width.
  int quadrature_points() const { return points_; }

  // REQUIRES: row.size() == the schema's size, out.size() == output_size().
  void Explain(absl::Span<const double> row, absl::Span<double> out) const;

 private:
  // One node of one tree, trees concatenated, each tree's nodes in preorder (a parent before
  // its children). The "edge" of a node is the split above it. Indices are local to the tree.
  struct Node {
    int32_t parent = 0;   // 0 (itself) at the root
    int32_t prev = 0;     // the nearest ancestor whose edge splits the same feature, else the
                          // root (always hot, with a zero hot coefficient)
    int32_t feature = 0;  // model feature of the edge
    uint8_t is_left = 0;  // the edge is its parent's left side
    double zero = 1;      // the edge's cover share (Algorithm 2's zero fraction)
    double merged = 1;    // product of the cover shares of the feature's edges down to here
    double value = 0;     // leaf value; 0 for an internal node
  };
  // An internal node's decision, copied out of the model for a compact walk.
  struct Split {
    uint32_t node;    // local index
    uint32_t column;  // row column
    double threshold;
    uint8_t default_left;
    MissingType missing;
  };

  TreeShapExplainer() = default;
  struct Kernel;  // the per-row passes, compiled per quadrature width and instruction set

  std::shared_ptr<const TreeEnsemble> model_;
  std::vector<uint32_t> column_;  // row column of each model feature
  std::vector<double> bias_;      // per group: base margin + sum of tree root means
  std::vector<Node> nodes_;
  std::vector<uint32_t> tree_begin_;  // into nodes_, size trees + 1
  std::vector<Split> splits_;
  std::vector<uint32_t> split_begin_;  // into splits_, size trees + 1
  int points_ = 0;
  size_t max_tree_nodes_ = 0;
  // Per quadrature node q: t_q, 1 - t_q, and the coefficient of a cold edge -w_q / (1 - t_q).
  std::vector<double> t_, one_minus_t_, cold_;
  // Per node, 2 × points_ values. First w_q (1 - Z) / (Z + (1 - Z) t_q), Z the node's merged
  // zero fraction: the coefficient of a hot edge (zero at a root). Then
  // 1 / (Zp (1 - t_q) + t_q), Zp the merged zero fraction of the feature's previous edge on the
  // path (1 when none): dividing out the factor this edge's merged factor replaces.
  std::vector<double> lanes_;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_TREE_SHAP_H_
