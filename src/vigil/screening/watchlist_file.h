// vigil's own list format (docs/screening.md), for lists other than OFAC's: a CSV file with a
// header, or JSON Lines, one entry per record.
//
//   CSV:         id,name,aliases,type,countries,identifiers,list
//                42,ACME TRADING LLC,ACME TRADING;ACME LLC,entity,Iran;United Arab Emirates,,PEP
//   JSON Lines:  {"id":"42","name":"ACME TRADING LLC","aliases":["ACME TRADING","ACME LLC"],
//                 "type":"entity","countries":["Iran","United Arab Emirates"],"identifiers":[],
//                 "list":"PEP"}
//
// CSV: the header names the columns, in any order; id and name are required, the others may be
// left out. Dialect as CsvRecordReader; values are trimmed of spaces and tabs; aliases,
// countries and identifiers are ';'-separated (empty parts dropped), so no element can hold ';'.
// JSON Lines: one object per non-blank line; id and name are strings (required), aliases,
// countries and identifiers arrays of strings, type and list strings; null is an absent member.
//
// Both: type is "individual", "entity", "vessel", "aircraft", "unknown" or empty (kUnknown); an
// empty or absent list is the Watchlist's name. Programs are not part of the format.
// Errors are kInvalidArgument "<source>:<line>: field <column or member>: <reason>": unknown
// column or member, missing or empty id or name, duplicate id, unknown type, wrong JSON type,
// wrong number of CSV fields, text that is not JSON.
//
// Thread safety: pure functions.
#ifndef VIGIL_SCREENING_WATCHLIST_FILE_H_
#define VIGIL_SCREENING_WATCHLIST_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/screening/watchlist.h"

namespace vigil::screening {

// The header FormatWatchlistCsv writes (every column, in this order).
inline constexpr std::string_view kWatchlistCsvHeader =
    "id,name,aliases,type,countries,identifiers,list";

// Reads a list file, telling the format by its content: JSON Lines when the first character
// other than white space (and a UTF-8 byte order mark) is '{', CSV otherwise. The Watchlist is
// named after the file's base name ("pep.csv"); its version() is ContentVersion() of the file's
// bytes (what `sha256sum` prints). kNotFound when the file cannot be opened.
absl::StatusOr<Watchlist> LoadWatchlistFile(const std::string& path);

// The same from the file's content: "name" names the Watchlist, "source" prefixes errors.
absl::StatusOr<Watchlist> ParseWatchlist(std::string_view content, std::string name,
                                         std::string_view source);

// The entries as vigil list CSV with kWatchlistCsvHeader, "\n" line ends. Fails
// (kInvalidArgument, naming the entry and field) when a value would not read back the same: an
// alias, country or identifier that is empty or holds ';', or any value with leading or
// trailing spaces or tabs.
absl::StatusOr<std::string> FormatWatchlistCsv(const std::vector<WatchlistEntry>& entries);

// The entries as vigil JSON Lines, every member written; bytes that are not UTF-8 become U+FFFD.
std::string FormatWatchlistJsonLines(const std::vector<WatchlistEntry>& entries);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_WATCHLIST_FILE_H_
