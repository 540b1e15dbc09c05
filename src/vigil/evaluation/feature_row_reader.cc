#include "vigil/evaluation/feature_row_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/csv_record_reader.h"
#include "vigil/core/transaction.h"

namespace vigil::evaluation {

absl::StatusOr<FeatureRows> ReadFeatureRows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    const std::string message = absl::StrCat("feature rows '", path, "': ", std::strerror(e));
    return e == ENOENT ? absl::NotFoundError(message)
           : e == EACCES ? absl::PermissionDeniedError(message)
                         : absl::UnavailableError(message);
  }
  CsvRecordReader reader(in, path, kRfc4180CsvDialect);
  std::vector<std::string> h;
  if (absl::Status s = reader.Next(&h).status(); !s.ok()) return s;  // no header: h is empty
  if (h.size() < 4 || h[0] != "tx_id" || h[1] != "timestamp" || h[h.size() - 2] != "label" ||
      h.back() != "typology") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":1: not feature rows: the header must be tx_id,timestamp,<features>,label,typology "
              "(what vigil replay --features-out writes)"));
  }
  FeatureRows out;
  const bool parties = h.size() >= 6 && h[2] == "originator" && h[3] == "beneficiary";
  const size_t first = parties ? 4 : 2;  // the first feature's column
  out.names.assign(h.begin() + static_cast<std::ptrdiff_t>(first), h.end() - 2);
  const size_t width = out.names.size();
  std::vector<std::string> f;
  for (;;) {
    absl::StatusOr<bool> more = reader.Next(&f);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const auto bad = [&](size_t column, std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", reader.line(), ": ", h[column],
                                                     ": ", absl::string_view(why.data(), why.size())));
    };
    if (f.size() != h.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", reader.line(), ": ", f.size(),
                                                     " columns, the header has ", h.size()));
    }
    absl::StatusOr<UtcTime> time = ParseRfc3339(f[1]);
    if (!time.ok()) return bad(1, absl::StrCat("'", f[1], "' is not an RFC 3339 time"));
    out.ids.push_back(f[0]);
    out.times.push_back(*time);
    out.originators.push_back(parties ? f[2] : std::string());
    out.beneficiaries.push_back(parties ? f[3] : std::string());
    for (size_t j = 0; j < width; ++j) {
      const std::string& cell = f[first + j];
      double v = std::numeric_limits<double>::quiet_NaN();
      if (!cell.empty() && (!absl::SimpleAtod(cell, &v) || std::isnan(v))) {
        return bad(first + j,
                   absl::StrCat("'", cell, "' is not a number (leave it empty if missing)"));
      }
      out.values.push_back(v);
    }
    const std::string& label = f[h.size() - 2];
    if (label != "1" && label != "0" && !label.empty()) {
      return bad(h.size() - 2, absl::StrCat("'", label, "' is not 1, 0 or empty"));
    }
    out.labels.push_back(label.empty() ? int8_t{-1} : static_cast<int8_t>(label == "1"));
    out.typologies.push_back(f.back());
  }
  return out;
}

}  // namespace vigil::evaluation
