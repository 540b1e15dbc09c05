// TreeEnsemble: the model-independent form of a gradient-boosted tree ensemble (XGBoost gbtree,
// LightGBM gbdt), as the loaders produce it and the scorers and explainers read it.
//
// Nodes of all trees sit in one struct of arrays; tree t owns nodes [tree_begin[t],
// tree_begin[t + 1]) with its root first, and child indices are absolute. The decision rule
// follows the training library exactly (docs/model.md):
//  - XGBoost: the input is rounded to float32 and goes left when x < threshold (a float32);
//    a missing input (NaN) goes to the node's default side. Margins are summed in float32,
//    starting from the base margin, tree by tree.
//  - LightGBM: the input stays double and goes left when x <= threshold (a double); per node,
//    missing type NaN sends NaN to the default side, missing type Zero sends zero (and NaN,
//    read as zero) to the default side, missing type None reads NaN as zero. Margins are
//    summed in double.
//
// Thread safety: immutable after loading; share as std::shared_ptr<const TreeEnsemble>.
#ifndef VIGIL_MODEL_TREE_ENSEMBLE_H_
#define VIGIL_MODEL_TREE_ENSEMBLE_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/core/feature_schema.h"

namespace vigil {

enum class ModelFormat : uint8_t { kXgboost, kLightGbm };

// How the margin becomes the model's output.
enum class ModelLink : uint8_t {
  kIdentity,  // regression, raw margins
  kSigmoid,   // binary classification: 1 / (1 + exp(-sigmoid_scale * margin))
  kSoftmax,   // multi-class: softmax over the groups' margins
};

enum class MissingType : uint8_t {
  kNaN,   // NaN goes to the default side (XGBoost always)
  kZero,  // zero (and NaN, read as zero) goes to the default side
  kNone,  // no missing side: NaN is read as zero
};

struct TreeEnsemble {
  ModelFormat format = ModelFormat::kXgboost;
  std::string objective;  // as named in the file, e.g. "binary:logistic", "binary"
  ModelLink link = ModelLink::kIdentity;
  double sigmoid_scale = 1.0;
  int num_groups = 1;               // output groups (classes for multi-class, else 1)
  std::vector<double> base_margin;  // per group, in margin space
  std::vector<std::string> feature_names;

  std::vector<uint32_t> tree_begin;  // size num_trees() + 1
  std::vector<int32_t> tree_group;   // group of each tree

  // Per node. A leaf has feature -1 and its output in value.
  std::vector<int32_t> feature;      // model feature index
  std::vector<double> threshold;     // XGBoost: a float32 value, widened exactly
  std::vector<int32_t> left, right;  // absolute node indices; -1 for a leaf
  std::vector<uint8_t> default_left;
  std::vector<MissingType> missing;
  std::vector<double> value;  // leaf output (XGBoost: a float32 value, widened exactly)
  std::vector<double> cover;  // training rows (or hessian sum) reaching the node, for TreeSHAP

  size_t num_trees() const { return tree_group.size(); }
  size_t num_nodes() const { return feature.size(); }
  bool is_leaf(size_t node) const { return feature[node] < 0; }
  // Longest root-to-leaf path, in edges, of tree t.
  int Depth(size_t tree) const;

  // The child of internal node "node" that input x (the split feature's value, NaN when
  // missing) goes to, by the training library's rule (see the file comment).
  int32_t Next(size_t node, double x) const {
    const bool goes_left =
        format == ModelFormat::kXgboost
            ? XgboostGoesLeft(x, threshold[node], default_left[node] != 0)
            : LightGbmGoesLeft(x, threshold[node], missing[node], default_left[node] != 0);
    return goes_left ? left[node] : right[node];
  }

  // XGBoost's numerical decision: NaN to the default side, else left when float(x) < threshold.
  static bool XgboostGoesLeft(double x, double threshold, bool default_left) {
    return std::isnan(x) ? default_left : static_cast<float>(x) < static_cast<float>(threshold);
  }

  // LightGBM's numerical decision (include/LightGBM/tree.h, NumericalDecision): missing type
  // None reads NaN as 0; Zero sends |x| <= 1e-35f (and NaN, read as 0) to the default side; NaN
  // sends NaN there; otherwise left when x <= threshold.
  static bool LightGbmGoesLeft(double x, double threshold, MissingType missing, bool default_left) {
    constexpr double kZero = static_cast<double>(1e-35f);  // LightGBM's kZeroThreshold
    if (std::isnan(x) && missing != MissingType::kNaN) x = 0.0;
    const bool to_default = (missing == MissingType::kZero && x >= -kZero && x <= kZero) ||
                            (missing == MissingType::kNaN && std::isnan(x));
    return to_default ? default_left : x <= threshold;
  }

  // Checks the structure: every child index inside its own tree, every node reached exactly
  // once from its root (no cycles, no sharing), feature indices in range, group indices in
  // range, finite thresholds and values. Loaders call it; scorers rely on it.
  absl::Status Validate() const;
};

// The columns of a row of "schema" that feed the model: column[i] is the row position of model
// feature i. Schema features the model does not use are fine (a model may use a subset); model
// features the schema lacks are an error listing each of them (and the schema's version).
absl::StatusOr<std::vector<uint32_t>> BindFeatures(const TreeEnsemble& model,
                                                   const FeatureSchema& schema);
// The same against plain column names (a CSV header, say); "what" names them in the error.
absl::StatusOr<std::vector<uint32_t>> BindFeatures(const TreeEnsemble& model,
                                                   const std::vector<std::string>& columns,
                                                   std::string_view what);

}  // namespace vigil

#endif  // VIGIL_MODEL_TREE_ENSEMBLE_H_
