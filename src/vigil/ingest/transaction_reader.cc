#include "vigil/ingest/transaction_reader.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/ingest/csv_parser.h"
#include "vigil/ingest/internal/csv_fields.h"
#include "vigil/ingest/internal/line_buffer.h"
#include "vigil/ingest/internal/string_view.h"
#include "vigil/ingest/iso20022.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/swift_mt.h"
#include "vigil/ingest/swift_mt_transaction.h"

namespace vigil {
namespace {

using ingest_internal::LineBuffer;
using Extend = LineBuffer::Extend;
using ingest_internal::ToAbsl;

std::string_view StripTerminator(std::string_view record) {
  if (!record.empty() && record.back() == '\n') record.remove_suffix(1);
  if (!record.empty() && record.back() == '\r') record.remove_suffix(1);
  return record;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsBlank(std::string_view line) {
  for (const char c : line) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsRjeSeparator(std::string_view line) { return Trim(line) == "$"; }

absl::StatusOr<FileFormat> FormatOfFirstLine(std::string_view line, std::string_view where) {
  if (line.starts_with("Timestamp,")) return FileFormat::kAmlworldCsv;
  if (LooksLikeSwiftMt(line) || IsRjeSeparator(line)) return FileFormat::kSwiftMt;
  if (Trim(line).starts_with('{')) return FileFormat::kJsonLines;
  if (LooksLikeXml(line)) return FileFormat::kIso20022;
  return absl::InvalidArgumentError(
      absl::StrCat(ToAbsl(where), ": cannot detect the format: the first line starts with '",
                   ToAbsl(line.substr(0, 24)), "'; expected the AMLworld CSV header (",
                   ToAbsl(kAmlworldCsvHeader), "), a JSON object ('{'), a SWIFT MT message "
                   "('{1:') or an ISO 20022 XML message ('<')"));
}

// One JSON transaction record, its rejection placed at "line".
ReadResult ParseJsonRecord(JsonTransactionParser& parser, std::string_view raw, int64_t line,
                           Transaction* tx, RecordError* error) {
  if (parser.Parse(raw, tx, error)) return ReadResult::kRecord;
  error->line = line;
  return ReadResult::kRejected;
}

// A payment message refused: its reason code, and the parser's message (which says where).
void MessageError(const absl::Status& status, std::string_view source, int64_t line,
                  RecordError* error) {
  error->Clear();
  error->source = source;
  error->line = line;
  error->reason = status.code() == absl::StatusCode::kUnimplemented ? "unsupported_message_type"
                                                                   : "invalid_message";
  error->message = std::string(ToStd(status.message()));
}

// Reads up to the first non-blank line, leaves it unread, and returns it (terminator stripped).
absl::StatusOr<std::string_view> PeekFirstLine(LineBuffer& buffer, std::string_view where) {
  for (;;) {
    VIGIL_ASSIGN_OR_RETURN(const Extend ext, buffer.ExtendLine());
    if (ext == Extend::kEnd) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(where), ": empty input (no header, no records)"));
    }
    if (ext == Extend::kTooLong) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(where), ":", buffer.record_line(), ": first line is too long"));
    }
    const std::string_view line = StripTerminator(buffer.record());
    if (!IsBlank(line)) return line;
    buffer.Consume();
  }
}

// Tells when a pretty-printed JSON value, fed line by line, is complete (its braces balance).
class JsonBraceCounter {
 public:
  // Returns true once the outermost value has closed.
  bool Scan(std::string_view text) {
    for (const char c : text) {
      if (in_string_) {
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if ((c == '}' || c == ']') && --depth_ == 0) {
        return true;
      }
    }
    return false;
  }

 private:
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
};

class ReaderBase : public TransactionReader {
 public:
  ReaderBase(std::unique_ptr<LineBuffer> buffer, std::string source_name, size_t max_record_bytes)
      : buffer_(std::move(buffer)),
        source_name_(std::move(source_name)),
        max_record_bytes_(max_record_bytes) {}

  int64_t line() const override { return line_; }
  std::string_view raw_record() const override { return raw_; }

 protected:
  // Drops the previous record and starts the next non-blank one. Returns kEnd, kTooLong (error
  // filled), or kLine with the record's first line in the buffer.
  absl::StatusOr<Extend> StartRecord(RecordError* error) {
    for (;;) {
      buffer_->Consume();
      raw_ = {};
      VIGIL_ASSIGN_OR_RETURN(const Extend ext, buffer_->ExtendLine());
      line_ = buffer_->record_line();
      if (ext == Extend::kTooLong) TooLarge(error);
      if (ext != Extend::kLine || !IsBlank(buffer_->record())) return ext;
    }
  }

  void TooLarge(RecordError* error) {
    error->Clear();
    error->source = source_name_;
    error->line = line_;
    error->reason = "record_too_large";
    error->message = absl::StrCat("record is longer than ", max_record_bytes_,
                                  " bytes (ReaderOptions::max_record_bytes); skipped");
  }

  std::unique_ptr<LineBuffer> buffer_;
  const std::string source_name_;
  const size_t max_record_bytes_;
  int64_t line_ = 0;
  std::string_view raw_;
};

class CsvReader final : public ReaderBase {
 public:
  CsvReader(std::unique_ptr<LineBuffer> buffer, AmlworldCsvParser parser, size_t max_record_bytes)
      : ReaderBase(std::move(buffer), parser.options().source_name, max_record_bytes),
        parser_(std::move(parser)) {}

  absl::StatusOr<ReadResult> Next(Transaction* tx, RecordError* error) override {
    VIGIL_ASSIGN_OR_RETURN(const Extend ext, StartRecord(error));
    if (ext == Extend::kEnd) return ReadResult::kEnd;
    if (ext == Extend::kTooLong) return ReadResult::kRejected;
    ingest_internal::CsvQuoteState quotes;
    if (!quotes.ScanLine(StripTerminator(buffer_->record()))) {
      // A quoted field continues on the next line.
      Extend more = Extend::kLine;
      bool complete = false;
      while (!complete) {
        VIGIL_ASSIGN_OR_RETURN(more, buffer_->ExtendLine());
        if (more != Extend::kLine) break;
        complete = quotes.ScanLine(StripTerminator(buffer_->last_line()));
      }
      if (!complete) {
        // Unterminated at the end of input or past the size limit: reject the first line alone
        // (the parser reports the open quote) and go on with the line after it.
        buffer_->TruncateToFirstLine();
        if (more == Extend::kTooLong) {
          raw_ = StripTerminator(buffer_->record());
          TooLarge(error);
          return ReadResult::kRejected;
        }
      }
    }
    raw_ = StripTerminator(buffer_->record());
    return parser_.Parse(raw_, line_, tx, error) ? ReadResult::kRecord : ReadResult::kRejected;
  }

  ReadResult ParseRecord(std::string_view raw, int64_t line, Transaction* tx,
                         RecordError* error) override {
    return parser_.Parse(raw, line, tx, error) ? ReadResult::kRecord : ReadResult::kRejected;
  }

 private:
  AmlworldCsvParser parser_;
};

class JsonLinesReader final : public ReaderBase {
 public:
  JsonLinesReader(std::unique_ptr<LineBuffer> buffer, JsonTransactionParser parser,
                  size_t max_record_bytes)
      : ReaderBase(std::move(buffer), parser.options().source_name, max_record_bytes),
        parser_(std::move(parser)) {}

  absl::StatusOr<ReadResult> Next(Transaction* tx, RecordError* error) override {
    VIGIL_ASSIGN_OR_RETURN(const Extend ext, StartRecord(error));
    if (ext == Extend::kEnd) return ReadResult::kEnd;
    if (ext == Extend::kTooLong) return ReadResult::kRejected;
    if (Trim(buffer_->record()) == "{") {
      // A pretty-printed object: read on until its braces balance. At the end of input the
      // record is what there is, and the parser reports it as truncated.
      JsonBraceCounter braces;
      braces.Scan(buffer_->record());
      for (;;) {
        VIGIL_ASSIGN_OR_RETURN(const Extend more, buffer_->ExtendLine());
        if (more == Extend::kEnd) break;
        if (more == Extend::kTooLong) {
          buffer_->TruncateToFirstLine();
          raw_ = StripTerminator(buffer_->record());
          TooLarge(error);
          return ReadResult::kRejected;
        }
        if (braces.Scan(buffer_->last_line())) break;
      }
    }
    raw_ = StripTerminator(buffer_->record());
    return ParseRecord(raw_, line_, tx, error);
  }

  ReadResult ParseRecord(std::string_view raw, int64_t line, Transaction* tx,
                         RecordError* error) override {
    return ParseJsonRecord(parser_, raw, line, tx, error);
  }

 private:
  JsonTransactionParser parser_;
};

// SWIFT MT: a record is one message, from its "{1:" line up to the next message's (or an RJE
// "$" line, or the end); an acknowledgement on a line of its own is kept with the message on the
// next line.
class SwiftMtReader final : public ReaderBase {
 public:
  SwiftMtReader(std::unique_ptr<LineBuffer> buffer, std::string source_name,
                Priority default_priority, size_t max_record_bytes)
      : ReaderBase(std::move(buffer), std::move(source_name), max_record_bytes),
        default_priority_(default_priority) {}

  absl::StatusOr<ReadResult> Next(Transaction* tx, RecordError* error) override {
    if (!pending_.empty()) return NextPending(tx, error);
    for (;;) {
      VIGIL_ASSIGN_OR_RETURN(const Extend ext, StartRecord(error));
      if (ext == Extend::kEnd) return ReadResult::kEnd;
      if (ext == Extend::kTooLong) {
        skip_to_message_ = true;  // the rest of the message is not a message
        return ReadResult::kRejected;
      }
      const std::string_view first = StripTerminator(buffer_->record());
      if (IsRjeSeparator(first)) continue;
      if (skip_to_message_ && !LooksLikeSwiftMt(first)) continue;
      skip_to_message_ = false;
      break;
    }
    for (;;) {
      VIGIL_ASSIGN_OR_RETURN(const Extend more, buffer_->ExtendLine());
      if (more == Extend::kEnd) break;
      if (more == Extend::kTooLong) {
        buffer_->TruncateToFirstLine();
        raw_ = StripTerminator(buffer_->record());
        TooLarge(error);
        skip_to_message_ = true;
        return ReadResult::kRejected;
      }
      const std::string_view last = StripTerminator(buffer_->last_line());
      if (LooksLikeSwiftMt(last) || IsRjeSeparator(last)) {
        // An acknowledgement on a line of its own goes with the message on the next line.
        const std::string_view before = StripTerminator(
            buffer_->record().substr(0, buffer_->record().size() - buffer_->last_line().size()));
        const size_t lf = before.find_last_of('\n');
        const std::string_view previous =
            lf == std::string_view::npos ? before : before.substr(lf + 1);
        if (!IsRjeSeparator(last) && IsSwiftMtAcknowledgementOnly(previous)) continue;
        buffer_->DropLastLine();
        break;
      }
    }
    // Messages glued together on a line are split here; the record stays in the buffer until
    // they are all handed out.
    const std::string_view record = buffer_->record();
    const std::vector<std::string_view> messages = SplitSwiftMtMessages(record);
    if (messages.size() <= 1) {
      raw_ = Trim(record);
      return ParseRecord(raw_, line_, tx, error);
    }
    first_line_ = line_;
    record_begin_ = record.data();
    pending_.assign(messages.rbegin(), messages.rend());
    return NextPending(tx, error);
  }

  ReadResult ParseRecord(std::string_view raw, int64_t line, Transaction* tx,
                         RecordError* error) override {
    absl::Status s = SwiftMtMessage::ParseInto(raw, &message_);
    if (s.ok()) s = SwiftMtToTransaction(message_, tx);
    if (!s.ok()) {
      MessageError(s, source_name_, line, error);
      return ReadResult::kRejected;
    }
    if (message_.application.priority != 'U') tx->priority = default_priority_;
    return ReadResult::kRecord;
  }

 private:
  ReadResult NextPending(Transaction* tx, RecordError* error) {
    const std::string_view message = pending_.back();
    pending_.pop_back();
    line_ = first_line_ + std::count(record_begin_, message.data(), '\n');
    raw_ = Trim(message);
    return ParseRecord(raw_, line_, tx, error);
  }

  const Priority default_priority_;
  bool skip_to_message_ = false;
  SwiftMtMessage message_;  // reused: its vectors keep their storage
  // Messages of the current record not handed out yet, the next one last.
  std::vector<std::string_view> pending_;
  int64_t first_line_ = 0;
  const char* record_begin_ = nullptr;
};

// ISO 20022: the file is one message; each of its transactions is a record.
class Iso20022Reader final : public TransactionReader {
 public:
  Iso20022Reader(std::unique_ptr<LineBuffer> buffer, JsonTransactionParser json,
                 Priority default_priority)
      : buffer_(std::move(buffer)),
        json_(std::move(json)),
        default_priority_(default_priority) {}

  absl::StatusOr<ReadResult> Next(Transaction* tx, RecordError* error) override {
    if (!loaded_) {
      loaded_ = true;
      VIGIL_ASSIGN_OR_RETURN(const bool read, ReadMessage(error));
      if (!read) return ReadResult::kRejected;
      absl::StatusOr<std::vector<Transaction>> parsed = ParseIso20022(text_);
      if (!parsed.ok()) {
        MessageError(parsed.status(), json_.options().source_name, 1, error);
        raw_ = text_;
        return ReadResult::kRejected;
      }
      transactions_ = *std::move(parsed);
    }
    if (next_ >= transactions_.size()) return ReadResult::kEnd;
    *tx = std::move(transactions_[next_++]);
    if (tx->priority != Priority::kP0) tx->priority = default_priority_;
    json_record_ = TransactionToJson(*tx);
    raw_ = json_record_;
    return ReadResult::kRecord;
  }

  int64_t line() const override { return 1; }
  std::string_view raw_record() const override { return raw_; }

  ReadResult ParseRecord(std::string_view raw, int64_t line, Transaction* tx,
                         RecordError* error) override {
    return ParseJsonRecord(json_, raw, line, tx, error);
  }

 private:
  // The whole input into text_; false (error filled) when it is larger than the limit.
  absl::StatusOr<bool> ReadMessage(RecordError* error) {
    for (;;) {
      VIGIL_ASSIGN_OR_RETURN(const Extend ext, buffer_->ExtendLine());
      if (ext == Extend::kEnd) return true;
      if (ext == Extend::kLine) text_.append(buffer_->record());
      buffer_->Consume();
      if (ext == Extend::kTooLong || text_.size() > kMaxIso20022Bytes) {
        MessageError(absl::InvalidArgumentError(absl::StrCat(
                         "an ISO 20022 message is at most ", kMaxIso20022Bytes,
                         " bytes, with lines of at most ReaderOptions::max_record_bytes")),
                     json_.options().source_name, 1, error);
        error->reason = "record_too_large";
        return false;
      }
    }
  }

  std::unique_ptr<LineBuffer> buffer_;
  JsonTransactionParser json_;
  const Priority default_priority_;
  bool loaded_ = false;
  std::string text_;
  std::vector<Transaction> transactions_;
  size_t next_ = 0;
  std::string json_record_;
  std::string_view raw_;
};

absl::StatusOr<std::unique_ptr<TransactionReader>> NewReader(
    std::unique_ptr<ingest_internal::ByteSource> source, std::string source_name,
    const ReaderOptions& options) {
  auto buffer = std::make_unique<LineBuffer>(std::move(source), options.max_record_bytes);
  VIGIL_ASSIGN_OR_RETURN(const std::string_view first, PeekFirstLine(*buffer, source_name));
  VIGIL_ASSIGN_OR_RETURN(const FileFormat format, FormatOfFirstLine(first, source_name));
  if (format == FileFormat::kAmlworldCsv) {
    AmlworldCsvOptions csv_options;
    csv_options.source_name = source_name;
    csv_options.default_priority = options.default_priority;
    absl::StatusOr<AmlworldCsvParser> parser =
        AmlworldCsvParser::ForHeader(first, std::move(csv_options));
    if (!parser.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name, ":", buffer->record_line(), ": ", parser.status().message()));
    }
    buffer->Consume();  // the header
    return std::make_unique<CsvReader>(std::move(buffer), *std::move(parser),
                                       options.max_record_bytes);
  }
  buffer->Unread();  // the first line is a record
  if (format == FileFormat::kSwiftMt) {
    return std::make_unique<SwiftMtReader>(std::move(buffer), std::move(source_name),
                                           options.default_priority, options.max_record_bytes);
  }
  JsonParserOptions json_options;
  json_options.source_name = source_name;
  json_options.default_priority = options.default_priority;
  json_options.enforce_iso_minor_units = options.enforce_iso_minor_units;
  if (format == FileFormat::kIso20022) {
    return std::make_unique<Iso20022Reader>(
        std::move(buffer), JsonTransactionParser(std::move(json_options)),
        options.default_priority);
  }
  return std::make_unique<JsonLinesReader>(
      std::move(buffer), JsonTransactionParser(std::move(json_options)), options.max_record_bytes);
}

}  // namespace

std::string_view FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kAmlworldCsv: return "amlworld_csv";
    case FileFormat::kJsonLines: return "json_lines";
    case FileFormat::kSwiftMt: return "swift_mt";
    case FileFormat::kIso20022: return "iso20022";
  }
  return "json_lines";
}

absl::StatusOr<FileFormat> DetectFileFormat(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<ingest_internal::ByteSource> source,
                         ingest_internal::OpenFileSource(path));
  LineBuffer buffer(std::move(source), size_t{1} << 20, size_t{64} << 10);
  VIGIL_ASSIGN_OR_RETURN(const std::string_view first, PeekFirstLine(buffer, path));
  return FormatOfFirstLine(first, path);
}

absl::StatusOr<std::unique_ptr<TransactionReader>> OpenTransactionFile(
    const std::string& path, const ReaderOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<ingest_internal::ByteSource> source,
                         ingest_internal::OpenFileSource(path));
  return NewReader(std::move(source),
                   options.source_name.empty() ? BaseName(path) : options.source_name, options);
}

absl::StatusOr<std::unique_ptr<TransactionReader>> OpenTransactionBuffer(
    std::string contents, const ReaderOptions& options) {
  return NewReader(ingest_internal::NewStringSource(std::move(contents)),
                   options.source_name.empty() ? "<buffer>" : options.source_name, options);
}

}  // namespace vigil
