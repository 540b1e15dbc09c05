#include "vigil/screening/consolidated_screening_list.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "vigil/common/csv_record_reader.h"
#include "vigil/common/file_contents.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {
namespace {

std::string Trim(std::string_view s) { return std::string(absl::StripAsciiWhitespace(ToAbsl(s))); }

// Non-empty trimmed parts of "value" split on any of "separators", without duplicates.
std::vector<std::string> Parts(std::string_view value, const char* separators) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(ToAbsl(value), absl::ByAnyChar(separators))) {
    std::string p = Trim(ToStd(part));
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

WatchlistEntry::Type TypeOf(std::string_view value) {
  const std::string t = absl::AsciiStrToLower(ToAbsl(Trim(value)));
  if (t == "individual") return WatchlistEntry::Type::kIndividual;
  if (t == "entity") return WatchlistEntry::Type::kEntity;
  if (t == "vessel") return WatchlistEntry::Type::kVessel;
  if (t == "aircraft") return WatchlistEntry::Type::kAircraft;
  return WatchlistEntry::Type::kUnknown;
}

}  // namespace

bool LooksLikeConsolidatedScreeningList(std::string_view first_line) {
  std::set<std::string> columns;
  for (absl::string_view c : absl::StrSplit(ToAbsl(first_line), ',')) {
    columns.insert(Trim(ToStd(c)));
  }
  return columns.contains("source") && columns.contains("name") && columns.contains("alt_names");
}

absl::StatusOr<Watchlist> ParseConsolidatedScreeningList(std::string_view text, std::string name) {
  CsvRecordReader reader(text, name, kListFileCsvDialect);
  std::vector<std::string> fields;
  VIGIL_ASSIGN_OR_RETURN(const bool has_header, reader.Next(&fields));
  if (!has_header) return absl::InvalidArgumentError(absl::StrCat(name, ": empty file"));
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string c = Trim(fields[i]);
    if (i == 0 && c.rfind("\xEF\xBB\xBF", 0) == 0) c = c.substr(3);  // a UTF-8 byte order mark
    column[c] = i;
  }
  for (const char* required : {"source", "name"}) {
    if (!column.contains(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ":1: the header has no column \"", required, "\""));
    }
  }
  auto get = [&](const char* key) -> std::string_view {
    const auto it = column.find(key);
    return it == column.end() || it->second >= fields.size() ? std::string_view()
                                                             : std::string_view(fields[it->second]);
  };
  std::vector<WatchlistEntry> entries;
  std::set<std::string> ids;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(const bool more, reader.Next(&fields));
    if (!more) break;
    const int64_t line = reader.line();
    if (fields.size() == 1 && Trim(fields[0]).empty()) continue;  // a blank line
    WatchlistEntry e;
    e.name = Trim(get("name"));
    if (e.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": field name: empty"));
    }
    e.id = Trim(get("_id"));
    if (e.id.empty()) e.id = Trim(get("entity_number"));
    if (e.id.empty()) e.id = absl::StrCat("line-", line);
    if (!ids.insert(e.id).second) {
      e.id = absl::StrCat(e.id, "@line-", line);
      ids.insert(e.id);
    }
    e.aliases = Parts(get("alt_names"), ";");
    std::erase(e.aliases, e.name);
    e.type = TypeOf(get("type"));
    e.list = Trim(get("source"));
    e.programs = Parts(get("programs"), ";");
    e.countries = Parts(get("nationalities"), ";,");
    for (std::string& c : Parts(get("citizenships"), ";,")) {
      if (std::find(e.countries.begin(), e.countries.end(), c) == e.countries.end()) {
        e.countries.push_back(std::move(c));
      }
    }
    for (const std::string& id : Parts(get("ids"), ";")) {
      const std::vector<std::string> p = absl::StrSplit(id, ',');
      const std::string number = Trim(p.size() >= 3 ? p[1] : id);
      if (!number.empty()) e.identifiers.push_back(number);
    }
    entries.push_back(std::move(e));
  }
  return Watchlist::Create(std::move(name), ContentVersion(text), std::move(entries));
}

absl::StatusOr<Watchlist> LoadConsolidatedScreeningList(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFileContents(path, "list file"));
  const size_t slash = path.find_last_of('/');
  return ParseConsolidatedScreeningList(text,
                                        slash == std::string::npos ? path : path.substr(slash + 1));
}

}  // namespace vigil::screening
