// FeatureSchema: the named, versioned columns of a feature vector.
//
// Rules and models refer to features by name and bind to a schema at load time (index lookups
// happen once, never per transaction). The version travels with every FeatureVector so an audit
// record says which definition of "orig_out_count_24h" produced a value. It lives in core so
// model and rules can bind to it without depending on the features module.
//
// Thread safety: immutable after Create; share as std::shared_ptr<const FeatureSchema>.
#ifndef VIGIL_CORE_FEATURE_SCHEMA_H_
#define VIGIL_CORE_FEATURE_SCHEMA_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace vigil {

class FeatureSchema {
 public:
  // Names must be non-empty, unique, and made of [a-z0-9_] (so they are valid rule identifiers
  // and CSV headers).
  static absl::StatusOr<std::shared_ptr<const FeatureSchema>> Create(
      std::string version, std::vector<std::string> names);

  const std::string& version() const { return version_; }
  const std::vector<std::string>& names() const { return names_; }
  size_t size() const { return names_.size(); }
  std::optional<size_t> IndexOf(absl::string_view name) const;

  // Binds "wanted" names to indices (result[i] is the index of wanted[i]); the error lists every
  // missing name, so a model/schema mismatch is fixed in one round. Schema features that are not
  // wanted are fine (a model may use a subset).
  absl::StatusOr<std::vector<size_t>> Bind(const std::vector<std::string>& wanted) const;

 private:
  FeatureSchema() = default;
  std::string version_;
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, size_t> index_;
};

// Whether rows of schema "version" carry every column of schema "older" under the same name and
// with the same meaning, so that what was built on "older" (a model, a drift profile, a stored
// feature state) keeps working: true when they are equal, and for a later vigil.features
// version over an earlier one (v2 appends the long-memory columns to v1, v3 the counterparty
// risk to v2).
bool SchemaExtends(absl::string_view version, absl::string_view older);

// One row of features. Missing values are NaN.
struct FeatureVector {
  std::shared_ptr<const FeatureSchema> schema;
  std::vector<double> values;  // values.size() == schema->size()
};

}  // namespace vigil

#endif  // VIGIL_CORE_FEATURE_SCHEMA_H_
