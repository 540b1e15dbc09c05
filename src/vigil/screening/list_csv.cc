#include "vigil/screening/list_csv.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::screening {

CsvRecordReader::CsvRecordReader(std::string_view text, std::string source)
    : text_(text), source_(std::move(source)) {}

absl::StatusOr<bool> CsvRecordReader::Next(std::vector<std::string>* fields) {
  fields->clear();
  // Skip empty lines.
  while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) {
    if (text_[pos_] == '\n') ++next_line_;
    ++pos_;
  }
  if (pos_ >= text_.size() || text_[pos_] == '\x1a') {
    pos_ = text_.size();
    return false;
  }
  record_line_ = next_line_;
  const auto at_record_end = [this] {
    return pos_ >= text_.size() || text_[pos_] == '\n' ||
           (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n');
  };
  while (true) {
    std::string& field = fields->emplace_back();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      const int64_t open_line = next_line_;
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) {
          return absl::InvalidArgumentError(absl::StrCat(source_, ":", open_line, ": field ",
                                                         fields->size(),
                                                         ": quoted field not terminated"));
        }
        const char c = text_[pos_++];
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field.push_back('"');
            ++pos_;
            continue;
          }
          break;
        }
        if (c == '\n') ++next_line_;
        field.push_back(c);
      }
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
      if (!at_record_end() && text_[pos_] != ',') {
        return absl::InvalidArgumentError(absl::StrCat(source_, ":", next_line_, ": field ",
                                                       fields->size(),
                                                       ": text after the closing quote"));
      }
    } else {
      while (!at_record_end() && text_[pos_] != ',') field.push_back(text_[pos_++]);
    }
    if (at_record_end()) break;
    ++pos_;  // the ','
  }
  if (pos_ < text_.size()) {
    pos_ += text_[pos_] == '\r' ? 2 : 1;
    ++next_line_;
  }
  return true;
}

absl::StatusOr<std::string> ReadListFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open ", ToAbsl(what), " '", path, "'"));
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("cannot read ", ToAbsl(what), " '", path, "'"));
  }
  return std::move(s).str();
}

}  // namespace vigil::screening
