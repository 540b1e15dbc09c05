// RFC 4180 field splitting for one CSV record, and the quote state machine that tells where a
// record that spans physical lines (a quoted field with a line break) ends.
//
// Private to the ingest module. Thread safety: stateless functions; the caller owns the scratch.
#ifndef VIGIL_INGEST_INTERNAL_CSV_FIELDS_H_
#define VIGIL_INGEST_INTERNAL_CSV_FIELDS_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace vigil::ingest_internal {

struct CsvSplitError {
  int column = 0;         // 0-based column where the quoting is wrong
  const char* what = "";  // static text: "unterminated quoted field", ...
};

// Splits "record" (no line terminator; it may contain line breaks inside quoted fields) into
// fields. Stores up to "capacity" fields in fields[] and returns the total number of fields (which
// may exceed capacity: the extra fields are counted, not stored), or -1 on malformed quoting with
// *error set.
//
// Fields are views into "record", except quoted fields containing an escaped quote (""), which
// are unescaped into *scratch; views stay valid until the next call with the same scratch. Quoted
// fields are unquoted. Strict RFC 4180: a quote inside an unquoted field, or anything but a comma
// after a closing quote, is malformed. Allocates only when *scratch must grow.
int SplitCsvRecord(std::string_view record, std::string_view* fields, int capacity,
                   std::string* scratch, CsvSplitError* error);

// Tracks whether a record is inside a quoted field, line by line, so a reader knows whether a
// physical line break ends the record. Feed each physical line (without its terminator) in order.
class CsvQuoteState {
 public:
  // Scans one more line of the record. Returns true when the record is complete after it.
  bool ScanLine(std::string_view line);
  void Reset() { in_quotes_ = false; }

 private:
  bool in_quotes_ = false;
};

}  // namespace vigil::ingest_internal

#endif  // VIGIL_INGEST_INTERNAL_CSV_FIELDS_H_
