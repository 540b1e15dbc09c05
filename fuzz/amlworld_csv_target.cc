// Fuzz target: AmlworldCsvParser (the IBM AMLworld CSV layout read by `vigil replay`).

#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/transaction_checks.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/csv_parser.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/record_error.h"

namespace vigil::fuzz {
namespace {

constexpr std::string_view kSourceName = "fuzz.csv";

// Takes the next record off the front of *rest: up to a line break outside double quotes (a
// quoted field may hold line breaks), without the terminator. Counts the physical lines consumed
// into *lines. The CSV reader ends records the same way.
std::string_view NextRecord(std::string_view* rest, int64_t* lines) {
  bool in_quotes = false;
  size_t i = 0;
  for (; i < rest->size(); ++i) {
    const char c = (*rest)[i];
    if (c == '"') in_quotes = !in_quotes;  // "" inside quotes toggles twice: no change
    if (c == '\n') {
      ++*lines;
      if (!in_quotes) break;
    }
  }
  std::string_view record = rest->substr(0, i);
  rest->remove_prefix(i < rest->size() ? i + 1 : i);
  if (!record.empty() && record.back() == '\r') record.remove_suffix(1);
  return record;
}

void ParseRecord(AmlworldCsvParser& parser, std::string_view record, int64_t line,
                 JsonTransactionParser& json) {
  Transaction fresh;
  RecordError fresh_error;
  const bool ok = parser.Parse(record, line, &fresh, &fresh_error);
  // The same record into a Transaction left over from another record: same outcome.
  Transaction reused = DirtyTransaction();
  RecordError reused_error;
  FUZZ_CHECK(parser.Parse(record, line, &reused, &reused_error) == ok);
  if (!ok) {
    FUZZ_CHECK(!fresh_error.reason.empty());
    FUZZ_CHECK(fresh_error.line == line);
    FUZZ_CHECK(fresh_error.source == kSourceName);
    FUZZ_CHECK(fresh_error.reason == reused_error.reason);
    FUZZ_CHECK(fresh_error.field == reused_error.field);
    (void)fresh_error.ToString();
    return;
  }
  FUZZ_CHECK(reused == fresh);
  CheckParsedTransaction(fresh);
  // docs/ingest.md: the id is derived from the source and the line.
  FUZZ_CHECK(fresh.id == absl::StrCat(ToAbsl(kSourceName), ":", line));
  FUZZ_CHECK(fresh.label.has_value());  // "Is Laundering" is a required column
  CheckJsonRoundTrip(fresh, json);
}

}  // namespace

int FuzzAmlworldCsv(const uint8_t* data, size_t size) {
  // AMLworld has Yen amounts with 2 decimals: read back without the ISO minor-unit check, as
  // json_parser.h advises for data converted from AMLworld.
  static JsonTransactionParser& json = *new JsonTransactionParser([] {
    JsonParserOptions options;
    options.enforce_iso_minor_units = false;
    return options;
  }());
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  AmlworldCsvOptions options;
  options.source_name = std::string(kSourceName);
  int64_t line = 1;  // of the next record
  absl::StatusOr<AmlworldCsvParser> parser = AmlworldCsvParser(options);
  if (rest.starts_with("Timestamp,")) {
    int64_t lines = 0;
    parser = AmlworldCsvParser::ForHeader(NextRecord(&rest, &lines), options);
    line += lines;
    if (!parser.ok()) return 0;
    FUZZ_CHECK(parser->column_count() == 11 || parser->column_count() == 12);
  }
  while (!rest.empty()) {
    int64_t lines = 0;
    const std::string_view record = NextRecord(&rest, &lines);
    ParseRecord(*parser, record, line, json);
    line += lines;
  }
  return 0;
}

}  // namespace vigil::fuzz
