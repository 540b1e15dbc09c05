// CpuScorer: the Scorer backed by CpuPredictor (scores) and TreeShapExplainer (reasons), in
// the calling thread.
//
// Thread safety: immutable after Create; Score and Explain may run concurrently.
#ifndef VIGIL_MODEL_CPU_CPU_SCORER_H_
#define VIGIL_MODEL_CPU_CPU_SCORER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/feature_schema.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/scorer.h"
#include "vigil/model/tree_ensemble.h"
#include "vigil/model/tree_shap.h"

namespace vigil {

class CpuScorer final : public Scorer {
 public:
  // Binds "model" to "schema". Fails if it does not bind, or if the model has more than one
  // output group or no probability link: a decision needs one probability.
  static absl::StatusOr<std::unique_ptr<CpuScorer>> Create(
      std::shared_ptr<const TreeEnsemble> model, const FeatureSchema& schema,
      std::string model_version);

  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return predictor_.row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override;
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override;
  // REQUIRES: row.size() == row_width().
  absl::StatusOr<Attribution> Attribute(absl::Span<const double> row) const override;
  bool latency_bounded() const override { return true; }

 private:
  CpuScorer(CpuPredictor predictor, TreeShapExplainer explainer, std::string version)
      : predictor_(std::move(predictor)),
        explainer_(std::move(explainer)),
        version_(std::move(version)) {}

  CpuPredictor predictor_;
  TreeShapExplainer explainer_;
  std::string version_;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_CPU_CPU_SCORER_H_
