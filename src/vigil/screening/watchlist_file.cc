#include "vigil/screening/watchlist_file.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/csv_record_reader.h"
#include "vigil/common/file_contents.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {
namespace {

using Json = nlohmann::json;

enum Column { kId, kName, kAliases, kType, kCountries, kIdentifiers, kList, kColumnCount };
constexpr std::array<std::string_view, kColumnCount> kColumnNames = {
    "id", "name", "aliases", "type", "countries", "identifiers", "list"};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<Column> ColumnFor(std::string_view name) {
  for (int c = 0; c < kColumnCount; ++c) {
    if (kColumnNames[c] == name) return static_cast<Column>(c);
  }
  return std::nullopt;
}

std::string ExpectedColumns() { return std::string(kWatchlistCsvHeader); }

absl::Status FieldError(std::string_view source, int64_t line, std::string_view field,
                        std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(ToAbsl(source), ":", line, ": field ", ToAbsl(field), ": ", ToAbsl(reason)));
}

absl::StatusOr<WatchlistEntry::Type> ParseType(std::string_view type, std::string_view source,
                                               int64_t line) {
  if (type.empty() || type == "unknown") return WatchlistEntry::Type::kUnknown;
  if (type == "individual") return WatchlistEntry::Type::kIndividual;
  if (type == "entity") return WatchlistEntry::Type::kEntity;
  if (type == "vessel") return WatchlistEntry::Type::kVessel;
  if (type == "aircraft") return WatchlistEntry::Type::kAircraft;
  return FieldError(source, line, "type",
                    absl::StrCat("unknown type \"", ToAbsl(type),
                                 "\" (expected individual, entity, vessel, aircraft or unknown)"));
}

std::vector<std::string> SplitList(std::string_view value) {
  std::vector<std::string> out;
  while (true) {
    const size_t sep = value.find(';');
    const std::string_view part = Trim(value.substr(0, sep));
    if (!part.empty()) out.emplace_back(part);
    if (sep == std::string_view::npos) return out;
    value.remove_prefix(sep + 1);
  }
}

// Checks what every entry of a file needs, whatever its format, and adds the entry.
absl::Status AddEntry(WatchlistEntry e, std::string_view source, int64_t line,
                      const std::string& list_name,
                      std::unordered_map<std::string, int64_t>* first_line,
                      std::vector<WatchlistEntry>* entries) {
  if (e.id.empty()) return FieldError(source, line, "id", "empty");
  if (e.name.empty()) return FieldError(source, line, "name", "empty");
  const auto [it, inserted] = first_line->emplace(e.id, line);
  if (!inserted) {
    return FieldError(source, line, "id",
                      absl::StrCat("duplicate id \"", e.id, "\" (first on line ", it->second, ")"));
  }
  if (e.list.empty()) e.list = list_name;
  entries->push_back(std::move(e));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<WatchlistEntry>> ParseCsv(std::string_view content,
                                                     const std::string& list_name,
                                                     std::string_view source) {
  CsvRecordReader reader(content, std::string(source), kListFileCsvDialect);
  std::vector<std::string> fields;
  VIGIL_ASSIGN_OR_RETURN(const bool has_header, reader.Next(&fields));
  if (!has_header) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(source), ": empty: expected a CSV header (", ExpectedColumns(), ") or JSON Lines"));
  }
  const int64_t header_line = reader.line();
  std::vector<Column> columns;
  std::array<bool, kColumnCount> seen{};
  for (const std::string& f : fields) {
    const std::string_view name = Trim(f);
    const std::optional<Column> c = ColumnFor(name);
    if (!c) {
      return FieldError(source, header_line, name,
                        absl::StrCat("unknown column (expected ", ExpectedColumns(), ")"));
    }
    if (seen[*c]) return FieldError(source, header_line, name, "column appears twice");
    seen[*c] = true;
    columns.push_back(*c);
  }
  for (Column required : {kId, kName}) {
    if (!seen[required]) {
      return FieldError(source, header_line, kColumnNames[required], "missing column");
    }
  }

  std::vector<WatchlistEntry> entries;
  std::unordered_map<std::string, int64_t> first_line;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(const bool more, reader.Next(&fields));
    if (!more) return entries;
    const int64_t line = reader.line();
    if (fields.size() != columns.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ":", line, ": expected ", columns.size(),
                       " fields (as the header), got ", fields.size()));
    }
    WatchlistEntry e;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string_view v = Trim(fields[i]);
      switch (columns[i]) {
        case kId:
          e.id = std::string(v);
          break;
        case kName:
          e.name = std::string(v);
          break;
        case kAliases:
          e.aliases = SplitList(v);
          break;
        case kType: {
          VIGIL_ASSIGN_OR_RETURN(e.type, ParseType(v, source, line));
          break;
        }
        case kCountries:
          e.countries = SplitList(v);
          break;
        case kIdentifiers:
          e.identifiers = SplitList(v);
          break;
        case kList:
          e.list = std::string(v);
          break;
        case kColumnCount:
          break;
      }
    }
    VIGIL_RETURN_IF_ERROR(AddEntry(std::move(e), source, line, list_name, &first_line, &entries));
  }
}

absl::Status JsonString(const Json& value, std::string_view source, int64_t line,
                        std::string_view member, std::string* out) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_string()) return FieldError(source, line, member, "expected a string");
  *out = value.get<std::string>();
  return absl::OkStatus();
}

absl::Status JsonStrings(const Json& value, std::string_view source, int64_t line,
                         std::string_view member, std::vector<std::string>* out) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_array()) return FieldError(source, line, member, "expected an array of strings");
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return FieldError(source, line, member, absl::StrCat("element ", i, ": expected a string"));
    }
    out->push_back(value[i].get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<WatchlistEntry>> ParseJsonLines(std::string_view content,
                                                           const std::string& list_name,
                                                           std::string_view source) {
  std::vector<WatchlistEntry> entries;
  std::unordered_map<std::string, int64_t> first_line;
  int64_t line = 0;
  while (!content.empty()) {
    ++line;
    const size_t eol = content.find('\n');
    const std::string_view text = content.substr(0, eol);
    content = eol == std::string_view::npos ? std::string_view() : content.substr(eol + 1);
    if (std::all_of(text.begin(), text.end(), IsBlank)) continue;
    const Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ":", line, ": not a JSON value (or not UTF-8)"));
    }
    if (!j.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ":", line, ": expected a JSON object"));
    }
    WatchlistEntry e;
    for (const auto& [key, value] : j.items()) {
      const std::optional<Column> c = ColumnFor(key);
      if (!c) {
        return FieldError(source, line, key,
                          absl::StrCat("unknown member (expected ", ExpectedColumns(), ")"));
      }
      switch (*c) {
        case kId:
          VIGIL_RETURN_IF_ERROR(JsonString(value, source, line, key, &e.id));
          break;
        case kName:
          VIGIL_RETURN_IF_ERROR(JsonString(value, source, line, key, &e.name));
          break;
        case kAliases:
          VIGIL_RETURN_IF_ERROR(JsonStrings(value, source, line, key, &e.aliases));
          break;
        case kType: {
          std::string type;
          VIGIL_RETURN_IF_ERROR(JsonString(value, source, line, key, &type));
          VIGIL_ASSIGN_OR_RETURN(e.type, ParseType(type, source, line));
          break;
        }
        case kCountries:
          VIGIL_RETURN_IF_ERROR(JsonStrings(value, source, line, key, &e.countries));
          break;
        case kIdentifiers:
          VIGIL_RETURN_IF_ERROR(JsonStrings(value, source, line, key, &e.identifiers));
          break;
        case kList:
          VIGIL_RETURN_IF_ERROR(JsonString(value, source, line, key, &e.list));
          break;
        case kColumnCount:
          break;
      }
    }
    VIGIL_RETURN_IF_ERROR(AddEntry(std::move(e), source, line, list_name, &first_line, &entries));
  }
  return entries;
}

// Appends one CSV field, quoted when it holds a separator, quote or line break.
void AppendCsvField(std::string_view value, std::string* out) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(value);
    return;
  }
  out->push_back('"');
  for (char c : value) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

absl::Status CheckCsvValue(std::string_view value, size_t entry, std::string_view field) {
  if (value != Trim(value)) {
    return absl::InvalidArgumentError(absl::StrCat("entry ", entry, ": field ", ToAbsl(field),
                                                   ": leading or trailing spaces or tabs"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JoinCsvList(const std::vector<std::string>& values, size_t entry,
                                        std::string_view field) {
  std::string out;
  for (const std::string& v : values) {
    if (v.empty() || v.find(';') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("entry ", entry, ": field ", ToAbsl(field),
                                                     ": element \"", v,
                                                     "\" is empty or holds ';'"));
    }
    VIGIL_RETURN_IF_ERROR(CheckCsvValue(v, entry, field));
    if (!out.empty()) out.push_back(';');
    out += v;
  }
  return out;
}

}  // namespace

absl::StatusOr<Watchlist> ParseWatchlist(std::string_view content, std::string name,
                                         std::string_view source) {
  std::string_view body = content;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  const size_t first = std::find_if_not(body.begin(), body.end(), IsBlank) - body.begin();
  absl::StatusOr<std::vector<WatchlistEntry>> entries = first < body.size() && body[first] == '{'
                                                            ? ParseJsonLines(body, name, source)
                                                            : ParseCsv(body, name, source);
  if (!entries.ok()) return entries.status();
  std::string version = ContentVersion(content);
  return Watchlist::Create(std::move(name), std::move(version), *std::move(entries));
}

absl::StatusOr<Watchlist> LoadWatchlistFile(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string content, ReadFileContents(path, "list file"));
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return ParseWatchlist(content, std::move(name), path);
}

absl::StatusOr<std::string> FormatWatchlistCsv(const std::vector<WatchlistEntry>& entries) {
  std::string out = absl::StrCat(ToAbsl(kWatchlistCsvHeader), "\n");
  for (size_t i = 0; i < entries.size(); ++i) {
    const WatchlistEntry& e = entries[i];
    VIGIL_RETURN_IF_ERROR(CheckCsvValue(e.id, i, "id"));
    VIGIL_RETURN_IF_ERROR(CheckCsvValue(e.name, i, "name"));
    VIGIL_RETURN_IF_ERROR(CheckCsvValue(e.list, i, "list"));
    VIGIL_ASSIGN_OR_RETURN(const std::string aliases, JoinCsvList(e.aliases, i, "aliases"));
    VIGIL_ASSIGN_OR_RETURN(const std::string countries, JoinCsvList(e.countries, i, "countries"));
    VIGIL_ASSIGN_OR_RETURN(const std::string identifiers,
                           JoinCsvList(e.identifiers, i, "identifiers"));
    for (std::string_view v : {std::string_view(e.id), std::string_view(e.name),
                               std::string_view(aliases), WatchlistEntryTypeName(e.type),
                               std::string_view(countries), std::string_view(identifiers)}) {
      AppendCsvField(v, &out);
      out.push_back(',');
    }
    AppendCsvField(e.list, &out);
    out.push_back('\n');
  }
  return out;
}

std::string FormatWatchlistJsonLines(const std::vector<WatchlistEntry>& entries) {
  std::string out;
  for (const WatchlistEntry& e : entries) {
    nlohmann::ordered_json j;
    j["id"] = e.id;
    j["name"] = e.name;
    j["aliases"] = e.aliases;
    j["type"] = std::string(WatchlistEntryTypeName(e.type));
    j["countries"] = e.countries;
    j["identifiers"] = e.identifiers;
    j["list"] = e.list;
    out += j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out.push_back('\n');
  }
  return out;
}

}  // namespace vigil::screening
