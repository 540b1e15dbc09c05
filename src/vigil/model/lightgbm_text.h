// Loader for LightGBM's text model format (Booster.save_model / model.txt): a header of
// key=value lines, then "Tree=N" blocks (split_feature, threshold, decision_type, left_child,
// right_child, leaf_value, counts), then "end of trees". Numerical splits only: a categorical
// split (decision_type bit 0) or a linear tree is refused with an "unsupported: ..." error.
#ifndef VIGIL_MODEL_LIGHTGBM_TEXT_H_
#define VIGIL_MODEL_LIGHTGBM_TEXT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

// "source" names the input in error messages (a file path, say).
absl::StatusOr<TreeEnsemble> LoadLightGbmText(std::string_view text, std::string_view source);

}  // namespace vigil

#endif  // VIGIL_MODEL_LIGHTGBM_TEXT_H_
