#include "vigil/model/cuda/forest_layout.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/quadrature.h"

namespace vigil::cuda {
namespace {

int WidthGroup(size_t elements) {
  const auto needed = static_cast<int>((elements + 1) / 2);
  for (size_t g = 0; g < kShapWidths.size(); ++g) {
    if (kShapWidths[g] >= needed) return static_cast<int>(g);
  }
  return -1;
}

struct PathEdge {
  int32_t feature;
  ShapEdge edge;
  double share;  // the child's cover over its parent's
};

// One root-to-leaf path, its edges merged by feature in order of first appearance.
struct Path {
  double value = 0;
  std::vector<uint32_t> input;
  std::vector<double> zero;
  std::vector<std::vector<ShapEdge>> edges;
};

Path MergePath(const std::vector<PathEdge>& edges, double value) {
  Path p;
  p.value = value;
  for (const PathEdge& e : edges) {
    const auto input = static_cast<uint32_t>(e.feature);
    const auto it = std::find(p.input.begin(), p.input.end(), input);
    if (it == p.input.end()) {
      p.input.push_back(input);
      p.zero.push_back(e.share);
      p.edges.push_back({e.edge});
    } else {
      const auto k = static_cast<size_t>(it - p.input.begin());
      p.zero[k] *= e.share;
      p.edges[k].push_back(e.edge);
    }
  }
  return p;
}

}  // namespace

const ShapQuadrature& ShapQuadrature::Get() {
  static const ShapQuadrature* const q = [] {
    auto* r = new ShapQuadrature;
    std::vector<double> t, w;
    for (size_t g = 0; g < kShapWidths.size(); ++g) {
      GaussLegendre(kShapWidths[g], t, w);
      std::copy(t.begin(), t.end(), r->t[g].begin());
      std::copy(w.begin(), w.end(), r->w[g].begin());
    }
    return r;
  }();
  return *q;
}

absl::StatusOr<ForestLayout> ForestLayout::Build(const TreeEnsemble& m) {
  if (m.format != ModelFormat::kXgboost) {
    return absl::InvalidArgumentError(
        "the CUDA backend scores XGBoost models (float32 splits); this LightGBM model (double "
        "thresholds) scores on the CPU backend");
  }
  if (m.num_groups != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the CUDA backend scores single-output models; this one has ", m.num_groups, " groups"));
  }
  VIGIL_RETURN_IF_ERROR(m.Validate());
  if (m.feature_names.size() > kMaxInputs) {
    return absl::InvalidArgumentError(absl::StrCat("the CUDA backend takes at most ", kMaxInputs,
                                                   " model features; this model has ",
                                                   m.feature_names.size()));
  }
  ForestLayout f;
  f.num_inputs = static_cast<uint32_t>(m.feature_names.size());
  f.base_margin = static_cast<float>(m.base_margin[0]);
  f.shap_bias = m.base_margin[0];
  f.nodes.reserve(m.num_nodes());
  std::vector<Path> paths;
  for (size_t t = 0; t < m.num_trees(); ++t) {
    // Breadth-first: a node's children get the next two free slots, left then right.
    const auto base = static_cast<uint32_t>(f.nodes.size());
    f.tree_root.push_back(base);
    std::deque<std::pair<int32_t, int>> queue = {{static_cast<int32_t>(m.tree_begin[t]), 0}};
    uint32_t next = base + 1;
    int depth = 0;
    while (!queue.empty()) {
      const auto [model_node, level] = queue.front();
      queue.pop_front();
      const auto u = static_cast<size_t>(model_node);
      const auto self = static_cast<uint32_t>(f.nodes.size());
      depth = std::max(depth, level);
      if (m.is_leaf(u)) {
        f.nodes.push_back({static_cast<float>(m.value[u]), LeafWord(f.num_inputs)});
        continue;
      }
      const uint32_t offset = next - self;
      if (offset > kMaxChildOffset) {
        return absl::InvalidArgumentError(
            absl::StrCat("tree ", t, " is too wide for the CUDA layout (a child ", offset,
                         " nodes after its parent; at most ", kMaxChildOffset, ")"));
      }
      f.nodes.push_back({static_cast<float>(m.threshold[u]),
                         InternalWord(static_cast<uint32_t>(m.feature[u]), m.default_left[u] != 0,
                                      offset)});
      next += 2;
      queue.push_back({m.left[u], level + 1});
      queue.push_back({m.right[u], level + 1});
    }
    if (depth > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("tree ", t, " is ", depth, " levels deep; the CUDA layout takes 255"));
    }
    f.tree_depth.push_back(static_cast<uint8_t>(depth));

    // Root-to-leaf paths, depth first. A stack entry is a node, the length of the path above
    // its edge, and that edge.
    struct Entry {
      int32_t node;
      size_t above;
      PathEdge edge;
    };
    std::vector<PathEdge> path;
    std::vector<Entry> stack = {{static_cast<int32_t>(m.tree_begin[t]), 0, {}}};
    while (!stack.empty()) {
      const Entry e = stack.back();
      stack.pop_back();
      path.resize(e.above);
      if (e.node != static_cast<int32_t>(m.tree_begin[t])) path.push_back(e.edge);
      const auto u = static_cast<size_t>(e.node);
      if (m.is_leaf(u)) {
        paths.push_back(MergePath(path, m.value[u]));
        double weight = 1;
        for (const PathEdge& p : path) weight *= p.share;
        f.shap_bias += weight * m.value[u];
        if (paths.back().input.size() > static_cast<size_t>(kMaxShapElements)) {
          return absl::InvalidArgumentError(
              absl::StrCat("tree ", t, " has a path through ", paths.back().input.size(),
                           " distinct features; GPU TreeSHAP takes at most ", kMaxShapElements));
        }
        continue;
      }
      const auto edge = [&](int32_t child, bool left) {
        const auto c = static_cast<size_t>(child);
        // A node no training row reached has no cover shares; both sides count half (as the
        // CPU explainer counts them).
        const double share = m.cover[u] > 0 ? m.cover[c] / m.cover[u] : 0.5;
        return PathEdge{m.feature[u],
                        {static_cast<float>(m.threshold[u]), static_cast<uint8_t>(left),
                         m.default_left[u]},
                        share};
      };
      stack.push_back({m.right[u], path.size(), edge(m.right[u], false)});
      stack.push_back({m.left[u], path.size(), edge(m.left[u], true)});
    }
  }

  // Flattened, grouped by quadrature width (stable: tree order within a group).
  std::vector<std::vector<uint32_t>> by_group(kShapWidths.size());
  for (size_t p = 0; p < paths.size(); ++p) {
    by_group[static_cast<size_t>(WidthGroup(paths[p].input.size()))].push_back(
        static_cast<uint32_t>(p));
  }
  f.path_element_begin.push_back(0);
  f.element_edge_begin.push_back(0);
  for (size_t g = 0; g < kShapWidths.size(); ++g) {
    f.group_begin[g] = static_cast<uint32_t>(f.path_value.size());
    for (uint32_t p : by_group[g]) {
      const Path& path = paths[p];
      f.path_value.push_back(path.value);
      for (size_t k = 0; k < path.input.size(); ++k) {
        f.element_input.push_back(path.input[k]);
        f.element_zero.push_back(path.zero[k]);
        f.edges.insert(f.edges.end(), path.edges[k].begin(), path.edges[k].end());
        f.element_edge_begin.push_back(static_cast<uint32_t>(f.edges.size()));
      }
      f.path_element_begin.push_back(static_cast<uint32_t>(f.element_input.size()));
    }
  }
  f.group_begin[kShapWidths.size()] = static_cast<uint32_t>(f.path_value.size());
  return f;
}

float ForestLayout::Margin(const float* x) const {
  float margin = base_margin;
  for (size_t t = 0; t < tree_root.size(); ++t) {
    uint32_t i = tree_root[t];
    for (int d = tree_depth[t]; d > 0; --d) {
      i = StepFrom(i, nodes[i], ExpandedSlot(x, num_inputs, NodeSlot(nodes[i].word)));
    }
    margin += nodes[i].value;
  }
  return margin;
}

void ForestLayout::ShapValues(const float* x, absl::Span<double> out) const {
  std::fill(out.begin(), out.end(), 0.0);
  out[num_inputs] = shap_bias;
  const ShapQuadrature& quadrature = ShapQuadrature::Get();
  for (size_t g = 0; g < kShapWidths.size(); ++g) {
    const auto width = static_cast<size_t>(kShapWidths[g]);
    const double* t = quadrature.t[g].data();
    const double* w = quadrature.w[g].data();
    for (uint32_t p = group_begin[g]; p < group_begin[g + 1]; ++p) {
      const uint32_t begin = path_element_begin[p], end = path_element_begin[p + 1];
      // o of each element, and the products over all elements at each quadrature node.
      uint64_t one = 0;
      double product[32];
      std::fill(product, product + width, 1.0);
      for (uint32_t k = begin; k < end; ++k) {
        bool follows = true;
        for (uint32_t e = element_edge_begin[k]; e < element_edge_begin[k + 1]; ++e) {
          follows = follows && Follows(x[element_input[k]], edges[e]);
        }
        if (follows) one |= uint64_t{1} << (k - begin);
        const double z = element_zero[k], o = follows ? 1.0 : 0.0;
        for (size_t q = 0; q < width; ++q) product[q] *= z + (o - z) * t[q];
      }
      for (uint32_t k = begin; k < end; ++k) {
        const double z = element_zero[k];
        const double o = (one >> (k - begin)) & 1 ? 1.0 : 0.0;
        if (o == z) continue;  // no contribution (and a zero factor when both are 0)
        double sum = 0;
        for (size_t q = 0; q < width; ++q) sum += w[q] * product[q] / (z + (o - z) * t[q]);
        out[element_input[k]] += path_value[p] * (o - z) * sum;
      }
    }
  }
}

}  // namespace vigil::cuda
