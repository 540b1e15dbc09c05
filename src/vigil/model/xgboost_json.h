// Loader for XGBoost's JSON model format, as written by Booster.save_model("m.json") in
// xgboost 1.x: gbtree boosters with numeric splits. Categorical splits and the dart and
// gblinear boosters are refused with an "unsupported: ..." error naming what was found.
#ifndef VIGIL_MODEL_XGBOOST_JSON_H_
#define VIGIL_MODEL_XGBOOST_JSON_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

// "source" names the input in error messages (a file path, say).
absl::StatusOr<TreeEnsemble> LoadXgboostJson(std::string_view json, std::string_view source);

}  // namespace vigil

#endif  // VIGIL_MODEL_XGBOOST_JSON_H_
