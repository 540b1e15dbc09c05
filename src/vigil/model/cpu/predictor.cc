#include "vigil/model/cpu/predictor.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

// LightGBM's kZeroThreshold: |x| at or below it counts as zero for missing type Zero.
constexpr double kLightGbmZero = static_cast<double>(1e-35f);

}  // namespace

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
  p.nodes_.resize(model->num_nodes());
  for (size_t i = 0; i < model->num_nodes(); ++i) {
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
  p.model_ = std::move(model);
  return p;
}

template <ModelFormat kFormat>
inline int32_t CpuPredictor::Leaf(int32_t node, const double* row) const {
  const Node* nodes = nodes_.data();
  for (;;) {
    const Node& n = nodes[node];
    if (n.column == kLeaf) return node;
    double x = row[n.column];
    if constexpr (kFormat == ModelFormat::kXgboost) {
      // XGBoost stores inputs as float32 and compares in float32.
      node = std::isnan(x) ? (n.default_left ? n.left : n.right)
             : static_cast<float>(x) < static_cast<float>(n.threshold) ? n.left
                                                                       : n.right;
    } else {
      if (std::isnan(x) && n.missing != MissingType::kNaN) x = 0.0;
      const bool to_default =
          (n.missing == MissingType::kZero && x >= -kLightGbmZero && x <= kLightGbmZero) ||
          (n.missing == MissingType::kNaN && std::isnan(x));
      node = to_default ? (n.default_left ? n.left : n.right) : x <= n.threshold ? n.left : n.right;
    }
  }
}

template <ModelFormat kFormat>
void CpuPredictor::MarginsImpl(const double* row, double* margins) const {
  const int groups = model_->num_groups;
  if constexpr (kFormat == ModelFormat::kXgboost) {
    // float32 accumulation from the base margin, tree by tree, as XGBoost does.
    float acc[1] = {static_cast<float>(model_->base_margin[0])};
    if (groups == 1) {
      for (int32_t root : roots_)
        acc[0] += static_cast<float>(nodes_[Leaf<kFormat>(root, row)].threshold);
      margins[0] = acc[0];
      return;
    }
    for (int g = 0; g < groups; ++g) margins[g] = static_cast<float>(model_->base_margin[g]);
    // Multi-group: accumulate per group in float32 (kept in the double slots as floats).
    for (size_t t = 0; t < roots_.size(); ++t) {
      double& m = margins[groups_[t]];
      m = static_cast<float>(static_cast<float>(m) +
                             static_cast<float>(nodes_[Leaf<kFormat>(roots_[t], row)].threshold));
    }
  } else {
    for (int g = 0; g < groups; ++g) margins[g] = model_->base_margin[g];
    for (size_t t = 0; t < roots_.size(); ++t) {
      margins[groups_[t]] += nodes_[Leaf<kFormat>(roots_[t], row)].threshold;
    }
  }
}

void CpuPredictor::Margins(absl::Span<const double> row, absl::Span<double> margins) const {
  VIGIL_DCHECK(row.size() == row_width_ && margins.size() == static_cast<size_t>(num_groups()));
  if (model_->format == ModelFormat::kXgboost) {
    MarginsImpl<ModelFormat::kXgboost>(row.data(), margins.data());
  } else {
    MarginsImpl<ModelFormat::kLightGbm>(row.data(), margins.data());
  }
}

double CpuPredictor::Margin(absl::Span<const double> row) const {
  VIGIL_DCHECK(num_groups() == 1);
  double m;
  Margins(row, absl::MakeSpan(&m, 1));
  return m;
}

template <ModelFormat kFormat>
void CpuPredictor::BatchImpl(const double* rows, size_t n, double* margins) const {
  constexpr size_t kBlock = 64;
  const auto groups = static_cast<size_t>(model_->num_groups);
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t end = std::min(n, start + kBlock);
    if constexpr (kFormat == ModelFormat::kXgboost) {
      float acc[kBlock * 1];
      if (groups == 1) {
        const auto base = static_cast<float>(model_->base_margin[0]);
        for (size_t i = start; i < end; ++i) acc[i - start] = base;
        for (int32_t root : roots_) {
          for (size_t i = start; i < end; ++i) {
            acc[i - start] +=
                static_cast<float>(nodes_[Leaf<kFormat>(root, rows + i * row_width_)].threshold);
          }
        }
        for (size_t i = start; i < end; ++i) margins[i] = acc[i - start];
        continue;
      }
    }
    for (size_t i = start; i < end; ++i)
      MarginsImpl<kFormat>(rows + i * row_width_, margins + i * groups);
  }
}

void CpuPredictor::MarginsBatch(absl::Span<const double> rows, size_t n,
                                absl::Span<double> margins) const {
  VIGIL_CHECK(rows.size() >= n * row_width_ &&
              margins.size() >= n * static_cast<size_t>(num_groups()));
  if (model_->format == ModelFormat::kXgboost) {
    BatchImpl<ModelFormat::kXgboost>(rows.data(), n, margins.data());
  } else {
    BatchImpl<ModelFormat::kLightGbm>(rows.data(), n, margins.data());
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
