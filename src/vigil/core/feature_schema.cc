#include "vigil/core/feature_schema.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace vigil {

absl::StatusOr<std::shared_ptr<const FeatureSchema>> FeatureSchema::Create(
    std::string version, std::vector<std::string> names) {
  if (version.empty()) return absl::InvalidArgumentError("feature schema version is empty");
  auto schema = std::shared_ptr<FeatureSchema>(new FeatureSchema());
  schema->version_ = std::move(version);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        })) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature name '", n, "' must be non-empty and use only [a-z0-9_]"));
    }
    if (!schema->index_.emplace(n, i).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate feature name '", n, "'"));
    }
  }
  schema->names_ = std::move(names);
  return std::shared_ptr<const FeatureSchema>(std::move(schema));
}

std::optional<size_t> FeatureSchema::IndexOf(absl::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::vector<size_t>> FeatureSchema::Bind(
    const std::vector<std::string>& wanted) const {
  std::vector<size_t> out;
  std::vector<std::string> missing;
  out.reserve(wanted.size());
  for (const std::string& w : wanted) {
    if (auto i = IndexOf(w)) {
      out.push_back(*i);
    } else {
      missing.push_back(w);
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "features not in schema ", version_, ": ", absl::StrJoin(missing, ", ")));
  }
  return out;
}

bool SchemaExtends(absl::string_view version, absl::string_view older) {
  if (version == older) return true;
  // Each version appends to the one before it: a later one extends every earlier one.
  constexpr absl::string_view kVersions[] = {"vigil.features.v1", "vigil.features.v2",
                                             "vigil.features.v3"};
  const auto* newer = std::find(std::begin(kVersions), std::end(kVersions), version);
  const auto* base = std::find(std::begin(kVersions), std::end(kVersions), older);
  return newer != std::end(kVersions) && base < newer;
}

}  // namespace vigil
