#include "vigil/model/lightgbm_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

// LightGBM's decision_type bits (include/LightGBM/tree.h).
constexpr int kCategoricalMask = 1;
constexpr int kDefaultLeftMask = 2;

struct Block {
  int first_line = 0;
  std::map<std::string, std::string, std::less<>> values;
  std::map<std::string, int, std::less<>> lines;
};

class Parser {
 public:
  explicit Parser(absl::string_view source) : source_(source) {}

  absl::Status Error(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ":", line, ": LightGBM model: ", what));
  }

  absl::StatusOr<absl::string_view> Get(const Block& b, absl::string_view key) const {
    auto it = b.values.find(key);
    if (it == b.values.end()) return Error(b.first_line, absl::StrCat("missing '", key, "='"));
    return absl::string_view(it->second);
  }
  int LineOf(const Block& b, absl::string_view key) const {
    auto it = b.lines.find(key);
    return it == b.lines.end() ? b.first_line : it->second;
  }

  template <typename T>
  absl::StatusOr<std::vector<T>> List(const Block& b, absl::string_view key, size_t n) const {
    VIGIL_ASSIGN_OR_RETURN(absl::string_view text, Get(b, key));
    std::vector<T> out;
    for (absl::string_view item : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
      T v;
      bool ok;
      if constexpr (std::is_same_v<T, double>) {
        // Doubles as LightGBM wrote them (round-trip precision); strtod is exact.
        const std::string s(item);
        char* end = nullptr;
        v = std::strtod(s.c_str(), &end);
        ok = end == s.c_str() + s.size() && std::isfinite(v);
      } else {
        ok = absl::SimpleAtoi(item, &v);
      }
      if (!ok) {
        return Error(LineOf(b, key), absl::StrCat("'", key, "': '", item, "' is not a number"));
      }
      out.push_back(v);
    }
    if (out.size() != n) {
      return Error(LineOf(b, key),
                   absl::StrCat("'", key, "' has ", out.size(), " values, expected ", n));
    }
    return out;
  }

 private:
  absl::string_view source_;
};

// Splits "text" into the header block (blocks[0]) and one block per "Tree=" section, up to the
// "end of trees" line. Errors: no such line, or no tree before it.
absl::StatusOr<std::vector<Block>> SplitBlocks(const Parser& p, absl::string_view text) {
  std::vector<Block> blocks(1);
  blocks[0].first_line = 1;
  int line_no = 0;
  bool ended = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) continue;
    if (line == "end of trees") {
      ended = true;
      break;
    }
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      if (line_no == 1 && line == "tree") continue;
      continue;  // other sections (feature importances, parameters) follow "end of trees"
    }
    const absl::string_view key = line.substr(0, eq);
    if (key == "Tree") {
      blocks.emplace_back();
      blocks.back().first_line = line_no;
    }
    blocks.back().values[std::string(key)] = std::string(line.substr(eq + 1));
    blocks.back().lines[std::string(key)] = line_no;
  }
  if (!ended)
    return p.Error(line_no, "no 'end of trees' line: not a LightGBM text model, or truncated");
  if (blocks.size() < 2) return p.Error(line_no, "no trees");
  return blocks;
}

// The header's shape: classes, trees per iteration and the largest feature index.
struct HeaderCounts {
  int num_class = 1;
  int per_iteration = 1;
  int max_feature = -1;
};

// Reads num_class, num_tree_per_iteration, max_feature_idx and feature_names (into
// m.feature_names, one per feature index).
absl::StatusOr<HeaderCounts> ReadHeaderCounts(const Parser& p, const Block& header,
                                              TreeEnsemble& m) {
  HeaderCounts c;
  VIGIL_ASSIGN_OR_RETURN(absl::string_view v, p.Get(header, "num_class"));
  if (!absl::SimpleAtoi(v, &c.num_class) || c.num_class < 1) {
    return p.Error(p.LineOf(header, "num_class"), "num_class must be a positive integer");
  }
  VIGIL_ASSIGN_OR_RETURN(v, p.Get(header, "num_tree_per_iteration"));
  if (!absl::SimpleAtoi(v, &c.per_iteration) || c.per_iteration < 1) {
    return p.Error(p.LineOf(header, "num_tree_per_iteration"), "must be a positive integer");
  }
  VIGIL_ASSIGN_OR_RETURN(v, p.Get(header, "max_feature_idx"));
  if (!absl::SimpleAtoi(v, &c.max_feature) || c.max_feature < 0 || c.max_feature > 1'000'000) {
    return p.Error(p.LineOf(header, "max_feature_idx"), "must be an integer in [0, 1000000]");
  }
  VIGIL_ASSIGN_OR_RETURN(v, p.Get(header, "feature_names"));
  m.feature_names = absl::StrSplit(v, ' ', absl::SkipEmpty());
  if (m.feature_names.size() != static_cast<size_t>(c.max_feature) + 1) {
    return p.Error(
        p.LineOf(header, "feature_names"),
        absl::StrCat(m.feature_names.size(), " names for max_feature_idx=", c.max_feature));
  }
  return c;
}

// The objective's link function (and sigmoid scale) into "m"; an objective vigil cannot score
// is refused as "unsupported".
absl::Status ReadObjective(const Parser& p, const Block& header, absl::string_view source,
                           TreeEnsemble& m) {
  VIGIL_ASSIGN_OR_RETURN(absl::string_view v, p.Get(header, "objective"));
  m.objective = std::string(v);
  const std::vector<absl::string_view> objective = absl::StrSplit(v, ' ', absl::SkipEmpty());
  const absl::string_view kind = objective.empty() ? "" : objective[0];
  if (kind == "binary" || kind == "cross_entropy" || kind == "xentropy") {
    m.link = ModelLink::kSigmoid;
    for (absl::string_view arg : objective) {
      if (absl::ConsumePrefix(&arg, "sigmoid:") && !absl::SimpleAtod(arg, &m.sigmoid_scale)) {
        return p.Error(p.LineOf(header, "objective"), "sigmoid: is not a number");
      }
    }
  } else if (kind == "regression" || kind == "regression_l2" || kind == "regression_l1" ||
             kind == "huber" || kind == "fair" || kind == "quantile" || kind == "mape") {
    m.link = ModelLink::kIdentity;
  } else if (kind == "multiclass" || kind == "softmax") {
    m.link = ModelLink::kSoftmax;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": unsupported: LightGBM objective '", v, "'"));
  }
  return absl::OkStatus();
}

// One tree block's arrays as LightGBM wrote them; the per-node ones hold leaves - 1 entries.
struct TreeArrays {
  int leaves = 0;
  std::vector<double> leaf_value, leaf_count;
  std::vector<int> split_feature, decision_type, left_child, right_child;
  std::vector<double> threshold, internal_count;
};

// Reads a tree block's arrays, each of the length num_leaves gives it; refuses categorical and
// linear trees.
absl::StatusOr<TreeArrays> ReadTreeArrays(const Parser& p, const Block& b,
                                          absl::string_view source) {
  TreeArrays a;
  VIGIL_ASSIGN_OR_RETURN(absl::string_view v, p.Get(b, "num_leaves"));
  if (!absl::SimpleAtoi(v, &a.leaves) || a.leaves < 1 || a.leaves > (1 << 24)) {
    return p.Error(p.LineOf(b, "num_leaves"), "num_leaves out of range");
  }
  if (auto it = b.values.find("num_cat"); it != b.values.end() && it->second != "0") {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", b.first_line, ": unsupported: categorical splits"));
  }
  if (auto it = b.values.find("is_linear"); it != b.values.end() && it->second != "0") {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", b.first_line, ": unsupported: linear trees"));
  }
  const auto leaves = static_cast<size_t>(a.leaves);
  const size_t internal = leaves - 1;
  VIGIL_ASSIGN_OR_RETURN(a.leaf_value, p.List<double>(b, "leaf_value", leaves));
  // Counts feed TreeSHAP only; a writer may leave them empty (single-leaf trees).
  a.leaf_count.assign(leaves, 0.0);
  if (auto it = b.values.find("leaf_count"); it != b.values.end() && !it->second.empty()) {
    VIGIL_ASSIGN_OR_RETURN(a.leaf_count, p.List<double>(b, "leaf_count", leaves));
  }
  a.internal_count.assign(internal, 0.0);
  if (internal > 0) {
    VIGIL_ASSIGN_OR_RETURN(a.split_feature, p.List<int>(b, "split_feature", internal));
    VIGIL_ASSIGN_OR_RETURN(a.threshold, p.List<double>(b, "threshold", internal));
    VIGIL_ASSIGN_OR_RETURN(a.decision_type, p.List<int>(b, "decision_type", internal));
    VIGIL_ASSIGN_OR_RETURN(a.left_child, p.List<int>(b, "left_child", internal));
    VIGIL_ASSIGN_OR_RETURN(a.right_child, p.List<int>(b, "right_child", internal));
    if (auto it = b.values.find("internal_count"); it != b.values.end() && !it->second.empty()) {
      VIGIL_ASSIGN_OR_RETURN(a.internal_count, p.List<double>(b, "internal_count", internal));
    }
  }
  return a;
}

// Appends tree "tree" (0-based, for messages) to "m": its internal nodes, checked, then its
// leaves. Nodes: internal nodes 0..L-2, then leaves; LightGBM writes leaf j as child ~j
// (= -j - 1).
absl::Status AppendTree(const Parser& p, const Block& b, const TreeArrays& a, size_t tree,
                        int max_feature, absl::string_view source, TreeEnsemble& m) {
  const auto internal = static_cast<size_t>(a.leaves - 1);
  const auto base = static_cast<int32_t>(m.num_nodes());
  const auto node_of = [&](int child) -> int32_t {
    return child >= 0 ? base + child : base + static_cast<int32_t>(internal) + (~child);
  };
  for (size_t i = 0; i < internal; ++i) {
    const int line = p.LineOf(b, "decision_type");
    if (a.decision_type[i] & kCategoricalMask) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line, ": unsupported: categorical split in tree ", tree));
    }
    const int missing_type = (a.decision_type[i] >> 2) & 3;
    if (missing_type == 3) return p.Error(line, "unknown missing type 3");
    for (int child : {a.left_child[i], a.right_child[i]}) {
      if (child >= static_cast<int>(internal) || ~child >= a.leaves) {
        return p.Error(p.LineOf(b, "left_child"), absl::StrCat("child ", child, " out of range"));
      }
    }
    if (a.split_feature[i] < 0 || a.split_feature[i] > max_feature) {
      return p.Error(p.LineOf(b, "split_feature"),
                     absl::StrCat("feature ", a.split_feature[i], " out of range"));
    }
    m.feature.push_back(a.split_feature[i]);
    m.threshold.push_back(a.threshold[i]);
    m.left.push_back(node_of(a.left_child[i]));
    m.right.push_back(node_of(a.right_child[i]));
    m.default_left.push_back((a.decision_type[i] & kDefaultLeftMask) ? 1 : 0);
    m.missing.push_back(missing_type == 2   ? MissingType::kNaN
                        : missing_type == 1 ? MissingType::kZero
                                            : MissingType::kNone);
    m.value.push_back(0.0);
    m.cover.push_back(a.internal_count[i]);
  }
  for (size_t j = 0; j < static_cast<size_t>(a.leaves); ++j) {
    m.feature.push_back(-1);
    m.threshold.push_back(0.0);
    m.left.push_back(-1);
    m.right.push_back(-1);
    m.default_left.push_back(0);
    m.missing.push_back(MissingType::kNone);
    m.value.push_back(a.leaf_value[j]);
    m.cover.push_back(a.leaf_count[j]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TreeEnsemble> LoadLightGbmText(std::string_view text_in,
                                              std::string_view source_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  const absl::string_view source(source_in.data(), source_in.size());
  Parser p(source);
  VIGIL_ASSIGN_OR_RETURN(const std::vector<Block> blocks, SplitBlocks(p, text));
  const Block& header = blocks[0];

  TreeEnsemble m;
  m.format = ModelFormat::kLightGbm;
  VIGIL_ASSIGN_OR_RETURN(const HeaderCounts counts, ReadHeaderCounts(p, header, m));
  VIGIL_RETURN_IF_ERROR(ReadObjective(p, header, source, m));
  if (counts.num_class != counts.per_iteration &&
      !(counts.num_class == 1 && counts.per_iteration == 1)) {
    return p.Error(p.LineOf(header, "num_tree_per_iteration"),
                   "num_tree_per_iteration must equal num_class");
  }
  m.num_groups = counts.num_class;
  m.base_margin.assign(static_cast<size_t>(counts.num_class), 0.0);

  m.tree_begin.push_back(0);
  for (size_t t = 1; t < blocks.size(); ++t) {
    VIGIL_ASSIGN_OR_RETURN(const TreeArrays arrays, ReadTreeArrays(p, blocks[t], source));
    VIGIL_RETURN_IF_ERROR(AppendTree(p, blocks[t], arrays, t - 1, counts.max_feature, source, m));
    m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
    m.tree_group.push_back(static_cast<int32_t>((t - 1) % static_cast<size_t>(counts.num_class)));
  }
  if (const absl::Status s = m.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return m;
}

}  // namespace vigil
