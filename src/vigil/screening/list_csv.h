// Reading the CSV of list files (OFAC's legacy CSV, vigil's list CSV), one record at a time.
#ifndef VIGIL_SCREENING_LIST_CSV_H_
#define VIGIL_SCREENING_LIST_CSV_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::screening {

// The CSV dialect of list files (OFAC's legacy CSV, vigil's list CSV): records end at "\n" or
// "\r\n"; fields are separated by ','; a field that starts with '"' is quoted, "" inside it is
// one '"', and it may hold ',' and line breaks; spaces and tabs may follow the closing quote.
// Unquoted fields are returned as written, trailing spaces included. Empty lines are skipped, and
// a 0x1A byte (DOS end of file) where a record would start ends the text.
//
// Thread safety: externally synchronized.
class CsvRecordReader {
 public:
  // "source" prefixes error messages ("sdn.csv"). "text" must outlive the reader.
  CsvRecordReader(std::string_view text, std::string source);

  // Reads the next record into *fields (replacing their contents). Returns false at the end of
  // the text; kInvalidArgument "<source>:<line>: field <n>: <reason>" (n 1-based) for an
  // unterminated quoted field or text after a closing quote.
  absl::StatusOr<bool> Next(std::vector<std::string>* fields);

  // 1-based line on which the record last returned by Next() starts.
  int64_t line() const { return record_line_; }

 private:
  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  int64_t next_line_ = 1;
  int64_t record_line_ = 0;
};

// The bytes of a list file; kNotFound "cannot open <what> '<path>'" or kDataLoss when it
// cannot be read. Lists are read whole: their version is the hash of these bytes.
absl::StatusOr<std::string> ReadListFile(const std::string& path, std::string_view what);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_LIST_CSV_H_
