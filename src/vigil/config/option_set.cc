#include "vigil/config/option_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "vigil/common/check.h"
#include "vigil/common/nearest_name.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "yaml-cpp/yaml.h"

namespace vigil::config {

static_assert(std::is_same_v<size_t, uint64_t>, "Integer(uint64_t*) also takes size_t");

namespace {

std::string FormatNumber(double v) {
  std::string s = absl::StrCat(v);
  return s;
}

// A value as YAML would hold it: plain when that reads back the same, quoted otherwise.
std::string YamlScalar(std::string_view text) {
  bool plain = !text.empty() && text.front() != ' ' && text.back() != ' ';
  for (char c : text) {
    if (std::string_view(":#{}[],&*!|>'\"%@`").find(c) != std::string_view::npos) plain = false;
  }
  if (plain) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Quoted(std::string_view s) { return absl::StrCat("'", ToAbsl(s), "'"); }

}  // namespace

absl::Status ParseWholeNumber(std::string_view text, int64_t min, int64_t max, int64_t* out) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(ToAbsl(text), &v) || v < min || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("must be a whole number from ", min, " to ", max));
  }
  *out = v;
  return absl::OkStatus();
}

std::string Option::flag() const {
  if (spec.flag == "-") return "";
  if (!spec.flag.empty()) return absl::StrCat("--", spec.flag);
  return absl::StrCat("--", absl::StrReplaceAll(spec.key, {{".", "-"}, {"_", "-"}}));
}

Option& OptionSet::Declare(OptionSpec spec, OptionKind kind, std::string range) {
  VIGIL_CHECK(!spec.key.empty());
  VIGIL_CHECK(Find(spec.key) == nullptr);
  Option option;
  option.spec = std::move(spec);
  option.kind = kind;
  option.range = std::move(range);
  if (!option.flag().empty()) VIGIL_CHECK(FindFlag(option.flag()) == nullptr);
  options_.push_back(std::move(option));
  return options_.back();
}

void OptionSet::Bool(OptionSpec spec, bool* out) {
  Option& o = Declare(std::move(spec), OptionKind::kBool, "true | false");
  o.set = [out](std::string_view text, std::string_view) {
    const std::string t = absl::AsciiStrToLower(ToAbsl(text));
    if (t == "true" || t == "yes" || t == "on") {
      *out = true;
    } else if (t == "false" || t == "no" || t == "off") {
      *out = false;
    } else {
      return absl::InvalidArgumentError("must be true or false");
    }
    return absl::OkStatus();
  };
  o.show = [out] { return std::string(*out ? "true" : "false"); };
  o.default_text = o.show();
}

namespace {
template <typename T>
void DeclareInteger(OptionSet& set, OptionSpec spec, T* out, int64_t min, int64_t max) {
  set.Custom(
      std::move(spec), absl::StrCat(min, " to ", max),
      [out, min, max](std::string_view text) {
        int64_t v = 0;
        if (absl::Status s = ParseWholeNumber(text, min, max, &v); !s.ok()) return s;
        *out = static_cast<T>(v);
        return absl::OkStatus();
      },
      [out] { return absl::StrCat(*out); });
}
}  // namespace

void OptionSet::Integer(OptionSpec spec, int64_t* out, int64_t min, int64_t max) {
  DeclareInteger(*this, std::move(spec), out, min, max);
  options_.back().kind = OptionKind::kInteger;
}
void OptionSet::Integer(OptionSpec spec, int* out, int64_t min, int64_t max) {
  DeclareInteger(*this, std::move(spec), out, min, max);
  options_.back().kind = OptionKind::kInteger;
}
void OptionSet::Integer(OptionSpec spec, uint64_t* out, int64_t min, int64_t max) {
  VIGIL_CHECK(min >= 0);
  DeclareInteger(*this, std::move(spec), out, min, max);
  options_.back().kind = OptionKind::kInteger;
}

void OptionSet::Number(OptionSpec spec, double* out, double min, double max, bool above_min) {
  std::string range = above_min ? absl::StrCat("above ", FormatNumber(min), ", at most ",
                                               FormatNumber(max))
                                : absl::StrCat("from ", FormatNumber(min), " to ", FormatNumber(max));
  const std::string message = absl::StrCat("must be a number ", range);
  Custom(
      std::move(spec), range,
      [out, min, max, above_min, message](std::string_view text) {
        double v = 0;
        if (!absl::SimpleAtod(ToAbsl(text), &v) || !std::isfinite(v) ||
            (above_min ? !(v > min) : !(v >= min)) || !(v <= max)) {
          return absl::InvalidArgumentError(message);
        }
        *out = v;
        return absl::OkStatus();
      },
      [out] { return FormatNumber(*out); });
  options_.back().kind = OptionKind::kNumber;
}

void OptionSet::Text(OptionSpec spec, std::string* out) {
  std::string range = spec.value_name.empty() ? "text" : spec.value_name;
  Custom(
      std::move(spec), std::move(range),
      [out](std::string_view text) {
        if (text.empty()) return absl::InvalidArgumentError("must be a non-empty string");
        *out = std::string(text);
        return absl::OkStatus();
      },
      [out] { return *out; });
  options_.back().kind = OptionKind::kText;
}

void OptionSet::Choice(OptionSpec spec, std::string* out, std::vector<std::string> allowed) {
  const std::string range = absl::StrJoin(allowed, " | ");
  Custom(
      std::move(spec), range,
      [out, allowed = std::move(allowed)](std::string_view text) {
        if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("must be ", absl::StrJoin(allowed, " or "), ", not \"", ToAbsl(text),
                           "\""));
        }
        *out = std::string(text);
        return absl::OkStatus();
      },
      [out] { return *out; });
  options_.back().kind = OptionKind::kChoice;
}

void OptionSet::List(OptionSpec spec, std::vector<std::string>* out) {
  std::string range =
      absl::StrCat("list of ", spec.value_name.empty() ? "text" : spec.value_name);
  Option& o = Declare(std::move(spec), OptionKind::kList, std::move(range));
  o.set = [out](std::string_view text, std::string_view) {
    // An empty value adds nothing: `--drift-exclude ''` leaves the list empty.
    if (!text.empty()) out->emplace_back(text);
    return absl::OkStatus();
  };
  o.clear = [out] { out->clear(); };
  o.show = [out] {
    std::vector<std::string> shown;
    for (const std::string& v : *out) shown.push_back(YamlScalar(v));
    return absl::StrCat("[", absl::StrJoin(shown, ", "), "]");
  };
  o.default_text = o.show();
}

void OptionSet::Map(OptionSpec spec, std::vector<std::pair<std::string, std::string>>* out) {
  spec.flag = "-";
  Option& o = Declare(std::move(spec), OptionKind::kMap, "mapping");
  o.set = [out](std::string_view text, std::string_view key) {
    if (key.empty()) return absl::InvalidArgumentError("has an empty key");
    if (text.empty()) return absl::InvalidArgumentError("must map keys to non-empty strings");
    out->emplace_back(std::string(key), std::string(text));
    return absl::OkStatus();
  };
  o.clear = [out] { out->clear(); };
  o.show = [out] {
    std::vector<std::string> shown;
    for (const auto& [k, v] : *out) shown.push_back(absl::StrCat(YamlScalar(k), ": ", YamlScalar(v)));
    return absl::StrCat("{", absl::StrJoin(shown, ", "), "}");
  };
  o.default_text = o.show();
}

void OptionSet::Custom(OptionSpec spec, std::string range,
                       std::function<absl::Status(std::string_view text)> parse,
                       std::function<std::string()> show) {
  Option& o = Declare(std::move(spec), OptionKind::kText, std::move(range));
  o.set = [parse = std::move(parse)](std::string_view text, std::string_view) {
    return parse(text);
  };
  o.show = std::move(show);
  o.default_text = o.show();
}

void OptionSet::Renamed(std::string old_key, std::string new_key) {
  renamed_.emplace_back(std::move(old_key), std::move(new_key));
}

Option* OptionSet::Find(std::string_view key) {
  for (Option& o : options_) {
    if (o.spec.key == key) return &o;
  }
  return nullptr;
}

const Option* OptionSet::FindFlag(std::string_view flag) const {
  for (const Option& o : options_) {
    if (!o.flag().empty() && o.flag() == flag) return &o;
  }
  return nullptr;
}

absl::Status OptionSet::SetOne(Option& option, std::string_view text, std::string_view map_key,
                               std::string_view source) {
  const bool many = option.kind == OptionKind::kList || option.kind == OptionKind::kMap;
  // A list or mapping from a new source replaces the values of the one before.
  if (many && option.source != source) option.clear();
  VIGIL_RETURN_IF_ERROR(option.set(text, map_key));
  option.source = std::string(source);
  return absl::OkStatus();
}

absl::Status OptionSet::Set(std::string_view key, std::string_view text, std::string_view source) {
  Option* option = Find(key);
  if (option == nullptr) {
    std::vector<std::string> keys;
    for (const Option& o : options_) keys.push_back(o.spec.key);
    const std::string best = NearestName(key, keys);
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(source), ": no option ", Quoted(key),
        best.empty() ? std::string() : absl::StrCat(" (did you mean ", Quoted(best), "?)")));
  }
  if (option->kind == OptionKind::kMap) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(source), ": ", Quoted(key), " is a mapping: set it in the configuration file"));
  }
  if (absl::Status s = SetOne(*option, text, {}, source); !s.ok()) {
    // "--drift-min-rows (drift.min_rows): must be ..." or "KEY=VALUE: drift.min_rows: ...".
    const bool flag = source.rfind("--", 0) == 0;
    return absl::InvalidArgumentError(
        flag ? absl::StrCat(ToAbsl(source), " (", ToAbsl(key), "): ", s.message())
             : absl::StrCat(ToAbsl(source), ": ", ToAbsl(key), ": ", s.message()));
  }
  return absl::OkStatus();
}

namespace {

class YamlWalker {
 public:
  YamlWalker(OptionSet& set, std::string_view file,
             const std::vector<std::pair<std::string, std::string>>& renamed)
      : set_(set), file_(file), renamed_(renamed) {}

  void Map(const YAML::Node& map, const std::string& prefix) {
    for (const auto& kv : map) {
      const std::string name = kv.first.Scalar();
      const std::string key = prefix.empty() ? name : absl::StrCat(prefix, ".", name);
      if (Option* option = set_.Find(key); option != nullptr) {
        Value(*option, kv.second);
      } else if (IsSection(key)) {
        if (kv.second.IsMap()) {
          Map(kv.second, key);
        } else if (Option* shorthand = Shorthand(key);
                   shorthand != nullptr && kv.second.IsScalar()) {
          Value(*shorthand, kv.second);
        } else {
          Error(kv.second, absl::StrCat(key, ": must be a mapping (",
                                        absl::StrJoin(Children(key), ", "), ")"));
        }
      } else {
        Unknown(kv.first, key, name, prefix);
      }
    }
  }

  std::vector<std::string> errors;

 private:
  bool IsSection(const std::string& key) const {
    const std::string dotted = key + ".";
    for (const Option& o : set_.options()) {
      if (o.spec.key.rfind(dotted, 0) == 0) return true;
    }
    return false;
  }

  Option* Shorthand(const std::string& section) {
    for (const Option& o : set_.options()) {
      if (o.spec.section_shorthand && o.spec.key.rfind(section + ".", 0) == 0 &&
          o.spec.key.find('.', section.size() + 1) == std::string::npos) {
        return set_.Find(o.spec.key);
      }
    }
    return nullptr;
  }

  // The names one level below `prefix` ("" for the top), options and sections alike.
  std::vector<std::string> Children(const std::string& prefix) const {
    std::vector<std::string> out;
    const std::string dotted = prefix.empty() ? "" : prefix + ".";
    for (const Option& o : set_.options()) {
      if (o.spec.key.rfind(dotted, 0) != 0) continue;
      const std::string rest = o.spec.key.substr(dotted.size());
      const std::string child = rest.substr(0, rest.find('.'));
      if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
    }
    return out;
  }

  void Unknown(const YAML::Node& at, const std::string& key, const std::string& name,
               const std::string& prefix) {
    for (const auto& [old_key, new_key] : renamed_) {
      if (old_key == key) {
        Error(at, absl::StrCat(Quoted(key), " is now ", Quoted(new_key)));
        return;
      }
    }
    const std::vector<std::string> known = Children(prefix);
    const std::string best = NearestName(name, known);
    Error(at,
          absl::StrCat("unknown key ", Quoted(name), " in ",
                       prefix.empty() ? "the configuration" : prefix),
          best.empty() ? absl::StrCat("known: ", absl::StrJoin(known, ", "))
                       : absl::StrCat("did you mean ", Quoted(best), "?"));
  }

  void Value(Option& option, const YAML::Node& node) {
    const std::string source = Where(node);
    if (option.kind == OptionKind::kList) {
      if (!node.IsSequence()) {
        Error(node, absl::StrCat(option.spec.key, ": must be a list"));
        return;
      }
      option.clear();
      option.source = source;
      for (const YAML::Node& element : node) {
        if (element.IsScalar() && element.Scalar().empty()) {
          Error(element, absl::StrCat(option.spec.key, ": must be a non-empty string"));
          continue;
        }
        Scalar(option, element, {}, source);
      }
      return;
    }
    if (option.kind == OptionKind::kMap) {
      if (!node.IsMap()) {
        Error(node, absl::StrCat(option.spec.key, ": must be a mapping"));
        return;
      }
      option.clear();
      option.source = source;
      for (const auto& kv : node) Scalar(option, kv.second, kv.first.Scalar(), source);
      return;
    }
    Scalar(option, node, {}, source);
  }

  void Scalar(Option& option, const YAML::Node& node, const std::string& map_key,
              const std::string& source) {
    if (!node.IsScalar() && !node.IsNull()) {
      Error(node, absl::StrCat(option.spec.key, ": takes a single value (",
                               option.range, ")"));
      return;
    }
    // YAML reads `key:` and `key: null` as the null value; the option sees "" (a text
    // option refuses it, `drift.calibration` reads it as the null calibration).
    const std::string text = node.IsNull() ? std::string() : node.Scalar();
    if (absl::Status s = option.set(text, map_key); !s.ok()) {
      Error(node, absl::StrCat(option.spec.key, ": ", s.message()));
      return;
    }
    option.source = source;
  }

  std::string Where(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return absl::StrCat(ToAbsl(file_), ":", m.line + 1, ":", m.column + 1);
  }

  void Error(const YAML::Node& node, std::string_view message, std::string_view hint = {}) {
    std::string out = absl::StrCat(Where(node), ": ", ToAbsl(message));
    if (!hint.empty()) absl::StrAppend(&out, " (", ToAbsl(hint), ")");
    errors.push_back(std::move(out));
  }

  OptionSet& set_;
  std::string_view file_;
  const std::vector<std::pair<std::string, std::string>>& renamed_;
};

}  // namespace

absl::Status OptionSet::ReadYaml(std::string_view yaml, std::string_view file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(file), ":", e.mark.line + 1, ":",
                                                   e.mark.column + 1, ": not valid YAML: ", e.msg));
  }
  if (root.IsNull()) return absl::OkStatus();  // an empty file sets nothing
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(file), ": a configuration is a mapping of keys"));
  }
  YamlWalker walker(*this, file, renamed_);
  walker.Map(root, "");
  if (!walker.errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(walker.errors, "\n"));
  }
  return absl::OkStatus();
}

std::string OptionSet::Print(unsigned uses) const {
  std::string out;
  for (const Option& o : options_) {
    if ((o.spec.uses & uses) == 0) continue;
    const std::string shown = o.kind == OptionKind::kList || o.kind == OptionKind::kMap
                                  ? o.show()
                                  : YamlScalar(o.show());
    absl::StrAppend(&out, o.spec.key, ": ", shown, "  # ", o.source, "\n");
  }
  return out;
}

namespace {

std::string Cell(std::string_view text) {
  return absl::StrReplaceAll(ToAbsl(text), {{"|", "\\|"}, {"\n", " "}});
}

std::string Uses(unsigned uses) {
  std::vector<std::string> names;
  if (uses & kServe) names.push_back("serve");
  if (uses & kReplay) names.push_back("replay");
  if (uses & kBench) names.push_back("bench");
  return absl::StrJoin(names, ", ");
}

}  // namespace

std::string OptionSet::Reference(std::string_view title, std::string_view preamble) const {
  std::string out = absl::StrCat("# ", ToAbsl(title), "\n\n", ToAbsl(preamble), "\n");
  const auto section_of = [](const Option& o) {
    const size_t dot = o.spec.key.find('.');
    return dot == std::string::npos ? std::string() : o.spec.key.substr(0, dot);
  };
  // Sections in the order they are first declared; each lists all of its options.
  std::vector<std::string> sections;
  for (const Option& o : options_) {
    const std::string section = section_of(o);
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  for (const std::string& section : sections) {
    absl::StrAppend(&out, "\n## ", section.empty() ? "Top level" : absl::StrCat("`", section, "`"),
                    "\n\n| key | flag | takes | default | used by | what it does |\n",
                    "| --- | --- | --- | --- | --- | --- |\n");
    for (const Option& o : options_) {
      if (section_of(o) != section) continue;
      const std::string flag =
          o.flag().empty() ? "(file only)" : absl::StrCat("`", o.flag(), "`");
      const std::string value =
          o.default_text.empty() ? "—" : absl::StrCat("`", Cell(o.default_text), "`");
      absl::StrAppend(&out, "| `", o.spec.key, "` | ", flag, " | ", Cell(o.range), " | ", value,
                      " | ", Uses(o.spec.uses), " | ", Cell(o.spec.help), " |\n");
    }
  }
  return out;
}

}  // namespace vigil::config
