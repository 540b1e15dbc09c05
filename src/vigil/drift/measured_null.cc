#include "vigil/drift/measured_null.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/string_view.h"

namespace vigil::drift {
namespace {

constexpr char kFormat[] = "vigil.drift-null.v1";

}  // namespace

std::vector<double> MeasuredNull::Compress(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  if (scores.size() <= kMaxScores) return scores;
  std::vector<double> out;
  out.reserve(kMaxScores);
  const double step = static_cast<double>(scores.size() - 1) / static_cast<double>(kMaxScores - 1);
  for (size_t i = 0; i < kMaxScores; ++i) {
    out.push_back(scores[static_cast<size_t>(std::llround(static_cast<double>(i) * step))]);
  }
  return out;
}

std::string MeasuredNull::ToJson() const {
  nlohmann::json root = {{"format", kFormat},
                         {"feature_schema_version", feature_schema_version},
                         {"weights", {{"kl", weights.kl}, {"js", weights.js}, {"psi", weights.psi}}},
                         {"pseudo_count", pseudo_count}};
  nlohmann::json list = nlohmann::json::array();
  for (const Window& w : windows) {
    list.push_back({{"name", w.spec.name},
                    {"size_s", w.spec.size.count()},
                    {"slide_s", w.spec.slide.count()},
                    {"half_life_s", w.spec.decay_half_life.count()},
                    {"evaluations", w.evaluations},
                    {"subjects", w.scores}});
  }
  root["windows"] = std::move(list);
  return root.dump();
}

absl::StatusOr<MeasuredNull> MeasuredNull::Parse(std::string_view json, std::string_view file) {
  const nlohmann::json root = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  const auto error = [&](std::string_view where, std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(file), ": ", ToAbsl(where), ": ", ToAbsl(what)));
  };
  if (root.is_discarded() || !root.is_object()) return error("$", "not a JSON object");
  if (!root.contains("format") || root["format"] != kFormat) {
    return error("format", absl::StrCat("missing or not \"", kFormat, "\""));
  }
  MeasuredNull out;
  if (!root.contains("feature_schema_version") || !root["feature_schema_version"].is_string()) {
    return error("feature_schema_version", "missing or not a string");
  }
  out.feature_schema_version = root["feature_schema_version"].get<std::string>();
  for (const char* key : {"kl", "js", "psi"}) {
    if (!root.contains("weights") || !root["weights"].contains(key) ||
        !root["weights"][key].is_number()) {
      return error(absl::StrCat("weights.", key), "missing or not a number");
    }
  }
  out.weights = {root["weights"]["kl"].get<double>(), root["weights"]["js"].get<double>(),
                 root["weights"]["psi"].get<double>()};
  if (!root.contains("pseudo_count") || !root["pseudo_count"].is_number()) {
    return error("pseudo_count", "missing or not a number");
  }
  out.pseudo_count = root["pseudo_count"].get<double>();
  if (!root.contains("windows") || !root["windows"].is_array()) {
    return error("windows", "missing or not an array");
  }
  for (size_t i = 0; i < root["windows"].size(); ++i) {
    const nlohmann::json& w = root["windows"][i];
    const std::string where = absl::StrCat("windows[", i, "]");
    if (!w.is_object() || !w.contains("name") || !w["name"].is_string()) {
      return error(where, "not an object with a \"name\"");
    }
    Window window;
    window.spec.name = w["name"].get<std::string>();
    for (const char* key : {"size_s", "slide_s", "half_life_s", "evaluations"}) {
      if (!w.contains(key) || !w[key].is_number_unsigned()) {
        return error(absl::StrCat(where, ".", key), "missing or not a whole number");
      }
    }
    window.spec.size = std::chrono::seconds(w["size_s"].get<int64_t>());
    window.spec.slide = std::chrono::seconds(w["slide_s"].get<int64_t>());
    window.spec.decay_half_life = std::chrono::seconds(w["half_life_s"].get<int64_t>());
    window.evaluations = w["evaluations"].get<uint64_t>();
    if (!w.contains("subjects") || !w["subjects"].is_object()) {
      return error(absl::StrCat(where, ".subjects"), "missing or not an object");
    }
    for (const auto& [subject, scores] : w["subjects"].items()) {
      const std::string at = absl::StrCat(where, ".subjects.", subject);
      if (!scores.is_array() || scores.empty()) return error(at, "not a non-empty array");
      std::vector<double> values;
      for (const auto& v : scores) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
          return error(at, "holds something other than a score >= 0");
        }
        values.push_back(v.get<double>());
      }
      std::sort(values.begin(), values.end());
      window.scores.emplace(subject, std::move(values));
    }
    out.windows.push_back(std::move(window));
  }
  return out;
}

absl::StatusOr<MeasuredNull> MeasuredNull::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

}  // namespace vigil::drift
