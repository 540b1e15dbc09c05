// TransactionReader: a stream of Transactions from a file, one record at a time.
//
// Both file formats (AMLworld CSV, JSON Lines) implement it, so replay is format-agnostic.
// A record that fails to parse is reported as kRejected with a RecordError and the reader moves
// on to the next record; only an I/O failure ends the stream with an error.
//
// Files are read in 1 MiB read(2) calls; records are handed out without copying and parsed into
// the caller's Transaction, so steady-state reading allocates nothing per record. Blank lines
// (empty or only spaces, tabs, '\r') are skipped, LF and CRLF line ends are both accepted, the
// last line may lack its terminator, and a leading UTF-8 byte order mark is ignored. A CSV record
// may span lines inside an RFC 4180 quoted field; in JSON Lines a line holding only "{" starts a
// pretty-printed object that continues until its braces balance. docs/ingest.md has the details.
//
// Thread safety: externally synchronized (one reader per thread).
#ifndef VIGIL_INGEST_TRANSACTION_READER_H_
#define VIGIL_INGEST_TRANSACTION_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/record_error.h"

namespace vigil {

enum class ReadResult { kRecord, kRejected, kEnd };

struct ReaderOptions {
  // Name used in errors and in derived transaction ids; defaults to the file's base name.
  std::string source_name;
  // Priority given to records that do not carry one (files are bulk traffic by default).
  Priority default_priority = Priority::kP2;
  // JSON Lines only: JsonParserOptions::enforce_iso_minor_units (reject "12.345" USD).
  bool enforce_iso_minor_units = true;
  // A longer record is rejected ("record_too_large") and skipped; bounds memory on bad input.
  size_t max_record_bytes = size_t{1} << 20;
};

class TransactionReader {
 public:
  virtual ~TransactionReader() = default;

  // On kRecord fills *tx (reusing its storage); on kRejected fills *error; kEnd at end of input.
  // A non-OK status means the input itself failed (I/O error), not a bad record.
  virtual absl::StatusOr<ReadResult> Next(Transaction* tx, RecordError* error) = 0;

  // 1-based line number of the record last returned (for ordering ties and rejects files).
  virtual int64_t line() const = 0;
  // The raw text of the record last returned, without its line terminator.
  virtual std::string_view raw_record() const = 0;

  // Parses a record previously returned by raw_record() (same file, so the same layout), as if
  // it were read at "line". Replay uses it to re-read records it spilled to disk while ordering a
  // file by event time.
  virtual ReadResult ParseRecord(std::string_view raw, int64_t line, Transaction* tx,
                                 RecordError* error) = 0;
};

enum class FileFormat { kAmlworldCsv, kJsonLines, kSwiftMt, kIso20022 };

// "amlworld_csv", "json_lines", "swift_mt", "iso20022": the names replay reports and the audit
// log records as the input format.
std::string_view FileFormatName(FileFormat format);

// Chooses the format from the content: a first line starting with "Timestamp," is AMLworld CSV
// (with or without vigil gen's extra "Typology" column), one starting with "{1:" (or an RJE "$"
// separator) SWIFT MT, one starting with '{' JSON Lines, one starting with '<' an ISO 20022
// message. Leading blank lines and a UTF-8 byte order mark are skipped. Errors: the file cannot
// be read (the errno's code), or it is empty or none of these formats (InvalidArgument).
//
// SWIFT MT files hold one or more messages, each starting on a line of its own with "{1:";
// lines holding only "$" (RJE) and blank lines between them are skipped. A record is one
// message, with the acknowledgement in front of it if any (on its line or the line before:
// swift_mt.h); its line is the line of its first "{1:". MT messages of normal priority get
// default_priority (urgent ones, priority U, are kP0).
//
// An ISO 20022 file holds one message (at most kMaxIso20022Bytes), which may carry several
// transactions: each is one record, with line 1. Since the file's bytes are not one
// transaction's, raw_record() is the transaction's normalized JSON (json_writer.h), and
// ParseRecord reads that JSON back. A message that is refused is one rejected record.
//
// Rejected MT and ISO 20022 records have reason "invalid_message" (the message names the block,
// tag and line, or the XPath) or "unsupported_message_type" (an MT205, a pacs.002, ...).
absl::StatusOr<FileFormat> DetectFileFormat(const std::string& path);

// Opens "path" for reading, detecting its format as DetectFileFormat does. For CSV the header is
// read and checked here: a file whose header is not the AMLworld one is an InvalidArgument error,
// not a stream of rejects. Transactions read from CSV get the id "<source_name>:<line>".
absl::StatusOr<std::unique_ptr<TransactionReader>> OpenTransactionFile(
    const std::string& path, const ReaderOptions& options);

// Same over in-memory content (tests, benchmarks, request bodies); source_name defaults to
// "<buffer>".
absl::StatusOr<std::unique_ptr<TransactionReader>> OpenTransactionBuffer(
    std::string contents, const ReaderOptions& options);

}  // namespace vigil

#endif  // VIGIL_INGEST_TRANSACTION_READER_H_
