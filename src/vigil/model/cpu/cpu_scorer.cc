#include "vigil/model/cpu/cpu_scorer.h"

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/reason_codes.h"

namespace vigil {

absl::StatusOr<std::unique_ptr<CpuScorer>> CpuScorer::Create(
    std::shared_ptr<const TreeEnsemble> model, const FeatureSchema& schema,
    std::string model_version) {
  if (model->num_groups != 1 || model->link != ModelLink::kSigmoid) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", model_version, ": objective '", model->objective,
                     "' does not give one probability; a decision needs a binary classifier "
                     "(e.g. binary:logistic)"));
  }
  VIGIL_ASSIGN_OR_RETURN(CpuPredictor predictor, CpuPredictor::Create(model, schema));
  VIGIL_ASSIGN_OR_RETURN(TreeShapExplainer explainer, TreeShapExplainer::Create(model, schema));
  return std::unique_ptr<CpuScorer>(
      new CpuScorer(std::move(predictor), std::move(explainer), std::move(model_version)));
}

absl::Status CpuScorer::Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                              const ScoreContext& context) const {
  if (context.backend != nullptr) *context.backend = ScoreBackend::kCpu;
  predictor_.MarginsBatch(rows, n, scores);
  for (size_t i = 0; i < n; ++i) predictor_.Transform(scores.subspan(i, 1), scores.subspan(i, 1));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Reason>> CpuScorer::Explain(absl::Span<const double> row, int k) const {
  std::vector<double> contributions(explainer_.output_size());
  explainer_.Explain(row, absl::MakeSpan(contributions));
  return TopReasons(explainer_, row, contributions, k);
}

absl::StatusOr<Attribution> CpuScorer::Attribute(absl::Span<const double> row) const {
  if (row.size() != row_width()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a row of ", row.size(), " values; the model reads rows of ", row_width()));
  }
  std::vector<double> contributions(explainer_.output_size());
  explainer_.Explain(row, absl::MakeSpan(contributions));
  const TreeEnsemble& m = explainer_.model();
  Attribution a;
  a.features.reserve(m.feature_names.size());
  for (size_t f = 0; f < m.feature_names.size(); ++f) {
    a.features.push_back({m.feature_names[f], row[explainer_.column(f)], contributions[f]});
  }
  a.bias = contributions[m.feature_names.size()];
  double margin = 0;
  predictor_.MarginsBatch(row, 1, absl::MakeSpan(&margin, 1));
  a.margin = margin;
  predictor_.Transform(absl::MakeSpan(&margin, 1), absl::MakeSpan(&a.score, 1));
  return a;
}

}  // namespace vigil
