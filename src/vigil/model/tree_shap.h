// TreeShapExplainer: exact SHAP values of a tree ensemble's margin for one row, by
// path-dependent TreeSHAP (Lundberg, Erion and Lee 2018, "Consistent Individualized Feature
// Attribution for Tree Ensembles", Algorithm 2).
//
// For each output group the contributions of the model's features plus a bias term (the
// expected margin: the base margin plus each tree's cover-weighted mean leaf value) sum to the
// row's margin. "Missing" follows the model's own rule: the path a missing value takes is the
// path the predictor takes. Computed in double precision.
//
// Thread safety: immutable after Create; Explain may run concurrently.
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
  static absl::StatusOr<TreeShapExplainer> Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const FeatureSchema& schema);
  // The same for rows whose columns are "columns" (a CSV header, say); "what" names them in
  // the binding error.
  static absl::StatusOr<TreeShapExplainer> Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const std::vector<std::string>& columns,
                                                  std::string_view what);

  const TreeEnsemble& model() const { return *model_; }
  // Values per row: (number of model features + 1) per output group, the bias last in each.
  size_t output_size() const {
    return (model_->feature_names.size() + 1) * static_cast<size_t>(model_->num_groups);
  }

  // Row column of model feature i.
  uint32_t column(size_t feature) const { return column_[feature]; }

  // REQUIRES: row.size() == the schema's size, out.size() == output_size().
  void Explain(absl::Span<const double> row, absl::Span<double> out) const;

 private:
  struct PathElement {
    int32_t feature;
    double zero_fraction;
    double one_fraction;
    double weight;
  };

  TreeShapExplainer() = default;
  static void LeafContributions(const PathElement* path, int depth, double leaf, double* phi);
  void Recurse(const double* row, double* phi, int32_t node, int depth, PathElement* parent_path,
               double parent_zero, double parent_one, int32_t parent_feature) const;

  std::shared_ptr<const TreeEnsemble> model_;
  std::vector<uint32_t> column_;    // row column of each model feature
  std::vector<double> mean_value_;  // per node: cover-weighted mean of the leaves below
  std::vector<double> bias_;        // per group: base margin + sum of tree root means
  int max_depth_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_TREE_SHAP_H_
