// ModelRegistry: the models a deployment may serve, in a directory, each named by the SHA-256
// of its bytes (`<data-dir>/models/<sha256>.model`), so a model reference names exactly one set
// of trees and an activation (champion, challenger, shadow) can be audited to the byte.
//
// Adding checks that the file loads (XGBoost JSON or LightGBM text) before it is stored; the
// copy is written to a temporary name and renamed, so a crash never leaves half a model under a
// valid name. The same bytes added twice are one entry.
//
// Thread safety: reentrant; concurrent Adds of the same model are harmless (same bytes, same
// name, atomic rename).
#ifndef VIGIL_DECISION_MODEL_REGISTRY_H_
#define VIGIL_DECISION_MODEL_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

// The name decisions give a model: "model@" and the first 12 hex digits of its file's SHA-256
// (its registry ref), whichever command loaded it, so that serve and replay name it alike.
std::string ModelVersionName(std::string_view ref);

class ModelRegistry {
 public:
  struct Entry {
    std::string ref;   // SHA-256 of the model file, lower-case hex
    std::string path;  // where the registry keeps it
    uint64_t bytes = 0;
  };

  // The registry in "dir", created when missing.
  static absl::StatusOr<ModelRegistry> Open(std::string dir);

  // Checks that "path" is a model and stores it. Errors: the file cannot be read (kNotFound),
  // is not a model (kInvalidArgument, with the loader's message), or cannot be stored.
  absl::StatusOr<Entry> Add(const std::string& path) const;
  // Every stored model, by ref.
  absl::StatusOr<std::vector<Entry>> List() const;
  // The model a reference names: its full ref or a prefix of at least 8 hex digits that only
  // one model has. kNotFound / kInvalidArgument (ambiguous or too short) otherwise.
  absl::StatusOr<Entry> Resolve(std::string_view ref) const;
  absl::StatusOr<std::shared_ptr<const TreeEnsemble>> Load(std::string_view ref) const;

  const std::string& dir() const { return dir_; }

 private:
  explicit ModelRegistry(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace vigil

#endif  // VIGIL_DECISION_MODEL_REGISTRY_H_
