// AmlworldCsvParser: one record of the IBM AMLworld CSV layout -> Transaction.
//
//   Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,
//   Payment Currency,Payment Format,Is Laundering[,Typology]
//
// The optional 12th column "Typology" is written by `vigil gen`. docs/ingest.md has the mapping,
// the derived transaction id ("<source_name>:<line>") and every reason code. Errors name the column
// by its header name; the second "Account" column is called "Account.1" (the name pandas gives
// it), so originator and beneficiary account errors can be told apart.
//
// Parse() is the hot path of CSV replay: no heap allocation once the Transaction's strings have
// grown to fit (the caller reuses one Transaction), no per-field std::string. That is why it
// splits records itself (internal/csv_fields.h: views into the record, 8 bytes at a time)
// rather than through common/csv_record_reader.h, the reader of every other CSV, which copies
// each field into a std::string.
//
// Thread safety: externally synchronized (Parse() reuses scratch space); use one per thread.
#ifndef VIGIL_INGEST_CSV_PARSER_H_
#define VIGIL_INGEST_CSV_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/record_error.h"

namespace vigil {

// The AMLworld header line, exactly as the IBM files write it.
inline constexpr std::string_view kAmlworldCsvHeader =
    "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,"
    "Payment Currency,Payment Format,Is Laundering";
// Name of the optional 12th column.
inline constexpr std::string_view kAmlworldTypologyColumn = "Typology";

struct AmlworldCsvOptions {
  // Used as RecordError::source and as the prefix of derived transaction ids. Must be non-empty
  // for ids to be meaningful; readers set it to the file's base name.
  std::string source_name = "amlworld";
  // Priority given to every record (the layout carries none).
  Priority default_priority = Priority::kP2;
  // Whether records have the 12th "Typology" column.
  bool typology_column = false;
};

class AmlworldCsvParser {
 public:
  explicit AmlworldCsvParser(AmlworldCsvOptions options);

  // Checks a header record (without its line terminator) and returns a parser for its layout
  // (11 columns, or 12 with "Typology"). The error says which column differs.
  static absl::StatusOr<AmlworldCsvParser> ForHeader(std::string_view header,
                                                     AmlworldCsvOptions options);

  // Parses one record (without its line terminator; it may contain line breaks inside quoted
  // fields) read at 1-based physical line "line". On success fills every field of *tx, reusing
  // its storage, and returns true; otherwise fills *error (source, line, field, reason, message)
  // and returns false, leaving *tx in an unspecified but valid state.
  bool Parse(std::string_view record, int64_t line, Transaction* tx, RecordError* error);

  const AmlworldCsvOptions& options() const { return options_; }
  int column_count() const { return options_.typology_column ? 12 : 11; }

  // Name used for column "index" (0-based) in errors: the header name, "Account.1" for the
  // beneficiary account.
  static std::string_view ColumnName(int index);

 private:
  AmlworldCsvOptions options_;
  std::string scratch_;  // unescaped quoted fields
};

}  // namespace vigil

#endif  // VIGIL_INGEST_CSV_PARSER_H_
