#include "vigil/model/tree_shap.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/quadrature.h"

namespace vigil {
namespace {

// Quadrature widths the explainer is compiled for, in blocks of four lanes; a model uses the
// smallest that covers it.
constexpr int kWidths[] = {4, 8, 12, 16, 24, 32};
static_assert(kWidths[std::size(kWidths) - 1] * 2 == TreeShapExplainer::kMaxPathFeatures);

}  // namespace

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
  e.bias_ = m.base_margin;
  e.nodes_.reserve(m.num_nodes());
  e.tree_begin_.push_back(0);
  e.split_begin_.push_back(0);
  std::vector<double> mean, previous_merged(m.num_nodes(), 1.0);
  std::vector<int> distinct;        // distinct features on the path down to each node of a tree
  std::vector<int32_t> node_model;  // model node index of each node
  int most_distinct = 0;
  for (size_t t = 0; t < m.num_trees(); ++t) {
    const size_t begin = e.nodes_.size();
    Node* nodes = nullptr;  // the tree's nodes, refreshed after each push
    distinct.clear();
    // Preorder: pop a node, emit it, push its right then its left side.
    std::vector<std::pair<int32_t, int32_t>> stack = {{static_cast<int32_t>(m.tree_begin[t]), -1}};
    while (!stack.empty()) {
      const auto [model_node, parent] = stack.back();
      stack.pop_back();
      const auto u = static_cast<size_t>(model_node);
      const auto self = static_cast<int32_t>(e.nodes_.size() - begin);
      Node node;
      int path_distinct = 0;
      if (parent >= 0) {
        const int32_t parent_model = node_model[begin + static_cast<size_t>(parent)];
        const auto pm = static_cast<size_t>(parent_model);
        node.parent = parent;
        node.feature = m.feature[pm];
        node.is_left = m.left[pm] == model_node;
        // A node no training row reached has no cover shares; both sides count half.
        node.zero = m.cover[pm] > 0 ? m.cover[u] / m.cover[pm] : 0.5;
        node.merged = node.zero;
        for (int32_t a = parent; a > 0; a = nodes[a].parent) {
          if (nodes[a].feature == node.feature) {
            node.prev = a;
            node.merged *= nodes[a].merged;
            previous_merged[begin + static_cast<size_t>(self)] = nodes[a].merged;
            break;
          }
        }
        path_distinct = distinct[static_cast<size_t>(parent)] + (node.prev > 0 ? 0 : 1);
      }
      if (m.is_leaf(u)) {
        node.value = m.value[u];
        most_distinct = std::max(most_distinct, path_distinct);
      } else {
        e.splits_.push_back({static_cast<uint32_t>(self),
                             e.column_[static_cast<size_t>(m.feature[u])], m.threshold[u],
                             m.default_left[u], m.missing[u]});
        stack.push_back({m.right[u], self});
        stack.push_back({m.left[u], self});
      }
      e.nodes_.push_back(node);
      node_model.push_back(model_node);
      nodes = e.nodes_.data() + begin;
      distinct.push_back(path_distinct);
    }
    const size_t count = e.nodes_.size() - begin;
    e.tree_begin_.push_back(static_cast<uint32_t>(e.nodes_.size()));
    e.split_begin_.push_back(static_cast<uint32_t>(e.splits_.size()));
    e.max_tree_nodes_ = std::max(e.max_tree_nodes_, count);
    // The bias: each node's cover-weighted mean of the leaves below it, children first.
    mean.assign(count, 0.0);
    for (size_t n = count; n-- > 0;) {
      if (m.is_leaf(static_cast<size_t>(node_model[begin + n]))) mean[n] = nodes[n].value;
      if (n > 0) mean[static_cast<size_t>(nodes[n].parent)] += nodes[n].zero * mean[n];
    }
    e.bias_[static_cast<size_t>(m.tree_group[t])] += mean[0];
  }
  if (most_distinct > kMaxPathFeatures) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported: the model has a root-to-leaf path through ", most_distinct,
                     " distinct features; TreeSHAP is built for at most ", kMaxPathFeatures));
  }
  // A leaf's integrand has degree (distinct features - 1): ceil(distinct / 2) nodes suffice.
  const int needed = (most_distinct + 1) / 2;
  e.points_ = *std::find_if(std::begin(kWidths), std::end(kWidths),
                            [needed](int w) { return w >= needed; });
  const auto q_count = static_cast<size_t>(e.points_);
  std::vector<double> w;
  GaussLegendre(e.points_, e.t_, w);
  for (size_t q = 0; q < q_count; ++q) {
    e.one_minus_t_.push_back(1 - e.t_[q]);
    e.cold_.push_back(-w[q] / (1 - e.t_[q]));
  }
  e.lanes_.resize(e.nodes_.size() * 2 * q_count);
  for (size_t t = 0; t < m.num_trees(); ++t) {
    for (size_t n = e.tree_begin_[t]; n < e.tree_begin_[t + 1]; ++n) {
      double* lanes = e.lanes_.data() + n * 2 * q_count;
      const double z = e.nodes_[n].merged, zp = previous_merged[n];
      const bool root = n == e.tree_begin_[t];
      for (size_t q = 0; q < q_count; ++q) {
        lanes[q] = root ? 0.0 : w[q] * (1 - z) / (z + (1 - z) * e.t_[q]);
        lanes[q_count + q] = 1 / (zp * e.one_minus_t_[q] + e.t_[q]);
      }
    }
  }
  e.model_ = std::move(model);
  return e;
}

// The quantities, for one row and one tree, with o_e = 1 when the row takes edge e and Z, O the
// merged zero fraction and indicator of a node's feature down to it:
//   P[n](t) = product over the distinct features on the path to n of (Z + (O - Z) t)
//   H[n](t) = sum over the leaves l below n of value(l) P[l](t)
// A leaf's contribution to the feature of edge e on its path is
//   value(l) (O - Z) ∫ P[l](t) / (Z + (O - Z) t) dt,
// so edge e adds (O - Z) ∫ H[n](t) / (Z + (O - Z) t) dt for its node n: the hot or cold
// coefficient times H[n] at the quadrature nodes. A repeated feature's edge adds its merged
// coefficient and takes back the previous edge's, which that edge adds for the same leaves.
//
// Both passes are free of data-dependent branches (which a row's path would make
// unpredictable): a node without an earlier edge on its feature points at the root, which is
// always hot and whose hot coefficient is zero; when an earlier edge was cold the factor
// update reduces to the edge's cover share by arithmetic, not by a test.
namespace {

// Four lanes of doubles. Where AVX is not enabled GCC lowers the operations to SSE2 pairs; the
// results are the same either way (no FMA contraction under ISO C++). The helpers are always
// inlined, so the ABI note GCC gives for 32-byte vector arguments without AVX (-Wpsabi, off for
// this file in CMakeLists.txt) does not apply.
using V4 = double __attribute__((vector_size(32)));
__attribute__((always_inline)) inline V4 Load(const double* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((always_inline)) inline void Store(double* p, V4 v) {
  __builtin_memcpy(p, &v, sizeof v);
}
__attribute__((always_inline)) inline V4 Splat(double x) { return V4{} + x; }

}  // namespace

struct TreeShapExplainer::Kernel {
  template <int Q>
  __attribute__((always_inline)) static inline void Run(const TreeShapExplainer& e,
                                                        const double* row, double* out);
  template <int Q>
  __attribute__((target("avx2,fma"))) static void RunAvx2(const TreeShapExplainer& e,
                                                          const double* row, double* out) {
    Run<Q>(e, row, out);
  }
  template <int Q>
  static void RunBaseline(const TreeShapExplainer& e, const double* row, double* out) {
    Run<Q>(e, row, out);
  }
};

template <int Q>
inline void TreeShapExplainer::Kernel::Run(const TreeShapExplainer& e, const double* row,
                                           double* out) {
  static_assert(Q % 4 == 0);
  constexpr int kBlocks = Q / 4;
  struct Scratch {
    std::vector<double> p, h, phi;
    std::vector<uint8_t> hot, left;
  };
  thread_local Scratch s;
  const TreeEnsemble& m = *e.model_;
  const size_t features = m.feature_names.size();
  s.p.resize(e.max_tree_nodes_ * Q);
  s.h.resize(e.max_tree_nodes_ * Q);
  s.hot.resize(e.max_tree_nodes_);
  s.left.resize(e.max_tree_nodes_);
  s.phi.assign(features * Q * static_cast<size_t>(m.num_groups), 0.0);
  double* const p = s.p.data();
  double* const h = s.h.data();
  uint8_t* const hot = s.hot.data();
  uint8_t* const left = s.left.data();
  V4 t[kBlocks], one_minus_t[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    t[b] = Load(e.t_.data() + 4 * b);
    one_minus_t[b] = Load(e.one_minus_t_.data() + 4 * b);
  }
  const double* const cold = e.cold_.data();
  const bool xgboost = m.format == ModelFormat::kXgboost;

  for (size_t tree = 0; tree < m.num_trees(); ++tree) {
    const size_t begin = e.tree_begin_[tree];
    const size_t count = e.tree_begin_[tree + 1] - begin;
    if (count == 1) continue;  // a single leaf: all of it is bias
    const Node* nodes = e.nodes_.data() + begin;
    const double* lanes = e.lanes_.data() + begin * 2 * Q;
    double* phi = s.phi.data() + static_cast<size_t>(m.tree_group[tree]) * features * Q;
    for (size_t k = e.split_begin_[tree]; k < e.split_begin_[tree + 1]; ++k) {
      const Split& split = e.splits_[k];
      const double x = row[split.column];
      left[split.node] =
          xgboost ? TreeEnsemble::XgboostGoesLeft(x, split.threshold, split.default_left != 0)
                  : TreeEnsemble::LightGbmGoesLeft(x, split.threshold, split.missing,
                                                   split.default_left != 0);
    }
    for (int q = 0; q < Q; ++q) p[q] = 1;
    for (int q = 0; q < Q; ++q) h[q] = 0;
    hot[0] = 1;
    // Top-down: path products, and leaf values times them.
    for (size_t i = 1; i < count; ++i) {
      const Node& node = nodes[i];
      const auto parent = static_cast<size_t>(node.parent);
      const uint8_t o = node.is_left == left[parent];
      const uint8_t previous_hot = hot[static_cast<size_t>(node.prev)];
      hot[i] = o & previous_hot;
      // Previous edges hot: (Z (1 - t) + o t) / (Zp (1 - t) + t); cold: the cover share.
      const V4 on = Splat(o), ph = Splat(previous_hot), z = Splat(node.zero),
               merged = Splat(node.merged), value = Splat(node.value);
      const double* divide = lanes + i * 2 * Q + Q;
      const double* pp = p + parent * Q;
      double* pn = p + i * Q;
      double* hn = h + i * Q;
      for (int b = 0; b < kBlocks; ++b) {
        const V4 replaced = (merged * one_minus_t[b] + on * t[b]) * Load(divide + 4 * b);
        const V4 product = Load(pp + 4 * b) * (z + ph * (replaced - z));
        Store(pn + 4 * b, product);
        Store(hn + 4 * b, value * product);
      }
    }
    // Bottom-up: subtree sums, and each edge's share.
    for (size_t i = count - 1; i >= 1; --i) {
      const Node& node = nodes[i];
      const auto prev = static_cast<size_t>(node.prev);
      const double* add = hot[i] ? lanes + i * 2 * Q : cold;
      const double* take_back = hot[prev] ? lanes + prev * 2 * Q : cold;
      const double* hn = h + i * Q;
      double* hp = h + static_cast<size_t>(node.parent) * Q;
      double* f = phi + static_cast<size_t>(node.feature) * Q;
      for (int b = 0; b < kBlocks; ++b) {
        const V4 sub = Load(hn + 4 * b);
        Store(f + 4 * b, Load(f + 4 * b) + (Load(add + 4 * b) - Load(take_back + 4 * b)) * sub);
        Store(hp + 4 * b, Load(hp + 4 * b) + sub);
      }
    }
  }
  const size_t width = features + 1;
  for (int g = 0; g < m.num_groups; ++g) {
    const double* phi = s.phi.data() + static_cast<size_t>(g) * features * Q;
    double* o = out + static_cast<size_t>(g) * width;
    for (size_t f = 0; f < features; ++f) {
      double sum = 0;
      for (int q = 0; q < Q; ++q) sum += phi[f * Q + static_cast<size_t>(q)];
      o[f] = sum;
    }
    o[features] = e.bias_[static_cast<size_t>(g)];
  }
}

void TreeShapExplainer::Explain(absl::Span<const double> row, absl::Span<double> out) const {
  VIGIL_DCHECK(out.size() == output_size());
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const auto run = [&]<int Q>() {
    if (avx2) return Kernel::RunAvx2<Q>(*this, row.data(), out.data());
    return Kernel::RunBaseline<Q>(*this, row.data(), out.data());
  };
  switch (points_) {
    case 4:
      return run.operator()<4>();
    case 8:
      return run.operator()<8>();
    case 12:
      return run.operator()<12>();
    case 16:
      return run.operator()<16>();
    case 24:
      return run.operator()<24>();
    default:
      return run.operator()<32>();
  }
}

}  // namespace vigil
