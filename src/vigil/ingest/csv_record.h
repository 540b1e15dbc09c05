// CSV records for readers outside ingest (the feature rows `vigil replay --features-out`
// writes, read back by `vigil model train`): RFC 4180 fields of a record that may span lines.
//
// Thread safety: CsvRecordReader is externally synchronized.
#ifndef VIGIL_INGEST_CSV_RECORD_H_
#define VIGIL_INGEST_CSV_RECORD_H_

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil {

// Reads records from a stream: a quoted field may hold commas, quotes ("") and line breaks; LF
// and CRLF both end a record.
class CsvRecordReader {
 public:
  // "in" must outlive the reader; "what" names the input in errors.
  CsvRecordReader(std::istream& in, std::string what) : in_(in), what_(std::move(what)) {}

  // The next record's fields; an empty vector at the end. Errors: kInvalidArgument naming the
  // input, the record's first line and column and what is wrong with its quoting.
  absl::StatusOr<std::vector<std::string>> Next();

  // The line the last record returned began on (1-based).
  int64_t line() const { return record_line_; }

 private:
  std::istream& in_;
  const std::string what_;
  int64_t next_line_ = 1;
  int64_t record_line_ = 0;
  std::string record_, scratch_;
};

}  // namespace vigil

#endif  // VIGIL_INGEST_CSV_RECORD_H_
