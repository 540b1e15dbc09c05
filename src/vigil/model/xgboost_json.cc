#include "vigil/model/xgboost_json.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "simdjson.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

namespace dom = simdjson::dom;

// simdjson speaks std::string_view; this Abseil's StrCat wants its own string_view.
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(std::string_view path, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(A(source_), ": XGBoost model ", A(path), ": ", A(what)));
  }
  absl::Status Unsupported(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(A(source_), ": unsupported: ", A(what)));
  }

  absl::StatusOr<dom::element> Field(dom::element parent, std::string_view path,
                                     std::string_view key) const {
    dom::element e;
    if (parent[key].get(e) != simdjson::SUCCESS) {
      return Error(absl::StrCat(A(path), ".", A(key)), "missing");
    }
    return e;
  }
  absl::StatusOr<std::string_view> String(dom::element parent, std::string_view path,
                                          std::string_view key) const {
    VIGIL_ASSIGN_OR_RETURN(dom::element e, Field(parent, path, key));
    std::string_view s;
    if (e.get(s) != simdjson::SUCCESS)
      return Error(absl::StrCat(A(path), ".", A(key)), "not a string");
    return s;
  }
  // XGBoost writes its learner parameters as strings ("5E-1", "0").
  absl::StatusOr<double> NumberString(dom::element parent, std::string_view path,
                                      std::string_view key) const {
    VIGIL_ASSIGN_OR_RETURN(std::string_view s, String(parent, path, key));
    const std::string text(s);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
      return Error(absl::StrCat(A(path), ".", A(key)),
                   absl::StrCat("'", text, "' is not a number"));
    }
    return v;
  }
  absl::StatusOr<dom::array> Array(dom::element parent, std::string_view path, std::string_view key,
                                   size_t expected_size) const {
    VIGIL_ASSIGN_OR_RETURN(dom::element e, Field(parent, path, key));
    dom::array a;
    if (e.get(a) != simdjson::SUCCESS)
      return Error(absl::StrCat(A(path), ".", A(key)), "not an array");
    if (expected_size != SIZE_MAX && a.size() != expected_size) {
      return Error(absl::StrCat(A(path), ".", A(key)),
                   absl::StrCat(a.size(), " entries, expected ", expected_size));
    }
    return a;
  }

 private:
  std::string_view source_;
};

// A JSON number as the float32 XGBoost stored (its JSON holds float32 values).
bool AsFloat(dom::element e, float* out) {
  double d;
  if (e.get(d) != simdjson::SUCCESS) {
    int64_t i;
    if (e.get(i) != simdjson::SUCCESS) return false;
    d = static_cast<double>(i);
  }
  *out = static_cast<float>(d);
  return std::isfinite(*out);
}

bool AsInt(dom::element e, int64_t* out) {
  if (e.get(*out) == simdjson::SUCCESS) return true;
  uint64_t u;
  if (e.get(u) == simdjson::SUCCESS && u <= INT64_MAX) {
    *out = static_cast<int64_t>(u);
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<TreeEnsemble> LoadXgboostJson(std::string_view json, std::string_view source) {
  Reader r(source);
  dom::parser parser;
  dom::element root;
  const simdjson::padded_string padded(json);
  if (const auto ec = parser.parse(padded).get(root); ec != simdjson::SUCCESS) {
    return r.Error("", absl::StrCat("not valid JSON: ", simdjson::error_message(ec)));
  }
  VIGIL_ASSIGN_OR_RETURN(dom::element learner, r.Field(root, "", "learner"));
  VIGIL_ASSIGN_OR_RETURN(dom::element booster, r.Field(learner, "learner", "gradient_booster"));
  VIGIL_ASSIGN_OR_RETURN(std::string_view booster_name,
                         r.String(booster, "learner.gradient_booster", "name"));
  if (booster_name != "gbtree") {
    return r.Unsupported(
        absl::StrCat("booster '", A(booster_name), "' (only gbtree is supported)"));
  }
  VIGIL_ASSIGN_OR_RETURN(dom::element params, r.Field(learner, "learner", "learner_model_param"));
  VIGIL_ASSIGN_OR_RETURN(double base_score,
                         r.NumberString(params, "learner.learner_model_param", "base_score"));
  VIGIL_ASSIGN_OR_RETURN(double num_class,
                         r.NumberString(params, "learner.learner_model_param", "num_class"));
  VIGIL_ASSIGN_OR_RETURN(double num_feature,
                         r.NumberString(params, "learner.learner_model_param", "num_feature"));
  if (num_feature < 1 || num_feature > 1e6 || num_class < 0 || num_class > 1e4) {
    return r.Error("learner.learner_model_param", "num_feature or num_class out of range");
  }
  VIGIL_ASSIGN_OR_RETURN(dom::element objective, r.Field(learner, "learner", "objective"));
  VIGIL_ASSIGN_OR_RETURN(std::string_view objective_name,
                         r.String(objective, "learner.objective", "name"));

  TreeEnsemble m;
  m.format = ModelFormat::kXgboost;
  m.objective = std::string(objective_name);
  m.num_groups = num_class >= 2 ? static_cast<int>(num_class) : 1;
  // The base margin as XGBoost 1.7 computes it, in float32 (ProbToMargin of the objective).
  const auto base = static_cast<float>(base_score);
  float margin = base;
  if (objective_name == "binary:logistic" || objective_name == "reg:logistic") {
    if (!(base > 0 && base < 1)) {
      return r.Error("learner.learner_model_param.base_score",
                     "must be in (0, 1) for a logistic objective");
    }
    m.link = ModelLink::kSigmoid;
    margin = -std::log(1.0f / base - 1.0f);
  } else if (objective_name == "binary:logitraw" || objective_name == "reg:squarederror" ||
             objective_name == "reg:linear") {
    m.link = ModelLink::kIdentity;
  } else if (objective_name == "multi:softprob" || objective_name == "multi:softmax") {
    m.link = ModelLink::kSoftmax;
  } else {
    return r.Unsupported(absl::StrCat("objective '", A(objective_name), "'"));
  }
  m.base_margin.assign(static_cast<size_t>(m.num_groups), static_cast<double>(margin));

  const auto n_features = static_cast<size_t>(num_feature);
  dom::element names_element;
  dom::array names;
  if (learner["feature_names"].get(names_element) == simdjson::SUCCESS &&
      names_element.get(names) == simdjson::SUCCESS && names.size() > 0) {
    if (names.size() != n_features) {
      return r.Error("learner.feature_names",
                     absl::StrCat(names.size(), " names for ", n_features, " features"));
    }
    for (dom::element n : names) {
      std::string_view s;
      if (n.get(s) != simdjson::SUCCESS) return r.Error("learner.feature_names", "not a string");
      m.feature_names.emplace_back(s);
    }
  } else {
    // A model trained without names: XGBoost's own default names.
    for (size_t i = 0; i < n_features; ++i) m.feature_names.push_back(absl::StrCat("f", i));
  }

  VIGIL_ASSIGN_OR_RETURN(dom::element model, r.Field(booster, "learner.gradient_booster", "model"));
  VIGIL_ASSIGN_OR_RETURN(dom::array trees,
                         r.Array(model, "learner.gradient_booster.model", "trees", SIZE_MAX));
  VIGIL_ASSIGN_OR_RETURN(dom::array tree_info, r.Array(model, "learner.gradient_booster.model",
                                                       "tree_info", trees.size()));
  for (dom::element g : tree_info) {
    int64_t group;
    if (!AsInt(g, &group))
      return r.Error("learner.gradient_booster.model.tree_info", "not an integer");
    m.tree_group.push_back(static_cast<int32_t>(group));
  }
  m.tree_begin.push_back(0);
  size_t t = 0;
  for (dom::element tree : trees) {
    const std::string path = absl::StrCat("learner.gradient_booster.model.trees[", t, "]");
    VIGIL_ASSIGN_OR_RETURN(dom::array left, r.Array(tree, path, "left_children", SIZE_MAX));
    const size_t n = left.size();
    if (n == 0 || n > (size_t{1} << 24)) return r.Error(path, "number of nodes out of range");
    VIGIL_ASSIGN_OR_RETURN(dom::array right, r.Array(tree, path, "right_children", n));
    VIGIL_ASSIGN_OR_RETURN(dom::array split_index, r.Array(tree, path, "split_indices", n));
    VIGIL_ASSIGN_OR_RETURN(dom::array split_condition, r.Array(tree, path, "split_conditions", n));
    VIGIL_ASSIGN_OR_RETURN(dom::array default_left, r.Array(tree, path, "default_left", n));
    VIGIL_ASSIGN_OR_RETURN(dom::array hessian, r.Array(tree, path, "sum_hessian", n));
    dom::element split_type_element;
    dom::array split_type;
    const bool has_split_type = tree["split_type"].get(split_type_element) == simdjson::SUCCESS &&
                                split_type_element.get(split_type) == simdjson::SUCCESS;
    const auto offset = static_cast<int32_t>(m.num_nodes());
    auto li = left.begin(), ri = right.begin(), si = split_index.begin(),
         ci = split_condition.begin(), di = default_left.begin(), hi = hessian.begin();
    auto ti = has_split_type ? split_type.begin() : split_type.end();
    for (size_t i = 0; i < n; ++i, ++li, ++ri, ++si, ++ci, ++di, ++hi) {
      int64_t l, rt, f, d;
      float c, h;
      if (!AsInt(*li, &l) || !AsInt(*ri, &rt) || !AsInt(*si, &f) || !AsInt(*di, &d) ||
          !AsFloat(*ci, &c) || !AsFloat(*hi, &h)) {
        return r.Error(absl::StrCat(A(path), " node ", i), "a field is not a finite number");
      }
      if (has_split_type && ti != split_type.end()) {
        int64_t type;
        if (!AsInt(*ti, &type))
          return r.Error(absl::StrCat(A(path), ".split_type"), "not an integer");
        if (type != 0 && l != -1) {
          return r.Unsupported(absl::StrCat("categorical split in tree ", t, " node ", i));
        }
        ++ti;
      }
      const bool leaf = l == -1;
      if (!leaf &&
          (l < 0 || rt < 0 || static_cast<size_t>(l) >= n || static_cast<size_t>(rt) >= n)) {
        return r.Error(absl::StrCat(A(path), " node ", i), "child index out of range");
      }
      if (!leaf && (f < 0 || static_cast<size_t>(f) >= n_features)) {
        return r.Error(absl::StrCat(A(path), " node ", i),
                       absl::StrCat("split feature ", f, " outside [0, ", n_features, ")"));
      }
      m.feature.push_back(leaf ? -1 : static_cast<int32_t>(f));
      m.left.push_back(leaf ? -1 : offset + static_cast<int32_t>(l));
      m.right.push_back(leaf ? -1 : offset + static_cast<int32_t>(rt));
      // A leaf's output is stored in split_conditions.
      m.threshold.push_back(leaf ? 0.0 : static_cast<double>(c));
      m.value.push_back(leaf ? static_cast<double>(c) : 0.0);
      m.default_left.push_back(d != 0 ? 1 : 0);
      m.missing.push_back(MissingType::kNaN);
      m.cover.push_back(static_cast<double>(h));
    }
    m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
    ++t;
  }
  if (const absl::Status s = m.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(A(source), ": ", s.message()));
  }
  return m;
}

}  // namespace vigil
