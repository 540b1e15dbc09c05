#include "vigil/ingest/csv_record.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "vigil/ingest/internal/csv_fields.h"

namespace vigil {

absl::StatusOr<std::vector<std::string>> CsvRecordReader::Next() {
  record_.clear();
  ingest_internal::CsvQuoteState quotes;
  std::string line;
  bool any = false;
  record_line_ = next_line_;
  while (std::getline(in_, line)) {
    ++next_line_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (any) record_.push_back('\n');
    record_ += line;
    any = true;
    if (quotes.ScanLine(line)) break;
  }
  if (!any) return std::vector<std::string>();
  std::vector<std::string_view> views(64);
  ingest_internal::CsvSplitError error;
  int n = ingest_internal::SplitCsvRecord(record_, views.data(), static_cast<int>(views.size()),
                                          &scratch_, &error);
  if (n > static_cast<int>(views.size())) {
    views.resize(static_cast<size_t>(n));
    n = ingest_internal::SplitCsvRecord(record_, views.data(), n, &scratch_, &error);
  }
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what_, ":", record_line_, ": column ",
                                                   error.column + 1, ": ", error.what));
  }
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.emplace_back(views[static_cast<size_t>(i)]);
  return out;
}

}  // namespace vigil
