// CsvRecordReader: the records of a CSV text, one at a time, for every CSV vigil reads outside
// the transaction hot path: list files (OFAC's legacy CSV, vigil's list CSV, the Consolidated
// Screening List), the feature rows `vigil replay --features-out` writes, and the tables
// `vigil drift compare` reads. (AMLworld transactions go through ingest/csv_parser.h, which
// splits its records in place without copying a field.)
//
// A record is fields separated by ','; "\n" or "\r\n" ends it, as does "\r" at the end of the
// text. A field that starts with '"' is quoted: "" inside it is one '"', and it may hold ',' and
// line breaks, which are kept as written ("\r\n" stays "\r\n"). Unquoted fields are returned as
// written, spaces included. CsvDialect says what else is accepted.
//
// Usage:
//   CsvRecordReader reader(text, "sdn.csv", kListFileCsvDialect);
//   std::vector<std::string> fields;
//   while (true) {
//     VIGIL_ASSIGN_OR_RETURN(const bool more, reader.Next(&fields));
//     if (!more) break;
//     ... fields, reader.line() ...
//   }
//
// Thread safety: externally synchronized.
#ifndef VIGIL_COMMON_CSV_RECORD_READER_H_
#define VIGIL_COMMON_CSV_RECORD_READER_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil {

// What a CSV text may hold beyond RFC 4180. The defaults are strict RFC 4180.
struct CsvDialect {
  // Lines holding nothing (a lone "\n" or "\r\n", and stray '\r' bytes) where a record would
  // start are skipped. Default false: an empty line is a record of one empty field, which a
  // reader checking its field count then reports with its line number.
  bool skip_empty_lines = false;
  // Spaces and tabs may follow a closing quote ("A" ,B), as OFAC writes them; they are dropped.
  // Default false: anything but ',' or the end of the record after a closing quote is an error.
  bool allow_space_after_quote = false;
  // A 0x1A byte (the DOS end-of-file mark, which OFAC's files end with) where a record would
  // start ends the text; what follows it is not read. Default false: 0x1A is field text.
  bool dos_eof = false;
  // A '"' inside an unquoted field (5" PIPE) is text. Default false: it is an error, since it
  // more often means a quoted field that was cut or badly escaped.
  bool allow_bare_quotes = false;

  // How errors name the field and the fault, as each kind of file has always told its users:
  //   kColumn  "<input>:<line>: column 2: unterminated quoted field"
  //   kField   "<input>:<line>: field 2: quoted field not terminated"
  enum class ErrorWording { kColumn, kField };
  ErrorWording error_wording = ErrorWording::kColumn;
};

// Strict RFC 4180 (feature rows).
inline constexpr CsvDialect kRfc4180CsvDialect{};

// The CSV of list files as publishers write it (OFAC's legacy CSV, vigil's list CSV, the
// Consolidated Screening List): empty lines skipped, spaces after a closing quote, a DOS
// end-of-file byte, quotes inside unquoted fields kept.
inline constexpr CsvDialect kListFileCsvDialect{.skip_empty_lines = true,
                                                .allow_space_after_quote = true,
                                                .dos_eof = true,
                                                .allow_bare_quotes = true,
                                                .error_wording = CsvDialect::ErrorWording::kField};

class CsvRecordReader {
 public:
  // Reads "text", which must outlive the reader. "input_name" begins every error message
  // ("sdn.csv", a path).
  CsvRecordReader(std::string_view text, std::string input_name, CsvDialect dialect = {});
  // Reads "in" a buffer at a time (64 KiB; a record may be longer), so a file of any size takes
  // the memory of its longest record. "in" must outlive the reader and is read only by it.
  CsvRecordReader(std::istream& in, std::string input_name, CsvDialect dialect = {});

  CsvRecordReader(const CsvRecordReader&) = delete;
  CsvRecordReader& operator=(const CsvRecordReader&) = delete;

  // Reads the next record into *fields, replacing its contents (the strings' capacity is reused).
  // Returns true for a record (at least one field), false at the end of the text with *fields
  // empty. Errors: kInvalidArgument "<input>:<line>: field <n>: <reason>" (or "column <n>",
  // by CsvDialect::error_wording; n 1-based) for a quoted field not terminated (the line the
  // quote opened on), text after a closing quote or a quote inside an unquoted field (the line
  // it is on); kDataLoss "<input>: read error" when the stream fails. After an error *fields is
  // unspecified and every later call returns the same error.
  absl::StatusOr<bool> Next(std::vector<std::string>* fields);

  // 1-based line on which the record last returned by Next() starts.
  int64_t line() const { return record_line_; }

 private:
  enum class Fault { kUnterminated, kTextAfterQuote, kBareQuote };

  absl::StatusOr<bool> ReadRecord(std::vector<std::string>* fields);
  absl::Status ReadQuoted(size_t number, std::string* field);
  absl::Status ReadUnquoted(size_t number, std::string* field);
  // REQUIRES: at the end of a record (AtRecordEnd()). Moves past its terminator.
  void SkipRecordEnd();
  bool AtRecordEnd();
  // The byte "ahead" bytes past pos_, or -1 past the end of the text.
  int Peek(size_t ahead = 0) {
    if (pos_ + ahead >= data_.size() && !Fill(ahead + 1)) return -1;
    return static_cast<unsigned char>(data_[pos_ + ahead]);
  }
  // Makes at least "n" unread bytes available from pos_, reading the stream; false when it ends
  // first (or when reading a string).
  bool Fill(size_t n);
  absl::Status Error(int64_t line, size_t number, Fault fault) const;

  // Constant after construction.
  std::istream* const in_;  // null when reading a string
  const std::string input_name_;
  const CsvDialect dialect_;

  std::string buffer_;     // what was read from in_
  std::string_view data_;  // the text, or the filled part of buffer_
  size_t pos_ = 0;         // the next unread byte of data_
  bool ended_ = false;     // a DOS end-of-file byte was seen
  bool read_failed_ = false;
  absl::Status error_;
  int64_t next_line_ = 1;
  int64_t record_line_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_COMMON_CSV_RECORD_READER_H_
