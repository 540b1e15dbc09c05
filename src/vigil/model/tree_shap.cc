#include "vigil/model/tree_shap.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil {
absl::StatusOr<TreeShapExplainer> TreeShapExplainer::Create(
    std::shared_ptr<const TreeEnsemble> model, const FeatureSchema& schema) {
  return Create(std::move(model), schema.names(),
                absl::StrCat("feature schema ", schema.version()));
}

absl::StatusOr<TreeShapExplainer> TreeShapExplainer::Create(
    std::shared_ptr<const TreeEnsemble> model, const std::vector<std::string>& columns,
    std::string_view what) {
  VIGIL_RETURN_IF_ERROR(model->Validate());
  TreeShapExplainer e;
  VIGIL_ASSIGN_OR_RETURN(e.column_, BindFeatures(*model, columns, what));
  const TreeEnsemble& m = *model;
  e.mean_value_.assign(m.num_nodes(), 0.0);
  e.bias_ = m.base_margin;
  for (size_t t = 0; t < m.num_trees(); ++t) {
    // Children come after their parent in neither format's guarantee: order the tree's nodes
    // so that every child is visited before its parent (reverse of a preorder walk).
    std::vector<int32_t> order;
    std::vector<int32_t> stack = {static_cast<int32_t>(m.tree_begin[t])};
    while (!stack.empty()) {
      const int32_t n = stack.back();
      stack.pop_back();
      order.push_back(n);
      if (!m.is_leaf(static_cast<size_t>(n))) {
        stack.push_back(m.left[static_cast<size_t>(n)]);
        stack.push_back(m.right[static_cast<size_t>(n)]);
      }
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const auto n = static_cast<size_t>(*it);
      if (m.is_leaf(n)) {
        e.mean_value_[n] = m.value[n];
        continue;
      }
      const auto l = static_cast<size_t>(m.left[n]), r = static_cast<size_t>(m.right[n]);
      // Weighted by the training rows (or hessian) that reached each child. A node that none
      // reached has no defined mean; it gets the plain average of its children.
      const double cover = m.cover[n];
      e.mean_value_[n] =
          cover > 0 ? (e.mean_value_[l] * m.cover[l] + e.mean_value_[r] * m.cover[r]) / cover
                    : 0.5 * (e.mean_value_[l] + e.mean_value_[r]);
    }
    e.bias_[static_cast<size_t>(m.tree_group[t])] += e.mean_value_[m.tree_begin[t]];
    e.max_depth_ = std::max(e.max_depth_, m.Depth(t));
  }
  e.model_ = std::move(model);
  return e;
}

namespace {

// The path bookkeeping of Algorithm 2. "path" holds depth + 1 elements; weight[i] is the
// weight of the subsets of size i of the features on the path.
template <typename PathElement>
void Extend(PathElement* path, int depth, double zero, double one, int32_t feature) {
  path[depth] = {feature, zero, one, depth == 0 ? 1.0 : 0.0};
  for (int i = depth - 1; i >= 0; --i) {
    path[i + 1].weight += one * path[i].weight * (i + 1) / static_cast<double>(depth + 1);
    path[i].weight = zero * path[i].weight * (depth - i) / static_cast<double>(depth + 1);
  }
}

template <typename PathElement>
void Unwind(PathElement* path, int depth, int index) {
  const double one = path[index].one_fraction, zero = path[index].zero_fraction;
  double next = path[depth].weight;
  for (int i = depth - 1; i >= 0; --i) {
    if (one != 0) {
      const double tmp = path[i].weight;
      path[i].weight = next * (depth + 1) / ((i + 1) * one);
      next = tmp - path[i].weight * zero * (depth - i) / static_cast<double>(depth + 1);
    } else {
      path[i].weight = path[i].weight * (depth + 1) / (zero * (depth - i));
    }
  }
  for (int i = index; i < depth; ++i) {
    path[i].feature = path[i + 1].feature;
    path[i].zero_fraction = path[i + 1].zero_fraction;
    path[i].one_fraction = path[i + 1].one_fraction;
  }
}

// Total weight of the path with element "index" unwound, without changing the path.
template <typename PathElement>
double UnwoundSum(const PathElement* path, int depth, int index) {
  const double one = path[index].one_fraction, zero = path[index].zero_fraction;
  double next = path[depth].weight, total = 0;
  for (int i = depth - 1; i >= 0; --i) {
    if (one != 0) {
      const double tmp = next * (depth + 1) / ((i + 1) * one);
      total += tmp;
      next = path[i].weight - tmp * zero * ((depth - i) / static_cast<double>(depth + 1));
    } else if (zero != 0) {
      total += (path[i].weight / zero) / ((depth - i) / static_cast<double>(depth + 1));
    }
  }
  return total;
}

}  // namespace

// For every element i >= 1 of the path, UnwoundSum(path, depth, i) times
// (one - zero) times the leaf value, added to phi[feature]. Same sums as calling UnwoundSum per
// element (O(depth²) divisions), reorganized: an element with one_fraction 0 contributes
// (sum_j weight[j] (depth + 1) / (depth - j)) / zero, the sum shared by all such elements; the
// others run UnwoundSum's recurrence side by side, one lane per element, without divisions in
// the loop, which the compiler vectorizes.
void TreeShapExplainer::LeafContributions(const PathElement* path, int depth, double leaf,
                                          double* phi) {
  constexpr int kMaxLanes = 64;
  double cold_sum = 0;
  for (int j = 0; j < depth; ++j) {
    cold_sum += path[j].weight * (depth + 1) / static_cast<double>(depth - j);
  }
  int lanes = 0;
  double next[kMaxLanes], total[kMaxLanes], zero[kMaxLanes], inv_one[kMaxLanes];
  int element[kMaxLanes];
  for (int i = 1; i <= depth; ++i) {
    const PathElement& e = path[i];
    if (e.one_fraction == 0) {
      if (e.zero_fraction != 0) {
        phi[e.feature] += cold_sum / e.zero_fraction * (0 - e.zero_fraction) * leaf;
      }
      continue;
    }
    if (lanes == kMaxLanes) {  // deeper than any real tree: the plain formula
      phi[e.feature] += UnwoundSum(path, depth, i) * (e.one_fraction - e.zero_fraction) * leaf;
      continue;
    }
    element[lanes] = i;
    zero[lanes] = e.zero_fraction;
    inv_one[lanes] = 1.0 / e.one_fraction;
    next[lanes] = path[depth].weight;
    total[lanes] = 0;
    ++lanes;
  }
  for (int j = depth - 1; j >= 0; --j) {
    const double a = (depth + 1) / static_cast<double>(j + 1);
    const double b = (depth - j) / static_cast<double>(depth + 1);
    const double w = path[j].weight;
    for (int k = 0; k < lanes; ++k) {
      const double tmp = next[k] * a * inv_one[k];
      total[k] += tmp;
      next[k] = w - tmp * zero[k] * b;
    }
  }
  for (int k = 0; k < lanes; ++k) {
    const PathElement& e = path[element[k]];
    phi[e.feature] += total[k] * (e.one_fraction - e.zero_fraction) * leaf;
  }
}

void TreeShapExplainer::Recurse(const double* row, double* phi, int32_t node, int depth,
                                PathElement* parent_path, double parent_zero, double parent_one,
                                int32_t parent_feature) const {
  const TreeEnsemble& m = *model_;
  const auto n = static_cast<size_t>(node);
  PathElement* path = parent_path + depth + 1;
  std::copy(parent_path, parent_path + depth + 1, path);
  Extend(path, depth, parent_zero, parent_one, parent_feature);
  if (m.is_leaf(n)) {
    LeafContributions(path, depth, m.value[n], phi);
    return;
  }
  const int32_t feature = m.feature[n];
  const int32_t hot = m.Next(n, row[column_[static_cast<size_t>(feature)]]);
  const int32_t cold = hot == m.left[n] ? m.right[n] : m.left[n];
  const double cover = m.cover[n];
  const double hot_zero = cover > 0 ? m.cover[static_cast<size_t>(hot)] / cover : 0.5;
  const double cold_zero = cover > 0 ? m.cover[static_cast<size_t>(cold)] / cover : 0.5;
  double incoming_zero = 1, incoming_one = 1;
  // A feature already on the path is split again: undo its earlier entry and fold it in here.
  int k = 0;
  for (; k <= depth; ++k) {
    if (path[k].feature == feature) break;
  }
  if (k <= depth) {
    incoming_zero = path[k].zero_fraction;
    incoming_one = path[k].one_fraction;
    Unwind(path, depth, k);
    --depth;
  }
  Recurse(row, phi, hot, depth + 1, path, hot_zero * incoming_zero, incoming_one, feature);
  Recurse(row, phi, cold, depth + 1, path, cold_zero * incoming_zero, 0, feature);
}

void TreeShapExplainer::Explain(absl::Span<const double> row, absl::Span<double> out) const {
  VIGIL_DCHECK(out.size() == output_size());
  std::fill(out.begin(), out.end(), 0.0);
  const size_t width = model_->feature_names.size() + 1;
  // Path storage for the deepest tree: depth + 2 levels of up to depth + 2 elements.
  const auto levels = static_cast<size_t>(max_depth_ + 2);
  PathElement stack_paths[32 * 33 / 2];  // trees up to depth 30 without allocating
  std::vector<PathElement> heap_paths;
  PathElement* paths = stack_paths;
  if (levels * (levels + 1) / 2 > std::size(stack_paths)) {
    heap_paths.resize(levels * (levels + 1) / 2);
    paths = heap_paths.data();
  }
  for (size_t t = 0; t < model_->num_trees(); ++t) {
    double* phi = out.data() + static_cast<size_t>(model_->tree_group[t]) * width;
    Recurse(row.data(), phi, static_cast<int32_t>(model_->tree_begin[t]), 0, paths, 1, 1, -1);
  }
  for (int g = 0; g < model_->num_groups; ++g) {
    out[static_cast<size_t>(g) * width + width - 1] = bias_[static_cast<size_t>(g)];
  }
}

}  // namespace vigil
