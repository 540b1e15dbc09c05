#include "vigil/model/tree_ensemble.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace vigil {

int TreeEnsemble::Depth(size_t tree) const {
  int depth = 0;
  std::vector<std::pair<int32_t, int>> stack = {{static_cast<int32_t>(tree_begin[tree]), 0}};
  while (!stack.empty()) {
    auto [node, d] = stack.back();
    stack.pop_back();
    depth = std::max(depth, d);
    if (!is_leaf(static_cast<size_t>(node))) {
      stack.push_back({left[static_cast<size_t>(node)], d + 1});
      stack.push_back({right[static_cast<size_t>(node)], d + 1});
    }
  }
  return depth;
}

absl::Status TreeEnsemble::Validate() const {
  const size_t n = num_nodes();
  if (threshold.size() != n || left.size() != n || right.size() != n || default_left.size() != n ||
      missing.size() != n || value.size() != n || cover.size() != n) {
    return absl::InternalError("model: node arrays of different lengths");
  }
  if (num_groups < 1) return absl::InvalidArgumentError("model: number of output groups < 1");
  if (base_margin.size() != static_cast<size_t>(num_groups)) {
    return absl::InvalidArgumentError("model: one base margin per output group expected");
  }
  if (num_trees() == 0) return absl::InvalidArgumentError("model: no trees");
  if (tree_begin.size() != num_trees() + 1 || tree_begin.front() != 0 || tree_begin.back() != n) {
    return absl::InvalidArgumentError("model: tree node ranges do not cover the nodes");
  }
  std::vector<uint8_t> reached(n, 0);
  for (size_t t = 0; t < num_trees(); ++t) {
    const auto where = [t](auto&&... parts) {
      return absl::InvalidArgumentError(absl::StrCat("model: tree ", t, ": ", parts...));
    };
    if (tree_group[t] < 0 || tree_group[t] >= num_groups) {
      return where("output group ", tree_group[t], " outside [0, ", num_groups, ")");
    }
    const int64_t begin = tree_begin[t], end = tree_begin[t + 1];
    if (begin >= end) return where("no nodes");
    std::vector<int64_t> stack = {begin};
    while (!stack.empty()) {
      const int64_t node = stack.back();
      stack.pop_back();
      const auto u = static_cast<size_t>(node);
      if (reached[u]++)
        return where("node ", node - begin, " is reached twice (a cycle or shared node)");
      if (!std::isfinite(value[u])) return where("node ", node - begin, " has a non-finite value");
      if (feature[u] < 0) continue;
      if (static_cast<size_t>(feature[u]) >= feature_names.size()) {
        return where("node ", node - begin, " splits on feature ", feature[u],
                     " but the model has ", feature_names.size(), " features");
      }
      if (std::isnan(threshold[u])) return where("node ", node - begin, " has a NaN threshold");
      for (int32_t child : {left[u], right[u]}) {
        if (child < begin || child >= end) {
          return where("node ", node - begin, " has a child outside the tree");
        }
        stack.push_back(child);
      }
    }
    for (int64_t node = begin; node < end; ++node) {
      if (!reached[static_cast<size_t>(node)]) {
        return where("node ", node - begin, " is not reachable from the root");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> BindFeatures(const TreeEnsemble& model,
                                                   const std::vector<std::string>& columns,
                                                   std::string_view what) {
  absl::flat_hash_map<std::string, uint32_t> index;
  for (size_t i = 0; i < columns.size(); ++i) index.emplace(columns[i], static_cast<uint32_t>(i));
  std::vector<uint32_t> column;
  std::vector<std::string> missing;
  for (const std::string& name : model.feature_names) {
    auto it = index.find(name);
    if (it == index.end()) {
      missing.push_back(name);
    } else {
      column.push_back(it->second);
    }
  }
  if (!missing.empty()) {
    const absl::flat_hash_set<std::string> used(model.feature_names.begin(),
                                                model.feature_names.end());
    std::vector<std::string> unused;
    size_t more = 0;
    for (const std::string& name : columns) {
      if (used.contains(name)) continue;
      // The unused list helps spot a renamed column; past 20 names it only hides the message.
      if (unused.size() < 20) {
        unused.push_back(name);
      } else {
        ++more;
      }
    }
    if (more > 0) unused.push_back(absl::StrCat("and ", more, " more"));
    return absl::FailedPreconditionError(absl::StrCat(
        "model features missing from ", absl::string_view(what.data(), what.size()), " (",
        missing.size(), "): ", absl::StrJoin(missing, ", "), "; ",
        absl::string_view(what.data(), what.size()), " features the model does not use: ",
        unused.empty() ? "none" : absl::StrJoin(unused, ", ")));
  }
  return column;
}

absl::StatusOr<std::vector<uint32_t>> BindFeatures(const TreeEnsemble& model,
                                                   const FeatureSchema& schema) {
  return BindFeatures(model, schema.names(), absl::StrCat("feature schema ", schema.version()));
}

}  // namespace vigil
