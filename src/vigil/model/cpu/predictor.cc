#include "vigil/model/cpu/predictor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil {
absl::StatusOr<CpuPredictor> CpuPredictor::Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const FeatureSchema& schema) {
  return Create(std::move(model), schema.names(),
                absl::StrCat("feature schema ", schema.version()));
}

absl::StatusOr<CpuPredictor> CpuPredictor::Create(std::shared_ptr<const TreeEnsemble> model,
                                                  const std::vector<std::string>& columns,
                                                  std::string_view what) {
  VIGIL_RETURN_IF_ERROR(model->Validate());
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint32_t> column, BindFeatures(*model, columns, what));
  CpuPredictor p;
  p.row_width_ = columns.size();
  // XGBoost models are scored from their float32 layout (CompileFloat), LightGBM ones from this.
  if (model->format == ModelFormat::kLightGbm) p.nodes_.resize(model->num_nodes());
  for (size_t i = 0; i < p.nodes_.size(); ++i) {
    Node& n = p.nodes_[i];
    const bool leaf = model->is_leaf(i);
    n.threshold = leaf ? model->value[i] : model->threshold[i];
    n.column = leaf ? kLeaf : column[static_cast<size_t>(model->feature[i])];
    n.left = model->left[i];
    n.right = model->right[i];
    n.default_left = model->default_left[i];
    n.missing = model->missing[i];
  }
  for (size_t t = 0; t < model->num_trees(); ++t) {
    p.roots_.push_back(static_cast<int32_t>(model->tree_begin[t]));
    p.groups_.push_back(model->tree_group[t]);
  }
  p.inputs_ = std::move(column);
  p.model_ = std::move(model);
  if (p.model_->format == ModelFormat::kXgboost) p.CompileFloat();
  return p;
}

uint32_t CpuPredictor::OrderedKey(float f) {
  f += 0.0f;  // -0 becomes +0: they compare equal as floats, so they must share a key
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  // Negative floats order in reverse of their bits: flip them all; positive ones come after.
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

void CpuPredictor::CompileFloat() {
  const TreeEnsemble& m = *model_;
  const auto features = static_cast<uint32_t>(inputs_.size());
  float_nodes_.assign(m.num_nodes(), {});
  float_left_.assign(m.num_nodes(), 0);
  float_value_.assign(m.num_nodes(), 0.0f);
  uint32_t next = 0;  // next free slot
  for (size_t t = 0; t < m.num_trees(); ++t) {
    const uint32_t root = next++;
    float_roots_.push_back(root);
    // Breadth-first: slot root + i holds model node order[i]; an internal node's children get
    // two consecutive new slots.
    std::vector<int32_t> order = {static_cast<int32_t>(m.tree_begin[t])};
    int depth = 0;
    std::vector<int> level = {0};
    for (size_t i = 0; i < order.size(); ++i) {
      const auto n = static_cast<size_t>(order[i]);
      const size_t self = root + i;
      depth = std::max(depth, level[i]);
      if (m.is_leaf(n)) {
        float_nodes_[self] = {UINT32_MAX, 3 * features};
        float_left_[self] = static_cast<uint32_t>(self);
        float_value_[self] = static_cast<float>(m.value[n]);
        continue;
      }
      const auto feature = static_cast<uint32_t>(m.feature[n]);
      const auto threshold = static_cast<float>(m.threshold[n]);
      // Which copy of the feature: NaN as -inf goes left, as +inf right. With threshold -inf
      // nothing is below it, so a missing-left split reads the indicator (1 present, 0 missing)
      // against 0.5 instead; a present value then goes right, as it does against -inf.
      uint32_t input = m.default_left[n] ? feature : features + feature;
      float value = threshold;
      if (m.default_left[n] && threshold == -std::numeric_limits<float>::infinity()) {
        input = 2 * features + feature;
        value = 0.5f;
      }
      float_nodes_[self] = {OrderedKey(value), input};
      float_left_[self] = next;
      next += 2;
      order.push_back(m.left[n]);
      order.push_back(m.right[n]);
      level.push_back(level[i] + 1);
      level.push_back(level[i] + 1);
    }
    tree_depth_.push_back(static_cast<uint8_t>(std::min(depth, 255)));
  }
  for (size_t t = 0; t < tree_depth_.size(); t += kInterleave) {
    const size_t end = std::min(tree_depth_.size(), t + kInterleave);
    block_depth_.push_back(
        *std::max_element(tree_depth_.begin() + static_cast<std::ptrdiff_t>(t),
                          tree_depth_.begin() + static_cast<std::ptrdiff_t>(end)));
  }
}

void CpuPredictor::ExpandRow(const double* row, uint32_t* x) const {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  static const uint32_t kMinus = OrderedKey(-kInf), kPlus = OrderedKey(kInf),
                        kPresent = OrderedKey(1.0f), kMissing = OrderedKey(0.0f);
  const size_t features = inputs_.size();
  for (size_t i = 0; i < features; ++i) {
    const double v = row[inputs_[i]];
    const bool missing = std::isnan(v);
    const uint32_t key = OrderedKey(static_cast<float>(v));
    x[i] = missing ? kMinus : key;
    x[features + i] = missing ? kPlus : key;
    x[2 * features + i] = missing ? kMissing : kPresent;
  }
  x[3 * features] = 0;  // below every key: a leaf (threshold UINT32_MAX) stays put
}

void CpuPredictor::FloatMargins(const double* row, double* margins) const {
  constexpr size_t kStackWidth = 3 * 1024 + 1;
  uint32_t stack_x[kStackWidth];
  std::vector<uint32_t> heap_x;  // only for models with more than 1024 features
  uint32_t* x = stack_x;
  if (expanded_width() > kStackWidth) {
    heap_x.resize(expanded_width());
    x = heap_x.data();
  }
  ExpandRow(row, x);
  const int groups = model_->num_groups;
  constexpr int kStackGroups = 64;
  float acc[kStackGroups];
  std::vector<float> heap_acc;
  float* a = acc;
  if (groups > kStackGroups) {
    heap_acc.resize(static_cast<size_t>(groups));
    a = heap_acc.data();
  }
  for (int g = 0; g < groups; ++g) a[g] = static_cast<float>(model_->base_margin[g]);
  const size_t trees = float_roots_.size();
  for (size_t t = 0; t < trees; t += kInterleave) {
    const size_t k_end = std::min(kInterleave, trees - t);
    uint32_t idx[kInterleave];
    for (size_t k = 0; k < kInterleave; ++k) idx[k] = float_roots_[t + (k < k_end ? k : 0)];
    for (int d = block_depth_[t / kInterleave]; d > 0; --d) {
#pragma GCC unroll 16
      for (size_t k = 0; k < kInterleave; ++k) idx[k] = Step(idx[k], x);
    }
    // In tree order: float32 sums are order-sensitive.
    for (size_t k = 0; k < k_end; ++k) a[groups_[t + k]] += float_value_[idx[k]];
  }
  for (int g = 0; g < groups; ++g) margins[g] = a[g];
}

void CpuPredictor::FloatBatch(const double* rows, size_t n, double* margins) const {
  constexpr size_t kBlock = 64;
  const size_t width = expanded_width();
  const auto groups = static_cast<size_t>(model_->num_groups);
  std::vector<uint32_t> x(kBlock * width);
  std::vector<float> acc(kBlock * groups);
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t rows_here = std::min(kBlock, n - start);
    for (size_t r = 0; r < rows_here; ++r) {
      ExpandRow(rows + (start + r) * row_width_, &x[r * width]);
      for (size_t g = 0; g < groups; ++g)
        acc[r * groups + g] = static_cast<float>(model_->base_margin[g]);
    }
    for (size_t t = 0; t < float_roots_.size(); ++t) {
      const uint32_t root = float_roots_[t];
      const int depth = tree_depth_[t];
      const auto g = static_cast<size_t>(groups_[t]);
      for (size_t r0 = 0; r0 < rows_here; r0 += kRowInterleave) {
        const size_t k_end = std::min(kRowInterleave, rows_here - r0);
        uint32_t idx[kRowInterleave];
        const uint32_t* row_x[kRowInterleave];
        for (size_t k = 0; k < kRowInterleave; ++k) {
          idx[k] = root;
          row_x[k] = &x[(r0 + (k < k_end ? k : 0)) * width];
        }
        for (int d = depth; d > 0; --d) {
#pragma GCC unroll 8
          for (size_t k = 0; k < kRowInterleave; ++k) idx[k] = Step(idx[k], row_x[k]);
        }
        for (size_t k = 0; k < k_end; ++k) acc[(r0 + k) * groups + g] += float_value_[idx[k]];
      }
    }
    for (size_t r = 0; r < rows_here; ++r) {
      for (size_t g = 0; g < groups; ++g) margins[(start + r) * groups + g] = acc[r * groups + g];
    }
  }
}

// LightGBM: double comparisons, per-node missing types (TreeEnsemble::LightGbmGoesLeft).
inline int32_t CpuPredictor::Leaf(int32_t node, const double* row) const {
  const Node* nodes = nodes_.data();
  for (;;) {
    const Node& n = nodes[node];
    if (n.column == kLeaf) return node;
    node =
        TreeEnsemble::LightGbmGoesLeft(row[n.column], n.threshold, n.missing, n.default_left != 0)
            ? n.left
            : n.right;
  }
}

void CpuPredictor::DoubleMargins(const double* row, double* margins) const {
  for (int g = 0; g < model_->num_groups; ++g) margins[g] = model_->base_margin[g];
  for (size_t t = 0; t < roots_.size(); ++t) {
    margins[groups_[t]] += nodes_[Leaf(roots_[t], row)].threshold;
  }
}

void CpuPredictor::Margins(absl::Span<const double> row, absl::Span<double> margins) const {
  VIGIL_DCHECK(row.size() == row_width_ && margins.size() == static_cast<size_t>(num_groups()));
  if (model_->format == ModelFormat::kXgboost) {
    FloatMargins(row.data(), margins.data());
  } else {
    DoubleMargins(row.data(), margins.data());
  }
}

double CpuPredictor::Margin(absl::Span<const double> row) const {
  VIGIL_DCHECK(num_groups() == 1);
  double m;
  Margins(row, absl::MakeSpan(&m, 1));
  return m;
}

void CpuPredictor::MarginsBatch(absl::Span<const double> rows, size_t n,
                                absl::Span<double> margins) const {
  VIGIL_CHECK(rows.size() >= n * row_width_ &&
              margins.size() >= n * static_cast<size_t>(num_groups()));
  if (model_->format == ModelFormat::kXgboost) {
    FloatBatch(rows.data(), n, margins.data());
  } else {
    const auto groups = static_cast<size_t>(num_groups());
    for (size_t i = 0; i < n; ++i)
      DoubleMargins(rows.data() + i * row_width_, margins.data() + i * groups);
  }
}

void CpuPredictor::MarginsBatchParallel(absl::Span<const double> rows, size_t n,
                                        absl::Span<double> margins, int threads) const {
  constexpr size_t kMinRowsPerThread = 64;
  const size_t workers = std::min(static_cast<size_t>(std::max(threads, 1)),
                                  (n + kMinRowsPerThread - 1) / kMinRowsPerThread);
  if (workers <= 1) {
    MarginsBatch(rows, n, margins);
    return;
  }
  const auto groups = static_cast<size_t>(num_groups());
  // Contiguous slices, rounded to whole 64-row blocks so each thread walks full blocks.
  const size_t per = (n / workers + kMinRowsPerThread - 1) / kMinRowsPerThread * kMinRowsPerThread;
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w) {
    const size_t begin = std::min(n, w * per),
                 end = w + 1 == workers ? n : std::min(n, begin + per);
    if (begin >= end) break;
    pool.emplace_back([=, this] {
      MarginsBatch(rows.subspan(begin * row_width_, (end - begin) * row_width_), end - begin,
                   margins.subspan(begin * groups, (end - begin) * groups));
    });
  }
  for (std::thread& t : pool) t.join();
}

void CpuPredictor::Transform(absl::Span<const double> margins, absl::Span<double> out) const {
  VIGIL_DCHECK(margins.size() == out.size());
  const bool xgb = model_->format == ModelFormat::kXgboost;
  switch (model_->link) {
    case ModelLink::kIdentity:
      std::copy(margins.begin(), margins.end(), out.begin());
      return;
    case ModelLink::kSigmoid:
      for (size_t g = 0; g < margins.size(); ++g) {
        if (xgb) {
          const auto m = static_cast<float>(margins[g]);
          out[g] = 1.0f / (1.0f + std::exp(-m));
        } else {
          out[g] = 1.0 / (1.0 + std::exp(-model_->sigmoid_scale * margins[g]));
        }
      }
      return;
    case ModelLink::kSoftmax: {
      if (xgb) {
        float max = static_cast<float>(margins[0]);
        for (double m : margins) max = std::max(max, static_cast<float>(m));
        float sum = 0;
        for (size_t g = 0; g < margins.size(); ++g) {
          const float e = std::exp(static_cast<float>(margins[g]) - max);
          out[g] = e;
          sum += e;
        }
        for (double& o : out) o = static_cast<float>(o) / sum;
      } else {
        const double max = *std::max_element(margins.begin(), margins.end());
        double sum = 0;
        for (size_t g = 0; g < margins.size(); ++g) sum += (out[g] = std::exp(margins[g] - max));
        for (double& o : out) o /= sum;
      }
      return;
    }
  }
}

}  // namespace vigil
