// CpuPredictor: scores feature rows with a tree ensemble on the CPU, exactly as the library
// that trained it would (see TreeEnsemble for the decision and summation rules).
//
// Create() binds the model's features to a schema once: the compiled nodes index the caller's
// row directly, so scoring has no lookup and no error path. The single-row path allocates
// nothing and takes no lock.
//
// Thread safety: immutable after Create; any number of threads may score concurrently.
#ifndef VIGIL_MODEL_CPU_PREDICTOR_H_
#define VIGIL_MODEL_CPU_PREDICTOR_H_

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

class CpuPredictor {
 public:
  static absl::StatusOr<CpuPredictor> Create(std::shared_ptr<const TreeEnsemble> model,
                                             const FeatureSchema& schema);
  // The same for rows whose columns are "columns" (a CSV header, say); "what" names them in
  // the binding error.
  static absl::StatusOr<CpuPredictor> Create(std::shared_ptr<const TreeEnsemble> model,
                                             const std::vector<std::string>& columns,
                                             std::string_view what);

  const TreeEnsemble& model() const { return *model_; }
  int num_groups() const { return model_->num_groups; }
  // Row width the predictor was bound to (the schema's size).
  size_t row_width() const { return row_width_; }
  // The row columns the model reads: column_of_feature()[i] feeds model feature i.
  const std::vector<uint32_t>& column_of_feature() const { return inputs_; }

  // The margins (raw scores, one per output group) of one row.
  // REQUIRES: row.size() == row_width(), margins.size() == num_groups().
  void Margins(absl::Span<const double> row, absl::Span<double> margins) const;
  // Single-group models: the margin of one row.
  double Margin(absl::Span<const double> row) const;

  // Margins of n rows laid out one after another (row i at rows[i * row_width()]) into
  // margins[i * num_groups() + g]. XGBoost models walk each tree for a block of 64 rows at a
  // time, 8 rows interleaved, so the tree's nodes stay in cache and the walks overlap.
  void MarginsBatch(absl::Span<const double> rows, size_t n, absl::Span<double> margins) const;
  // The same on up to "threads" threads, each taking whole blocks of rows (results identical
  // to MarginsBatch). Threads are started per call: worth it for batches of hundreds of rows
  // and more; a caller with a steady stream of batches (the batcher) brings its own pool and
  // calls MarginsBatch on slices.
  void MarginsBatchParallel(absl::Span<const double> rows, size_t n, absl::Span<double> margins,
                            int threads) const;

  // The model's output for margins of one row: a probability (sigmoid) for binary models,
  // class probabilities (softmax) for multi-class ones, the margin itself for regression,
  // computed in the training library's precision. REQUIRES: out.size() == margins.size().
  void Transform(absl::Span<const double> margins, absl::Span<double> out) const;

 private:
  // LightGBM models: 24 bytes, double thresholds; a leaf has column == kLeaf and its output in
  // "threshold".
  struct Node {
    double threshold;
    uint32_t column;
    int32_t left;
    int32_t right;
    uint8_t default_left;
    MissingType missing;
  };
  static constexpr uint32_t kLeaf = UINT32_MAX;

  // XGBoost models are also compiled to a layout built for speed: each tree's nodes in
  // breadth-first order with siblings adjacent (right child = left + 1). Float32 values are
  // compared as 32-bit keys that order like the floats (OrderedKey), so a step down is an
  // integer comparison whose carry is added to the left child's index. Missing values need no
  // test in the walk: the row is expanded once (ExpandRow) into keys of its model features where
  // NaN reads -inf (for nodes whose missing side is left) or +inf (right), a missing-value
  // indicator (for the one split the copies cannot express: threshold -inf with missing left),
  // and a key below every threshold that a leaf reads against the largest key, so that a leaf
  // steps to itself and walking past it is harmless. Several independent walks (trees of one
  // row, rows of one tree) are interleaved, so their dependent loads overlap. The same
  // comparisons and summation order as XGBoost: identical results.
  struct FloatNode {
    uint32_t threshold;  // OrderedKey of the float32 threshold; a leaf: UINT32_MAX
    uint32_t input;      // index into the expanded row
  };
  static constexpr size_t kInterleave = 16;    // trees walked together for one row
  static constexpr size_t kRowInterleave = 8;  // rows walked together through one tree
  // Keys that order as the floats do (-0 is first made +0, which compares equal to it).
  static uint32_t OrderedKey(float f);
  // One step down from node i: right when not (x < threshold), i.e. key(x) >= key(threshold).
  uint32_t Step(size_t i, const uint32_t* x) const {
    return float_left_[i] +
           static_cast<uint32_t>(x[float_nodes_[i].input] >= float_nodes_[i].threshold);
  }
  size_t expanded_width() const { return 3 * inputs_.size() + 1; }
  void ExpandRow(const double* row, uint32_t* x) const;
  void CompileFloat();
  void FloatMargins(const double* row, double* margins) const;
  void FloatBatch(const double* rows, size_t n, double* margins) const;

  CpuPredictor() = default;
  int32_t Leaf(int32_t node, const double* row) const;
  void DoubleMargins(const double* row, double* margins) const;

  std::shared_ptr<const TreeEnsemble> model_;
  size_t row_width_ = 0;
  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  std::vector<int32_t> groups_;
  std::vector<uint32_t> inputs_;  // row column of each model feature
  std::vector<FloatNode> float_nodes_;
  std::vector<uint32_t> float_left_;  // per node: its left child; a leaf: itself
  std::vector<float> float_value_;    // per node: a leaf's output
  std::vector<uint32_t> float_roots_;
  std::vector<uint8_t> tree_depth_;   // per tree
  std::vector<uint8_t> block_depth_;  // per kInterleave consecutive trees: the deepest
};

}  // namespace vigil

#endif  // VIGIL_MODEL_CPU_PREDICTOR_H_
