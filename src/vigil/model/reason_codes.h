// Reason codes: the features that moved a model's score most, in the form a Decision carries.
#ifndef VIGIL_MODEL_REASON_CODES_H_
#define VIGIL_MODEL_REASON_CODES_H_

#include <vector>

#include "absl/types/span.h"
#include "vigil/core/decision.h"
#include "vigil/model/tree_shap.h"

namespace vigil {

// The k features of output group "group" with the largest |contribution| (ties: model feature
// order), largest first; features with a zero contribution are never reasons. Each is a
// Reason of kind kModel: code = feature name, contribution = its SHAP value (margin units),
// text = "<name>=<value> (+0.4213)" with the value as scored ("missing" for NaN).
// REQUIRES: contributions came from explainer.Explain(row, ...).
std::vector<Reason> TopReasons(const TreeShapExplainer& explainer, absl::Span<const double> row,
                               absl::Span<const double> contributions, int k, int group = 0);

}  // namespace vigil

#endif  // VIGIL_MODEL_REASON_CODES_H_
