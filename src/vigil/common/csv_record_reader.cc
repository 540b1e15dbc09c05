#include "vigil/common/csv_record_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace vigil {
namespace {

constexpr size_t kStreamBufferBytes = 64 << 10;

// The bytes that end a run of plain text in an unquoted field: ',' '"' '\n' '\r' (all below 64,
// so one shift and mask tests a byte; most fields are a few bytes, where a memchr call per
// special byte costs more than this loop).
constexpr uint64_t kUnquotedStops =
    (uint64_t{1} << ',') | (uint64_t{1} << '"') | (uint64_t{1} << '\n') | (uint64_t{1} << '\r');

inline bool IsUnquotedStop(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 64 && ((kUnquotedStops >> u) & 1) != 0;
}

}  // namespace

CsvRecordReader::CsvRecordReader(std::string_view text, std::string input_name, CsvDialect dialect)
    : in_(nullptr), input_name_(std::move(input_name)), dialect_(dialect), data_(text) {}

CsvRecordReader::CsvRecordReader(std::istream& in, std::string input_name, CsvDialect dialect)
    : in_(&in), input_name_(std::move(input_name)), dialect_(dialect) {
  buffer_.resize(kStreamBufferBytes);
}

absl::StatusOr<bool> CsvRecordReader::Next(std::vector<std::string>* fields) {
  if (!error_.ok()) return error_;
  absl::StatusOr<bool> more = ReadRecord(fields);
  // A failed stream may have cut the record short, or made it look like the end of the text.
  if (read_failed_) error_ = absl::DataLossError(absl::StrCat(input_name_, ": read error"));
  if (!more.ok() && error_.ok()) error_ = more.status();
  if (!error_.ok()) return error_;
  return more;
}

absl::StatusOr<bool> CsvRecordReader::ReadRecord(std::vector<std::string>* fields) {
  if (ended_) {
    fields->clear();
    return false;
  }
  if (dialect_.skip_empty_lines) {
    for (int c = Peek(); c == '\n' || c == '\r'; c = Peek()) {
      if (c == '\n') ++next_line_;
      ++pos_;
    }
  }
  const int first = Peek();
  if (first < 0 || (dialect_.dos_eof && first == 0x1A)) {
    ended_ = true;
    fields->clear();
    return false;
  }
  record_line_ = next_line_;
  size_t count = 0;
  while (true) {
    if (count == fields->size()) fields->emplace_back();
    std::string& field = (*fields)[count++];
    field.clear();
    absl::Status s = Peek() == '"' ? ReadQuoted(count, &field) : ReadUnquoted(count, &field);
    if (!s.ok()) return s;
    if (Peek() != ',') break;
    ++pos_;
  }
  fields->resize(count);
  SkipRecordEnd();
  return true;
}

absl::Status CsvRecordReader::ReadQuoted(size_t number, std::string* field) {
  const int64_t open_line = next_line_;
  ++pos_;  // the opening quote
  while (true) {
    if (pos_ >= data_.size() && !Fill(1)) return Error(open_line, number, Fault::kUnterminated);
    // Copy up to the next quote in one piece; quoted fields (names, remarks) are long.
    const char* const begin = data_.data() + pos_;
    const size_t available = data_.size() - pos_;
    const char* const quote = static_cast<const char*>(std::memchr(begin, '"', available));
    const size_t length = quote == nullptr ? available : static_cast<size_t>(quote - begin);
    next_line_ += std::count(begin, begin + length, '\n');
    field->append(begin, length);
    pos_ += length;
    if (quote == nullptr) continue;
    ++pos_;  // the quote
    if (Peek() != '"') break;
    field->push_back('"');  // "" is one quote
    ++pos_;
  }
  if (dialect_.allow_space_after_quote) {
    for (int c = Peek(); c == ' ' || c == '\t'; c = Peek()) ++pos_;
  }
  if (Peek() != ',' && !AtRecordEnd()) return Error(next_line_, number, Fault::kTextAfterQuote);
  return absl::OkStatus();
}

absl::Status CsvRecordReader::ReadUnquoted(size_t number, std::string* field) {
  while (true) {
    if (pos_ >= data_.size() && !Fill(1)) return absl::OkStatus();
    const char* const begin = data_.data() + pos_;
    const char* const end = data_.data() + data_.size();
    const char* stop = begin;
    while (stop < end && !IsUnquotedStop(*stop)) ++stop;
    field->append(begin, static_cast<size_t>(stop - begin));
    pos_ += static_cast<size_t>(stop - begin);
    if (stop == end) continue;
    const char c = *stop;
    if (c == '"') {
      if (!dialect_.allow_bare_quotes) return Error(next_line_, number, Fault::kBareQuote);
    } else if (c != '\r' || AtRecordEnd()) {
      return absl::OkStatus();  // at ',' or the end of the record
    }
    field->push_back(c);  // a quote taken as text, or a '\r' that ends no line
    ++pos_;
  }
}

bool CsvRecordReader::AtRecordEnd() {
  const int c = Peek();
  if (c < 0 || c == '\n') return true;
  if (c != '\r') return false;
  const int next = Peek(1);
  return next < 0 || next == '\n';
}

void CsvRecordReader::SkipRecordEnd() {
  const int c = Peek();
  if (c < 0) return;
  ++pos_;
  if (c == '\r' && Peek() == '\n') ++pos_;
  ++next_line_;
}

bool CsvRecordReader::Fill(size_t n) {
  if (in_ == nullptr || read_failed_) return false;
  // Only the unread bytes are kept: fields are copied out as they are read.
  size_t have = data_.size() - pos_;
  std::memmove(buffer_.data(), data_.data() + pos_, have);
  pos_ = 0;
  while (have < n) {
    in_->read(buffer_.data() + have, static_cast<std::streamsize>(buffer_.size() - have));
    const auto got = static_cast<size_t>(in_->gcount());
    if (in_->bad()) read_failed_ = true;
    if (got == 0) break;
    have += got;
  }
  data_ = std::string_view(buffer_.data(), have);
  return have >= n;
}

absl::Status CsvRecordReader::Error(int64_t line, size_t number, Fault fault) const {
  const bool columns = dialect_.error_wording == CsvDialect::ErrorWording::kColumn;
  const char* reason = "";
  switch (fault) {
    case Fault::kUnterminated:
      reason = columns ? "unterminated quoted field" : "quoted field not terminated";
      break;
    case Fault::kTextAfterQuote:
      reason =
          columns ? "unexpected character after closing quote" : "text after the closing quote";
      break;
    case Fault::kBareQuote:
      reason = "quote inside an unquoted field";
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      input_name_, ":", line, columns ? ": column " : ": field ", number, ": ", reason));
}

}  // namespace vigil
