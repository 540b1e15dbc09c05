// Loads a model file of either supported format, told apart by content: XGBoost JSON starts
// with '{', a LightGBM text model with a "tree" line.
#ifndef VIGIL_MODEL_MODEL_FILE_H_
#define VIGIL_MODEL_MODEL_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

// Largest model file accepted (a 5,000-tree depth-10 XGBoost JSON is ~1 GB; we stop well short).
inline constexpr size_t kMaxModelFileBytes = size_t{512} << 20;

absl::StatusOr<std::shared_ptr<const TreeEnsemble>> LoadModelFile(const std::string& path);
absl::StatusOr<std::shared_ptr<const TreeEnsemble>> ParseModel(std::string_view content,
                                                               std::string_view source);

}  // namespace vigil

#endif  // VIGIL_MODEL_MODEL_FILE_H_
