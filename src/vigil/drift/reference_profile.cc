#include "vigil/drift/reference_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/string_view.h"

namespace vigil::drift {
namespace {

// One entry of "features" (or "score"): counts, and with present values the bins, sample,
// mean and standard deviation.
absl::StatusOr<FeatureReference> ParseEntry(const nlohmann::json& f, const std::string& where,
                                            std::string_view file) {
  const auto error = [&](std::string_view at, std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(file), ": ", ToAbsl(at), ": ", ToAbsl(what)));
  };
  if (!f.is_object()) return error(where, "not an object");
  FeatureReference ref;
  for (const char* key : {"count", "missing"}) {
    if (!f.contains(key) || !f[key].is_number_unsigned()) {
      return error(absl::StrCat(where, ".", key), "missing or not a whole number");
    }
  }
  ref.count = f["count"].get<uint64_t>();
  ref.missing = f["missing"].get<uint64_t>();
  if (ref.missing > ref.count) return error(where, "more missing values than rows");
  if (f.contains("bin_edges")) {
    const auto numbers = [&](const char* key) -> absl::StatusOr<std::vector<double>> {
      if (!f.contains(key) || !f[key].is_array()) {
        return error(absl::StrCat(where, ".", key), "missing or not an array");
      }
      std::vector<double> out;
      for (const auto& v : f[key]) {
        if (!v.is_number()) return error(absl::StrCat(where, ".", key), "holds a non-number");
        out.push_back(v.get<double>());
      }
      return out;
    };
    absl::StatusOr<std::vector<double>> edges = numbers("bin_edges");
    if (!edges.ok()) return edges.status();
    absl::StatusOr<std::vector<double>> counts = numbers("bin_counts");
    if (!counts.ok()) return counts.status();
    absl::StatusOr<std::vector<double>> sample = numbers("sample");
    if (!sample.ok()) return sample.status();
    absl::StatusOr<ReferenceBins> bins =
        ReferenceBins::Create(*std::move(edges), *std::move(counts));
    if (!bins.ok()) {
      return error(where, std::string_view(bins.status().message().data(),
                                           bins.status().message().size()));
    }
    ref.bins = *std::move(bins);
    if (sample->empty()) return error(absl::StrCat(where, ".sample"), "empty");
    ref.sample.emplace(*std::move(sample));
    for (const char* key : {"mean", "std"}) {
      if (!f.contains(key) || !f[key].is_number()) {
        return error(absl::StrCat(where, ".", key), "missing or not a number");
      }
    }
    ref.mean = f["mean"].get<double>();
    ref.stddev = f["std"].get<double>();
  }
  if (f.contains("dispersion")) {
    const std::string at = absl::StrCat(where, ".dispersion");
    if (!f["dispersion"].is_object()) return error(at, "not an object");
    for (const auto& [seconds, factor] : f["dispersion"].items()) {
      double length = 0;
      if (!absl::SimpleAtod(seconds, &length) || !(length > 0)) {
        return error(at, absl::StrCat("key '", seconds, "' is not a window length in seconds"));
      }
      if (!factor.is_number() || !(factor.get<double>() >= 1) || !std::isfinite(factor.get<double>())) {
        return error(absl::StrCat(at, ".", seconds), "not a number >= 1");
      }
      ref.dispersion.emplace_back(length, factor.get<double>());
    }
    std::sort(ref.dispersion.begin(), ref.dispersion.end());
  }
  return ref;
}

}  // namespace

absl::StatusOr<ReferenceProfile> ReferenceProfile::Parse(std::string_view json,
                                                         std::string_view file) {
  const nlohmann::json root = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  const auto error = [&](std::string_view where, std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(file), ": ", ToAbsl(where), ": ", ToAbsl(what)));
  };
  if (root.is_discarded() || !root.is_object()) {
    return error("$", "not a JSON object (a reference profile from tools/train.py)");
  }
  ReferenceProfile profile;
  if (!root.contains("feature_schema_version") || !root["feature_schema_version"].is_string()) {
    return error("feature_schema_version", "missing or not a string");
  }
  profile.schema_version_ = root["feature_schema_version"].get<std::string>();
  if (!root.contains("rows") || !root["rows"].is_number_unsigned()) {
    return error("rows", "missing or not a whole number");
  }
  profile.rows_ = root["rows"].get<uint64_t>();
  if (!root.contains("features") || !root["features"].is_object()) {
    return error("features", "missing or not an object");
  }
  for (const auto& [name, f] : root["features"].items()) {
    absl::StatusOr<FeatureReference> ref = ParseEntry(f, absl::StrCat("features.", name), file);
    if (!ref.ok()) return ref.status();
    profile.features_.emplace(name, *std::move(ref));
  }
  if (root.contains("score")) {
    absl::StatusOr<FeatureReference> ref = ParseEntry(root["score"], "score", file);
    if (!ref.ok()) return ref.status();
    profile.score_ = *std::move(ref);
  }
  return profile;
}

absl::StatusOr<ReferenceProfile> ReferenceProfile::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

double FeatureReference::DispersionAt(double seconds) const {
  if (dispersion.empty()) return 1.0;
  if (seconds <= dispersion.front().first) return dispersion.front().second;
  if (seconds >= dispersion.back().first) return dispersion.back().second;
  const auto hi = std::upper_bound(dispersion.begin(), dispersion.end(),
                                   std::make_pair(seconds, std::numeric_limits<double>::infinity()));
  const auto lo = hi - 1;
  const double f = std::log(seconds / lo->first) / std::log(hi->first / lo->first);
  return std::exp((1 - f) * std::log(lo->second) + f * std::log(hi->second));
}

const FeatureReference* ReferenceProfile::Find(std::string_view feature) const {
  const auto it = features_.find(feature);
  return it == features_.end() ? nullptr : &it->second;
}

}  // namespace vigil::drift
