#include "vigil/screening/ofac_sdn.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/csv_record_reader.h"
#include "vigil/common/file_contents.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {
namespace {

constexpr std::array<std::string_view, 12> kSdnColumns = {
    "ent_num",   "SDN_Name", "SDN_Type", "Program",   "Title",      "Call_Sign",
    "Vess_type", "Tonnage",  "GRT",      "Vess_flag", "Vess_owner", "Remarks"};
constexpr std::array<std::string_view, 5> kAltColumns = {"ent_num", "alt_num", "alt_type",
                                                         "alt_name", "alt_remarks"};
constexpr std::array<std::string_view, 6> kAddColumns = {
    "ent_num", "add_num", "address", "city/state/postal", "country", "add_remarks"};
constexpr std::array<std::string_view, 2> kCommentsColumns = {"ent_num", "remarks"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// A field's value: trimmed, "-0-" read as empty.
std::string_view Value(const std::string& field) {
  const std::string_view v = Trim(field);
  return v == "-0-" ? std::string_view() : v;
}

// Reads every record of one file, checking the field count, and hands each to on_record.
template <size_t N, typename OnRecord>
absl::Status ForEachRecord(std::string_view text, const char* file,
                           const std::array<std::string_view, N>& columns, OnRecord on_record) {
  CsvRecordReader reader(text, file, kListFileCsvDialect);
  std::vector<std::string> fields;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(const bool more, reader.Next(&fields));
    if (!more) return absl::OkStatus();
    if (fields.size() != N) {
      std::string names;
      for (std::string_view c : columns)
        absl::StrAppend(&names, names.empty() ? "" : ",", ToAbsl(c));
      return absl::InvalidArgumentError(absl::StrCat(file, ":", reader.line(), ": expected ", N,
                                                     " fields (", names, "), got ", fields.size()));
    }
    VIGIL_RETURN_IF_ERROR(on_record(fields, reader.line()));
  }
}

absl::Status FieldError(const char* file, int64_t line, std::string_view field,
                        std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(file, ":", line, ": field ", ToAbsl(field), ": ", ToAbsl(reason)));
}

// ent_num (or alt_num, add_num): digits only.
absl::StatusOr<std::string> ParseNumber(const std::string& field, const char* file, int64_t line,
                                        std::string_view column) {
  const std::string_view v = Value(field);
  if (v.empty() || !std::all_of(v.begin(), v.end(), IsDigit)) {
    return FieldError(file, line, column,
                      absl::StrCat("not a number: \"", ToAbsl(Trim(field)), "\""));
  }
  return std::string(v);
}

void AppendUnique(std::string value, std::vector<std::string>* out) {
  if (std::find(out->begin(), out->end(), value) == out->end()) out->push_back(std::move(value));
}

std::vector<std::string> SplitPrograms(std::string_view program) {
  std::vector<std::string> out;
  while (true) {
    const size_t sep = program.find("] [");
    const std::string_view p = Trim(program.substr(0, sep));
    if (!p.empty()) AppendUnique(std::string(p), &out);
    if (sep == std::string_view::npos) return out;
    program.remove_prefix(sep + 3);
  }
}

std::string ManifestLine(std::string_view bytes, const char* file) {
  return absl::StrCat(Sha256Hex(bytes), "  ", file, "\n");
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFileContents(path, "OFAC SDN file");
}

}  // namespace

std::vector<std::string> ParseOfacRemarksIdentifiers(std::string_view remarks) {
  enum class Kind { kPlain, kBic, kIban };
  struct Label {
    std::string_view text;
    Kind kind;
  };
  static constexpr Label kLabels[] = {
      {"Passport", Kind::kPlain},
      {"National ID No.", Kind::kPlain},
      {"Registration ID", Kind::kPlain},
      {"Registration Number", Kind::kPlain},
      {"Tax ID No.", Kind::kPlain},
      {"Cedula No.", Kind::kPlain},
      {"Identification Number", Kind::kPlain},
      {"Vessel Registration Identification", Kind::kPlain},
      {"SWIFT/BIC", Kind::kBic},
      {"IBAN", Kind::kIban},
  };
  std::vector<std::string> out;
  while (!remarks.empty()) {
    const size_t semicolon = remarks.find(';');
    std::string_view item = Trim(remarks.substr(0, semicolon));
    remarks =
        semicolon == std::string_view::npos ? std::string_view() : remarks.substr(semicolon + 1);
    if (item.substr(0, 5) == "alt. ") item = Trim(item.substr(5));
    for (const Label& label : kLabels) {
      if (item.size() <= label.text.size() + 1 || item.substr(0, label.text.size()) != label.text ||
          item[label.text.size()] != ' ') {
        continue;
      }
      std::string_view value = item.substr(label.text.size());  // from the space
      for (std::string_view end : {" (", " issued", " expires"}) {
        value = value.substr(0, value.find(end));
      }
      value = Trim(value);
      if (!value.empty() && value.back() == '.') value = Trim(value.substr(0, value.size() - 1));
      if (value.empty()) break;
      if (label.kind == Kind::kPlain && std::none_of(value.begin(), value.end(), IsDigit)) break;
      std::string id(value);
      if (label.kind == Kind::kBic) {
        if ((id.size() != 8 && id.size() != 11) || !std::all_of(id.begin(), id.end(), IsAlnum)) {
          break;
        }
      } else if (label.kind == Kind::kIban) {
        id.erase(std::remove(id.begin(), id.end(), ' '), id.end());
        if (!std::all_of(id.begin(), id.end(), IsAlnum)) break;
      }
      AppendUnique(std::move(id), &out);
      break;
    }
  }
  return out;
}

absl::StatusOr<Watchlist> LoadOfacSdnFromStrings(std::string_view sdn, std::string_view alt,
                                                 std::string_view add, std::string_view comments) {
  std::vector<WatchlistEntry> entries;
  std::vector<std::string> remarks;
  std::unordered_map<std::string, size_t> by_ent_num;

  VIGIL_RETURN_IF_ERROR(ForEachRecord(
      sdn, "sdn.csv", kSdnColumns,
      [&](const std::vector<std::string>& f, int64_t line) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(std::string ent_num, ParseNumber(f[0], "sdn.csv", line, "ent_num"));
        WatchlistEntry e;
        e.name = std::string(Value(f[1]));
        if (e.name.empty()) return FieldError("sdn.csv", line, "SDN_Name", "empty");
        const std::string_view type = Value(f[2]);
        if (type.empty()) {
          e.type = WatchlistEntry::Type::kEntity;
        } else if (type == "individual") {
          e.type = WatchlistEntry::Type::kIndividual;
        } else if (type == "vessel") {
          e.type = WatchlistEntry::Type::kVessel;
        } else if (type == "aircraft") {
          e.type = WatchlistEntry::Type::kAircraft;
        } else {
          return FieldError("sdn.csv", line, "SDN_Type",
                            absl::StrCat("unknown type \"", ToAbsl(type),
                                         "\" (expected individual, vessel, aircraft or -0-)"));
        }
        e.programs = SplitPrograms(Value(f[3]));
        e.list = std::string(kOfacSdnListName);
        if (!by_ent_num.emplace(ent_num, entries.size()).second) {
          return FieldError("sdn.csv", line, "ent_num",
                            absl::StrCat("duplicate ent_num ", ent_num));
        }
        e.id = std::move(ent_num);
        entries.push_back(std::move(e));
        // Not trimmed: sdn_comments.csv may continue it mid-word.
        remarks.push_back(Value(f[11]).empty() ? std::string() : f[11]);
        return absl::OkStatus();
      }));

  // The entry an alt.csv / add.csv record belongs to.
  const auto owner = [&](const std::vector<std::string>& f, const char* file,
                         int64_t line) -> absl::StatusOr<WatchlistEntry*> {
    VIGIL_ASSIGN_OR_RETURN(const std::string ent_num, ParseNumber(f[0], file, line, "ent_num"));
    const auto it = by_ent_num.find(ent_num);
    if (it == by_ent_num.end()) {
      return FieldError(file, line, "ent_num", absl::StrCat(ent_num, " is not in sdn.csv"));
    }
    return &entries[it->second];
  };

  VIGIL_RETURN_IF_ERROR(
      ForEachRecord(alt, "alt.csv", kAltColumns,
                    [&](const std::vector<std::string>& f, int64_t line) -> absl::Status {
                      VIGIL_ASSIGN_OR_RETURN(WatchlistEntry* const e, owner(f, "alt.csv", line));
                      VIGIL_RETURN_IF_ERROR(ParseNumber(f[1], "alt.csv", line, "alt_num").status());
                      const std::string_view name = Value(f[3]);
                      if (name.empty()) return FieldError("alt.csv", line, "alt_name", "empty");
                      e->aliases.emplace_back(name);
                      return absl::OkStatus();
                    }));

  VIGIL_RETURN_IF_ERROR(
      ForEachRecord(add, "add.csv", kAddColumns,
                    [&](const std::vector<std::string>& f, int64_t line) -> absl::Status {
                      VIGIL_ASSIGN_OR_RETURN(WatchlistEntry* const e, owner(f, "add.csv", line));
                      VIGIL_RETURN_IF_ERROR(ParseNumber(f[1], "add.csv", line, "add_num").status());
                      const std::string_view country = Value(f[4]);
                      if (!country.empty()) AppendUnique(std::string(country), &e->countries);
                      return absl::OkStatus();
                    }));

  VIGIL_RETURN_IF_ERROR(ForEachRecord(
      comments, "sdn_comments.csv", kCommentsColumns,
      [&](const std::vector<std::string>& f, int64_t line) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(const std::string ent_num,
                               ParseNumber(f[0], "sdn_comments.csv", line, "ent_num"));
        const auto it = by_ent_num.find(ent_num);
        // The overflow continues the Remarks text mid-word, so it is appended as is.
        if (it != by_ent_num.end()) remarks[it->second].append(f[1]);
        return absl::OkStatus();
      }));

  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].identifiers = ParseOfacRemarksIdentifiers(remarks[i]);
  }

  std::string manifest = ManifestLine(sdn, "sdn.csv");
  if (!alt.empty()) manifest += ManifestLine(alt, "alt.csv");
  if (!add.empty()) manifest += ManifestLine(add, "add.csv");
  if (!comments.empty()) manifest += ManifestLine(comments, "sdn_comments.csv");
  return Watchlist::Create(std::string(kOfacSdnListName), ContentVersion(manifest),
                           std::move(entries));
}

absl::StatusOr<Watchlist> LoadOfacSdn(const std::string& dir) {
  VIGIL_ASSIGN_OR_RETURN(const std::string sdn, ReadFile(dir + "/sdn.csv"));
  // alt.csv, add.csv and sdn_comments.csv may be absent (an extract of the list); an empty
  // one is taken as absent.
  std::string alt, add, comments;
  if (std::ifstream(dir + "/alt.csv", std::ios::binary)) {
    VIGIL_ASSIGN_OR_RETURN(alt, ReadFile(dir + "/alt.csv"));
  }
  if (std::ifstream(dir + "/add.csv", std::ios::binary)) {
    VIGIL_ASSIGN_OR_RETURN(add, ReadFile(dir + "/add.csv"));
  }
  if (std::ifstream(dir + "/sdn_comments.csv", std::ios::binary)) {
    VIGIL_ASSIGN_OR_RETURN(comments, ReadFile(dir + "/sdn_comments.csv"));
  }
  return LoadOfacSdnFromStrings(sdn, alt, add, comments);
}

}  // namespace vigil::screening
