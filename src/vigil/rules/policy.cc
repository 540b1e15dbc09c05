#include "vigil/rules/policy.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "vigil/common/nearest_name.h"
#include "vigil/common/sha256.h"
#include "yaml-cpp/yaml.h"

namespace vigil {

std::string_view RuleActionName(RuleAction action) {
  switch (action) {
    case RuleAction::kAllow:
      return "allow";
    case RuleAction::kTag:
      return "tag";
    case RuleAction::kReview:
      return "review";
    case RuleAction::kBlock:
      return "block";
  }
  return "?";
}

namespace {

absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsRuleId(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

absl::StatusOr<ListLibrary> ListLibrary::LoadDirectory(const std::string& dir) {
  ListLibrary library;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat("lists directory ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string file = path.string();
    try {
      const YAML::Node root = YAML::LoadFile(file);
      const auto field = [&](const char* key) -> absl::StatusOr<YAML::Node> {
        const YAML::Node node = root[key];
        if (!node)
          return absl::InvalidArgumentError(absl::StrCat(file, ": '", key, "' is missing"));
        return node;
      };
      auto name = field("name");
      if (!name.ok()) return name.status();
      auto source = field("source");
      if (!source.ok()) return source.status();
      auto values = field("values");
      if (!values.ok()) return values.status();
      if (!values->IsSequence()) {
        return absl::InvalidArgumentError(absl::StrCat(file, ": 'values' must be a list"));
      }
      List list;
      list.source = source->as<std::string>();
      for (const YAML::Node& v : *values) list.values.push_back(v.as<std::string>());
      const std::string list_name = name->as<std::string>();
      if (!library.lists.emplace(list_name, std::move(list)).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": list '", list_name, "' is defined twice in ", dir));
      }
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", e.what()));
    }
  }
  return library;
}

// Reads a policy, collecting every error before giving up.
class PolicyParser {
 public:
  PolicyParser(std::string_view yaml, std::string_view file, const PolicyInputLayout& layout,
               const ListLibrary& library)
      : yaml_(yaml), file_(file), layout_(layout), library_(library) {
    lines_ = absl::StrSplit(std::string(yaml), '\n');
  }

  absl::StatusOr<std::shared_ptr<const Policy>> Parse() {
    auto policy = std::shared_ptr<Policy>(new Policy());
    policy->content_hash_ = Sha256Hex(yaml_);
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml_));
    } catch (const YAML::ParserException& e) {
      Error(e.mark, absl::StrCat("not valid YAML: ", e.msg));
      return Result(nullptr);
    }
    if (!root.IsMap()) {
      Error(root.Mark(), "a policy is a mapping with version, thresholds and rules");
      return Result(nullptr);
    }
    CheckKeys(root,
              {"version", "description", "thresholds", "screening", "accounts", "constants", "tune",
               "lists", "rules"},
              "policy");
    if (const YAML::Node v = Required(root, "version", "policy"); v) {
      if (auto s = Scalar(v, "version"); s && !s->empty()) {
        policy->version_ = *s;
      } else if (s) {
        Error(v.Mark(), "'version' must not be empty");
      }
    }
    if (const YAML::Node t = Required(root, "thresholds", "policy"); t) {
      ParseThresholds(t, *policy);
    }
    if (const YAML::Node sc = root["screening"]; sc) ParseScreening(sc, *policy);
    if (const YAML::Node a = root["accounts"]; a) ParseAccounts(a, *policy);
    if (absl::Status s = layout_.AddTo(scope_); !s.ok()) {
      return absl::InternalError(absl::StrCat("policy inputs: ", s.message()));
    }
    for (const auto& [name, list] : library_.lists) {
      if (absl::Status s = scope_.AddStringList(name, list.values); !s.ok()) {
        return absl::InternalError(absl::StrCat("list library: ", s.message()));
      }
    }
    if (const YAML::Node c = root["constants"]; c) ParseConstants(c, *policy);
    if (const YAML::Node t = root["tune"]; t) ParseTune(t, *policy);
    if (const YAML::Node l = root["lists"]; l) ParseLists(l);
    if (const YAML::Node r = Required(root, "rules", "policy"); r) ParseRules(r, *policy);
    policy->tag_ = absl::StrCat(policy->version_, "@", policy->content_hash_.substr(0, 12));
    return Result(std::move(policy));
  }

 private:
  absl::StatusOr<std::shared_ptr<const Policy>> Result(std::shared_ptr<Policy> policy) {
    if (errors_.empty()) return std::shared_ptr<const Policy>(std::move(policy));
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StrJoin(errors_, "\n"), "\n", errors_.size(),
                     errors_.size() == 1 ? " error" : " errors", " in ", file_));
  }

  void Error(const YAML::Mark& mark, absl::string_view message, absl::string_view hint = {}) {
    const int line = mark.line < 0 ? 0 : mark.line;
    const int column = mark.column < 0 ? 0 : mark.column;
    std::string out = absl::StrCat(file_, ":", line + 1, ":", column + 1, ": ", message);
    if (static_cast<size_t>(line) < lines_.size()) {
      absl::StrAppend(&out, "\n  ", lines_[static_cast<size_t>(line)], "\n  ",
                      std::string(static_cast<size_t>(column), ' '), "^");
    }
    if (!hint.empty()) absl::StrAppend(&out, "\n  hint: ", hint);
    errors_.push_back(std::move(out));
  }

  void CheckKeys(const YAML::Node& map, std::vector<std::string> known, absl::string_view what) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const std::string near = NearestName(key, known);
      Error(kv.first.Mark(), absl::StrCat("unknown field '", key, "' in ", what),
            near.empty() ? absl::StrCat("known fields: ", absl::StrJoin(known, ", "))
                         : absl::StrCat("did you mean '", near, "'?"));
    }
  }

  YAML::Node Required(const YAML::Node& map, const char* key, absl::string_view what) {
    YAML::Node node = map[key];
    if (!node) Error(map.Mark(), absl::StrCat(what, ": '", key, "' is missing"));
    return node;
  }

  std::optional<std::string> Scalar(const YAML::Node& node, absl::string_view what) {
    if (!node.IsScalar()) {
      Error(node.Mark(), absl::StrCat("'", what, "' must be a single value"));
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<double> Number(const YAML::Node& node, absl::string_view what) {
    auto text = Scalar(node, what);
    if (!text) return std::nullopt;
    double value = 0;
    if (!absl::SimpleAtod(*text, &value) || !std::isfinite(value)) {
      Error(node.Mark(), absl::StrCat("'", what, "' must be a number, not '", *text, "'"));
      return std::nullopt;
    }
    return value;
  }

  void ParseThresholds(const YAML::Node& t, Policy& policy) {
    if (!t.IsMap()) {
      Error(t.Mark(), "'thresholds' is a mapping: review and block (model probabilities)");
      return;
    }
    CheckKeys(t, {"review", "block"}, "thresholds");
    std::optional<double> review, block;
    if (const YAML::Node r = Required(t, "review", "thresholds"); r) review = Number(r, "review");
    if (const YAML::Node b = Required(t, "block", "thresholds"); b) block = Number(b, "block");
    for (const auto& [value, key] : {std::pair{review, "review"}, std::pair{block, "block"}}) {
      if (value && (*value < 0 || *value > 1)) {
        Error(t[key].Mark(), absl::StrCat("'", key, "' is a probability: 0 to 1"));
      }
    }
    if (review && block && *review > *block) {
      Error(t["review"].Mark(), "the review threshold is above the block threshold",
            "a score that blocks must also be one that would review");
    }
    if (review) policy.review_threshold_ = *review;
    if (block) policy.block_threshold_ = *block;
  }

  // screening: {review: 0.88, block: 0.95}: watchlist match scores at or above which a payment
  // is reviewed or blocked; both optional (defaults in policy.h).
  void ParseScreening(const YAML::Node& t, Policy& policy) {
    if (!t.IsMap()) {
      Error(t.Mark(), "'screening' is a mapping: review and block (watchlist match scores)");
      return;
    }
    CheckKeys(t, {"review", "block"}, "screening");
    std::optional<double> review, block;
    if (const YAML::Node r = t["review"]; r) review = Number(r, "review");
    if (const YAML::Node b = t["block"]; b) block = Number(b, "block");
    for (const auto& [value, key] : {std::pair{review, "review"}, std::pair{block, "block"}}) {
      if (value && (*value <= 0 || *value > 1)) {
        Error(t[key].Mark(), absl::StrCat("screening '", key, "' is a match score: above 0, at most 1"));
      }
    }
    const double r = review.value_or(policy.screening_review_threshold_);
    const double b = block.value_or(policy.screening_block_threshold_);
    if (r > b) {
      Error(t[review ? "review" : "block"].Mark(),
            "the screening review threshold is above the block threshold",
            "a match that blocks must also be one that would review");
    }
    policy.screening_review_threshold_ = r;
    policy.screening_block_threshold_ = b;
  }

  // accounts: {alert_score: 0.3, alert_rule_hits: 3}: when an account alerts (docs/policy.md,
  // "Account alerts"); either may be left out (that trigger is off).
  void ParseAccounts(const YAML::Node& t, Policy& policy) {
    if (!t.IsMap()) {
      Error(t.Mark(), "'accounts' is a mapping: alert_score and alert_rule_hits");
      return;
    }
    CheckKeys(t, {"alert_score", "alert_rule_hits"}, "accounts");
    if (const YAML::Node s = t["alert_score"]; s) {
      if (const std::optional<double> v = Number(s, "alert_score"); v) {
        if (*v <= 0 || *v > 1) {
          Error(s.Mark(), "'alert_score' is a model probability: above 0, at most 1",
                "an account's score is the highest score of its payments in the window");
        } else {
          policy.account_alerts_.score = *v;
        }
      }
    }
    if (const YAML::Node h = t["alert_rule_hits"]; h) {
      if (const std::optional<double> v = Number(h, "alert_rule_hits"); v) {
        if (*v < 1 || *v > kMaxAccountRuleHits || *v != std::floor(*v)) {
          Error(h.Mark(),
                absl::StrCat("'alert_rule_hits' is a whole number of payments, 1 to ",
                             kMaxAccountRuleHits),
                "payments of the account in the window on which an active rule fired");
        } else {
          policy.account_alerts_.rule_hits = static_cast<uint32_t>(*v);
        }
      }
    }
  }

  void ParseConstants(const YAML::Node& c, Policy& policy) {
    if (!c.IsMap()) {
      Error(c.Mark(), "'constants' is a mapping of names to numbers");
      return;
    }
    for (const auto& kv : c) {
      const std::string name = kv.first.Scalar();
      const std::optional<double> value = Number(kv.second, name);
      if (!value) continue;
      if (absl::Status s = scope_.AddConstant(name, *value); !s.ok()) {
        Error(kv.first.Mark(), absl::StrCat("constant: ", s.message()));
        continue;
      }
      policy.constants_.push_back({name, *value, kv.second.Mark().line, kv.second.Mark().column,
                                   kv.second.Scalar()});
    }
  }

  // tune: {NAME: [low, high], ...}: constants `vigil policy tune` may move, within the range.
  void ParseTune(const YAML::Node& t, Policy& policy) {
    if (!t.IsMap()) {
      Error(t.Mark(), "'tune' is a mapping of constant names to [low, high] ranges");
      return;
    }
    for (const auto& kv : t) {
      const std::string name = kv.first.Scalar();
      const auto constant =
          std::find_if(policy.constants_.begin(), policy.constants_.end(),
                       [&](const PolicyConstant& c) { return c.name == name; });
      if (constant == policy.constants_.end()) {
        std::vector<std::string> names;
        for (const PolicyConstant& c : policy.constants_) names.push_back(c.name);
        const std::string near = NearestName(name, names);
        Error(kv.first.Mark(), absl::StrCat("tune: '", name, "' is not a constant of the policy"),
              near.empty() ? "only the policy's own constants can be tuned"
                           : absl::StrCat("did you mean '", near, "'?"));
        continue;
      }
      if (!kv.second.IsSequence() || kv.second.size() != 2) {
        Error(kv.second.Mark(), absl::StrCat("tune: '", name, "' takes a range [low, high]"));
        continue;
      }
      const std::optional<double> low = Number(kv.second[0], "low");
      const std::optional<double> high = Number(kv.second[1], "high");
      if (!low || !high) continue;
      if (*low >= *high) {
        Error(kv.second.Mark(), absl::StrCat("tune: '", name, "': low must be below high"));
        continue;
      }
      if (constant->value < *low || constant->value > *high) {
        Error(kv.second.Mark(),
              absl::StrCat("tune: '", name, "' is ", constant->text, ", outside its range [",
                           kv.second[0].Scalar(), ", ", kv.second[1].Scalar(), "]"));
        continue;
      }
      policy.tunables_.push_back({name, *low, *high});
    }
  }

  void ParseLists(const YAML::Node& l) {
    if (!l.IsMap()) {
      Error(l.Mark(), "'lists' is a mapping of names to lists");
      return;
    }
    for (const auto& kv : l) {
      const std::string name = kv.first.Scalar();
      if (!kv.second.IsSequence() || kv.second.size() == 0) {
        Error(kv.second.Mark(), absl::StrCat("list '", name, "' must be a non-empty [list]"));
        continue;
      }
      // A list of numbers when every value reads as one, else of strings.
      std::vector<double> numbers;
      std::vector<std::string> strings;
      for (const YAML::Node& v : kv.second) {
        if (!v.IsScalar()) {
          Error(v.Mark(), absl::StrCat("list '", name, "' holds single values only"));
          continue;
        }
        double d;
        if (numbers.size() == strings.size() && absl::SimpleAtod(v.Scalar(), &d) &&
            v.Tag() != "!") {
          numbers.push_back(d);
        }
        strings.push_back(v.Scalar());
      }
      const absl::Status s = numbers.size() == strings.size()
                                 ? scope_.AddNumberList(name, std::move(numbers))
                                 : scope_.AddStringList(name, std::move(strings));
      if (!s.ok()) {
        Error(kv.first.Mark(), absl::StrCat("list: ", s.message()),
              library_.lists.contains(name) ? "the list library already defines it" : "");
      }
    }
  }

  // Where a scalar's text starts: after an opening quote, or on the line after a block
  // indicator (| or >).
  SourceLocation TextStart(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    SourceLocation where{file_, mark.line + 1, mark.column + 1};
    if (mark.line < 0 || static_cast<size_t>(mark.line) >= lines_.size()) return where;
    const std::string& line = lines_[static_cast<size_t>(mark.line)];
    const auto c = static_cast<size_t>(mark.column);
    if (c < line.size() && (line[c] == '"' || line[c] == '\'')) {
      where.column += 1;
    } else if (c < line.size() && (line[c] == '|' || line[c] == '>') &&
               static_cast<size_t>(mark.line) + 1 < lines_.size()) {
      const std::string& next = lines_[static_cast<size_t>(mark.line) + 1];
      where.line += 1;
      where.indent = static_cast<int>(next.find_first_not_of(' '));
      where.column = where.indent + 1;
    }
    return where;
  }

  void ParseRules(const YAML::Node& rules, Policy& policy) {
    if (!rules.IsSequence()) {
      Error(rules.Mark(), "'rules' is a list of rules");
      return;
    }
    absl::flat_hash_map<std::string, int> seen;  // id → line
    for (const YAML::Node& r : rules) {
      if (!r.IsMap()) {
        Error(r.Mark(), "a rule is a mapping: id, when, action, reason, ...");
        continue;
      }
      CheckKeys(r, {"id", "description", "when", "action", "severity", "reason", "mode"}, "rule");
      PolicyRule rule;
      bool ok = true;
      const YAML::Node id = Required(r, "id", "rule");
      if (id) {
        auto text = Scalar(id, "id");
        if (text && !IsRuleId(*text)) {
          Error(id.Mark(), absl::StrCat("rule id '", *text, "' may use only a-z, 0-9, _, - and ."));
          ok = false;
        } else if (text) {
          rule.id = *text;
          rule.where = {file_, id.Mark().line + 1, id.Mark().column + 1};
          if (auto [it, inserted] = seen.emplace(rule.id, id.Mark().line + 1); !inserted) {
            Error(id.Mark(),
                  absl::StrCat("rule id '", rule.id, "' is already used on line ", it->second));
            ok = false;
          }
        }
      }
      if (const YAML::Node d = r["description"]; d) {
        if (auto text = Scalar(d, "description")) rule.description = *text;
      }
      const YAML::Node when = Required(r, "when", "rule");
      if (when) {
        if (auto text = Scalar(when, "when")) {
          auto compiled = Expression::Compile(*text, scope_, TextStart(when));
          if (!compiled.ok()) {
            errors_.emplace_back(compiled.status().message());
            ok = false;
          } else if (compiled->type() != ExprType::kBool) {
            Error(when.Mark(),
                  absl::StrCat("'when' must be true or false; this is a ",
                               A(ExprTypeName(compiled->type()))),
                  "compare it with something, e.g. '> 0'");
            ok = false;
          } else if (const std::string never = compiled->NeverTrue(); !never.empty()) {
            Error(when.Mark(), absl::StrCat("rule '", rule.id, "' can never fire: ", never));
            ok = false;
          } else {
            rule.when = *std::move(compiled);
            rule.when_text = *text;
          }
        } else {
          ok = false;
        }
      } else {
        ok = false;
      }
      if (const YAML::Node a = Required(r, "action", "rule"); a) {
        const std::optional<std::string> text = Scalar(a, "action");
        static constexpr std::pair<std::string_view, RuleAction> kActions[] = {
            {"allow", RuleAction::kAllow},
            {"tag", RuleAction::kTag},
            {"review", RuleAction::kReview},
            {"block", RuleAction::kBlock}};
        const auto* found = std::find_if(std::begin(kActions), std::end(kActions),
                                         [&](const auto& k) { return text && k.first == *text; });
        if (found != std::end(kActions)) {
          rule.action = found->second;
        } else if (text) {
          Error(a.Mark(), absl::StrCat("unknown action '", *text, "'"),
                "one of allow, tag, review, block");
          ok = false;
        }
      }
      rule.severity = 50;
      if (const YAML::Node s = r["severity"]; s) {
        const std::optional<double> v = Number(s, "severity");
        if (v && (*v < 0 || *v > 100 || *v != std::floor(*v))) {
          Error(s.Mark(), "'severity' is a whole number from 0 to 100");
        } else if (v) {
          rule.severity = static_cast<int>(*v);
        }
      }
      if (const YAML::Node m = r["mode"]; m) {
        const std::optional<std::string> text = Scalar(m, "mode");
        if (text && *text == "shadow") {
          rule.mode = RuleMode::kShadow;
        } else if (text && *text != "active") {
          Error(m.Mark(), absl::StrCat("unknown mode '", *text, "'"), "active or shadow");
        }
      }
      if (const YAML::Node reason = Required(r, "reason", "rule"); reason) {
        if (auto text = Scalar(reason, "reason")) {
          rule.reason_text = *text;
          ParseReason(*text, TextStart(reason), rule);
        }
      }
      if (ok) policy.rules_.push_back(std::move(rule));
    }
  }

  // "{name}" cites an input (or a constant, filled in now); "{{" and "}}" are braces.
  void ParseReason(std::string_view text, const SourceLocation& where, PolicyRule& rule) {
    const auto at = [&](size_t offset) {
      YAML::Mark mark;
      mark.line = where.line - 1;
      mark.column = where.column - 1 + static_cast<int>(offset);
      return mark;
    };
    std::string literal;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
        literal.push_back(c);
        ++i;
        continue;
      }
      if (c == '}') {
        Error(at(i), "unmatched '}' in reason", "write '}}' for a brace");
        return;
      }
      if (c != '{') {
        literal.push_back(c);
        continue;
      }
      const size_t close = text.find('}', i);
      if (close == std::string_view::npos) {
        Error(at(i), "'{' in reason is not closed", "write '{{' for a brace");
        return;
      }
      const std::string name(text.substr(i + 1, close - i - 1));
      const ExpressionScope::Entry* entry = scope_.Find(name);
      if (entry == nullptr || entry->type == ExprType::kNumberList ||
          entry->type == ExprType::kStringList) {
        const std::string near = NearestName(name, scope_.Names());
        Error(at(i + 1),
              entry == nullptr ? absl::StrCat("unknown name '", name, "' in reason")
                               : absl::StrCat("a reason cannot cite the list '", name, "'"),
              near.empty() || entry != nullptr ? "" : absl::StrCat("did you mean '", near, "'?"));
        return;
      }
      if (entry->constant) {
        literal += FormatNumber(entry->numbers[0]);
      } else {
        if (!literal.empty()) rule.reason.push_back({PolicyRule::ReasonPart::Kind::kText, literal});
        literal.clear();
        rule.reason.push_back({entry->type == ExprType::kNumber
                                   ? PolicyRule::ReasonPart::Kind::kNumber
                                   : PolicyRule::ReasonPart::Kind::kString,
                               "", entry->slot});
      }
      i = close;
    }
    if (!literal.empty()) rule.reason.push_back({PolicyRule::ReasonPart::Kind::kText, literal});
  }

 public:
  static std::string FormatNumber(double v) {
    if (std::isnan(v)) return "missing";
    if (v == std::floor(v) && std::abs(v) < 1e15) return absl::StrFormat("%.0f", v);
    return absl::StrFormat("%.2f", v);
  }

 private:
  std::string_view yaml_;
  std::string file_;
  const PolicyInputLayout& layout_;
  const ListLibrary& library_;
  std::vector<std::string> lines_;
  std::vector<std::string> errors_;
  ExpressionScope scope_;
};

absl::StatusOr<std::shared_ptr<const Policy>> Policy::Parse(std::string_view yaml,
                                                            std::string_view file,
                                                            const PolicyInputLayout& layout,
                                                            const ListLibrary& library) {
  return PolicyParser(yaml, file, layout, library).Parse();
}

size_t Policy::Evaluate(const EvalInputs& inputs, absl::Span<uint32_t> fired) const {
  size_t n = 0;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].when.EvaluateBool(inputs)) fired[n++] = static_cast<uint32_t>(i);
  }
  return n;
}

std::string Policy::RenderReason(const PolicyRule& rule, const EvalInputs& inputs) const {
  std::string out;
  for (const PolicyRule::ReasonPart& part : rule.reason) {
    switch (part.kind) {
      case PolicyRule::ReasonPart::Kind::kText:
        out += part.text;
        break;
      case PolicyRule::ReasonPart::Kind::kNumber:
        out += PolicyParser::FormatNumber(inputs.numbers[part.slot]);
        break;
      case PolicyRule::ReasonPart::Kind::kString:
        out += inputs.strings[part.slot];
        break;
    }
  }
  return out;
}

Action DecisionOf(const PolicyRule& rule) {
  if (rule.mode == RuleMode::kShadow) return Action::kAllow;
  switch (rule.action) {
    case RuleAction::kBlock: return Action::kBlock;
    case RuleAction::kReview: return Action::kReview;
    case RuleAction::kAllow:
    case RuleAction::kTag: return Action::kAllow;
  }
  return Action::kAllow;
}

bool CountsForAccounts(const PolicyRule& rule) {
  return rule.mode == RuleMode::kActive && rule.action != RuleAction::kAllow;
}

}  // namespace vigil
