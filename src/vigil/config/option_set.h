// OptionSet: the one description of a configuration's options — key, command-line flag, help,
// the commands that use it, and how its text becomes a value — from which the YAML file, the
// flags, `vigil config print` and docs/configuration.md are all read. An option is declared once
// (engine/pipeline_options.h, server/serve_options.h); nothing else parses it.
//
//   OptionSet set;
//   set.Integer({.key = "drift.min_rows", .help = "Rows a window needs"}, &config.min_rows, 1, 1e8);
//   VIGIL_RETURN_IF_ERROR(set.ReadYaml(text, "serve.yaml"));   // file:line:column errors
//   VIGIL_RETURN_IF_ERROR(set.Set("drift.min_rows", "80", "--drift-min-rows"));
//
// Keys are dotted paths into the YAML document (`drift.min_rows` is `drift: {min_rows: ..}`).
// Every value passes the same check whatever its source, and each option remembers where its
// value came from ("default", "serve.yaml:4:13", "--drift-min-rows"). The set holds pointers
// into the configuration it was declared over: that configuration must outlive it.
//
// Thread safety: none; a set is built, filled and read on one thread.
#ifndef VIGIL_CONFIG_OPTION_SET_H_
#define VIGIL_CONFIG_OPTION_SET_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace vigil::config {

// The commands an option applies to (a bit set). An option of another command is still read
// from a shared file, but it is not a flag of this one.
enum Use : unsigned {
  kServe = 1u << 0,
  kReplay = 1u << 1,
  kBench = 1u << 2,
  kEveryCommand = kServe | kReplay | kBench,
};

struct OptionSpec {
  std::string key;   // "drift.short_window"
  std::string help;  // one or two sentences; the reference and --help print it
  // The flag without dashes; empty: the key with '.' and '_' as '-' ("drift-short-window");
  // "-": the option is read from the file only (mappings such as auth.certificate_roles).
  std::string flag;
  std::string value_name;  // "MS", "PATH", "SIZE/SLIDE"; empty: from the kind
  unsigned uses = kEveryCommand;
  // The YAML scalar `model: m.json` is the shorthand of `model: {file: m.json}`: set on the
  // option the section's scalar sets.
  bool section_shorthand = false;
};

enum class OptionKind { kBool, kInteger, kNumber, kText, kChoice, kList, kMap };

struct Option {
  OptionSpec spec;
  OptionKind kind = OptionKind::kText;
  std::string range;  // "1 to 100000", "sha256 | sm3", ...; for the reference and errors
  // Parses and stores one value ("true", "80", "60/10"; for a list one element, for a map
  // "key" and "value"). The message is what is wrong with the text, without the key: the
  // caller names the key or the flag.
  std::function<absl::Status(std::string_view text, std::string_view map_key)> set;
  std::function<void()> clear;        // lists and maps: drops the values before a new source's
  std::function<std::string()> show;  // the value as the file would hold it
  std::string default_text;           // show() when declared
  std::string source = "default";     // where the value came from
  std::string flag() const;           // "--drift-short-window", or "" for file-only options
};

class OptionSet {
 public:
  OptionSet() = default;
  OptionSet(const OptionSet&) = delete;
  OptionSet& operator=(const OptionSet&) = delete;

  // Declarations (each bound to the value it sets; `out` must outlive the set). A key or flag
  // declared twice is a programming error (VIGIL_CHECK).
  void Bool(OptionSpec spec, bool* out);
  // Whole numbers from min to max; the unit, if any, is in the key (`_ms`, `_days`).
  void Integer(OptionSpec spec, int64_t* out, int64_t min, int64_t max);
  void Integer(OptionSpec spec, int* out, int64_t min, int64_t max);
  void Integer(OptionSpec spec, uint64_t* out, int64_t min, int64_t max);  // and size_t
  // A count of `Unit` (milliseconds for a key ending _ms, ...) stored in a duration of any
  // precision, e.g. days into std::chrono::hours.
  template <typename Unit, typename Rep, typename Period>
  void Duration(OptionSpec spec, std::chrono::duration<Rep, Period>* out, int64_t min,
                int64_t max);
  // A number within [min, max] ("above" makes the bound exclusive: (min, max]).
  void Number(OptionSpec spec, double* out, double min, double max, bool above_min = false);
  // A non-empty string (a path, a name).
  void Text(OptionSpec spec, std::string* out);
  void Choice(OptionSpec spec, std::string* out, std::vector<std::string> allowed);
  // A YAML sequence; the flag repeats. A source replaces the values of an earlier one.
  void List(OptionSpec spec, std::vector<std::string>* out);
  // A YAML mapping of names to values; file only.
  void Map(OptionSpec spec, std::vector<std::pair<std::string, std::string>>* out);
  // Anything else: `parse` checks and stores the text, `show` prints the value; `range` is
  // what the reference says the option takes.
  void Custom(OptionSpec spec, std::string range,
              std::function<absl::Status(std::string_view text)> parse,
              std::function<std::string()> show);

  // Sets one option from text (lists: one element added unless `replace`), noting `source`.
  // Errors: an unknown key (with the nearest known one), or the value's problem, naming
  // `source` and the key.
  absl::Status Set(std::string_view key, std::string_view text, std::string_view source);
  // Sets the options a YAML document names. Every problem is reported at once, one line each,
  // as "file:line:column: message": unknown keys (with "did you mean"), values out of range,
  // a scalar where a mapping belongs, keys of earlier versions (see Renamed).
  absl::Status ReadYaml(std::string_view yaml, std::string_view file);

  // The option of a key or of a flag ("--drift-min-rows"); nullptr when there is none.
  Option* Find(std::string_view key);
  const Option* FindFlag(std::string_view flag) const;
  const std::vector<Option>& options() const { return options_; }

  // A key an earlier version spelled differently: ReadYaml answers it with its new name.
  void Renamed(std::string old_key, std::string new_key);

  // "key: value   # source", one line per option, in declaration order.
  std::string Print(unsigned uses = kEveryCommand) const;
  // The reference page (docs/configuration.md): one table per section.
  std::string Reference(std::string_view title, std::string_view preamble) const;

 private:
  Option& Declare(OptionSpec spec, OptionKind kind, std::string range);
  absl::Status SetOne(Option& option, std::string_view text, std::string_view map_key,
                      std::string_view source);

  std::vector<Option> options_;
  std::vector<std::pair<std::string, std::string>> renamed_;
};

// --- implementation of the template ---

absl::Status ParseWholeNumber(std::string_view text, int64_t min, int64_t max, int64_t* out);

template <typename Unit, typename Rep, typename Period>
void OptionSet::Duration(OptionSpec spec, std::chrono::duration<Rep, Period>* out, int64_t min,
                         int64_t max) {
  Custom(
      std::move(spec), std::to_string(min) + " to " + std::to_string(max),
      [out, min, max](std::string_view text) {
        int64_t v = 0;
        if (absl::Status s = ParseWholeNumber(text, min, max, &v); !s.ok()) return s;
        *out = std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(Unit(v));
        return absl::OkStatus();
      },
      [out] {
        return std::to_string(std::chrono::duration_cast<Unit>(*out).count());
      });
  options_.back().kind = OptionKind::kInteger;
}

}  // namespace vigil::config

#endif  // VIGIL_CONFIG_OPTION_SET_H_
