// LineBuffer: reads a byte stream in large chunks and hands it out as records made of one or more
// physical lines, without copying them and without allocating per line.
//
// A format reader calls ExtendLine() to start a record with the next line, looks at it, and calls
// ExtendLine() again while the record continues on the next line (a quoted CSV field with a line
// break, a pretty-printed JSON object); Consume() then drops the record. The record's bytes stay
// contiguous in the buffer: the buffer is compacted (only the unconsumed tail is moved) or grown
// when a record reaches its end. A UTF-8 byte order mark at the start of the input is skipped.
//
// Private to the ingest module. Thread safety: externally synchronized.
#ifndef VIGIL_INGEST_INTERNAL_LINE_BUFFER_H_
#define VIGIL_INGEST_INTERNAL_LINE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::ingest_internal {

// Where the bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to "n" bytes into "dst"; 0 means end of input. Errors are I/O failures.
  virtual absl::StatusOr<size_t> Read(char* dst, size_t n) = 0;
};

// Reads a file with read(2); the error names "path".
absl::StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);
// Serves "data" (owned).
std::unique_ptr<ByteSource> NewStringSource(std::string data);

class LineBuffer {
 public:
  enum class Extend {
    kLine,     // one more line was appended to the record
    kEnd,      // no more input; the record is unchanged
    kTooLong,  // see ExtendLine()
  };

  // "max_record_bytes" bounds memory: a record never grows past it. "chunk_bytes" is the size of
  // one read(2).
  LineBuffer(std::unique_ptr<ByteSource> source, size_t max_record_bytes,
             size_t chunk_bytes = size_t{1} << 20);
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  // Appends the next physical line, with its terminator, to the current record.
  // kTooLong: appending would make the record longer than max_record_bytes. If the record was
  // empty, the over-long line has been skipped (through its '\n') and the record counts as that
  // one line with no bytes; otherwise nothing was consumed and the record is unchanged.
  absl::StatusOr<Extend> ExtendLine();

  // The current record, line terminators included. Valid until the next ExtendLine()/Consume().
  std::string_view record() const {
    return std::string_view(buf_.get() + rec_begin_, rec_end_ - rec_begin_);
  }
  // The last line appended to the record, terminator included.
  std::string_view last_line() const {
    return std::string_view(buf_.get() + last_line_begin_, rec_end_ - last_line_begin_);
  }
  // 1-based physical line number of the record's first line.
  int64_t record_line() const { return record_line_; }
  int lines_in_record() const { return lines_in_record_; }

  // Shrinks the record back to its first line; the other lines will be read again.
  void TruncateToFirstLine();
  // Removes the record's last line (of two or more); ExtendLine() reads it again. For formats
  // whose records end where the next one starts (SWIFT MT messages). After it, last_line() is
  // empty until the next ExtendLine().
  void DropLastLine();
  // Empties the current record without consuming it: ExtendLine() reads its first line again.
  void Unread();
  // Drops the current record; the next ExtendLine() starts a new one.
  void Consume();

 private:
  // Makes room and reads one chunk. Returns false at end of input.
  absl::StatusOr<bool> Fill();
  // Skips input through the next '\n' (or to the end).
  absl::Status SkipLine();

  std::unique_ptr<ByteSource> source_;
  const size_t max_record_bytes_;
  const size_t chunk_bytes_;
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;
  size_t rec_begin_ = 0;        // start of the current record
  size_t rec_end_ = 0;          // end of the current record (after its last terminator)
  size_t last_line_begin_ = 0;  // start of the record's last line
  size_t first_line_end_ = 0;   // end of the record's first line
  size_t end_ = 0;              // end of the bytes read so far
  size_t scanned_ = 0;          // bytes in [rec_end_, scanned_) are known to hold no '\n'
  bool eof_ = false;
  bool started_ = false;  // the BOM check has been done
  int64_t record_line_ = 1;
  int lines_in_record_ = 0;
};

}  // namespace vigil::ingest_internal

#endif  // VIGIL_INGEST_INTERNAL_LINE_BUFFER_H_
