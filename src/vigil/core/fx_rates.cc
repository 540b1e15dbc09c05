#include "vigil/core/fx_rates.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "vigil/common/status_macros.h"

namespace vigil {
namespace {

absl::int128 Pow10(int n) {
  absl::int128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

absl::Status LineError(absl::string_view source, int line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": ", message));
}

}  // namespace

absl::StatusOr<FxRates> FxRates::Parse(absl::string_view text, absl::string_view source_name) {
  FxRates fx;
  int line_no = 0;
  bool have_columns = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> cols = absl::StrSplit(line, ',');
    if (cols.size() != 2) {
      return LineError(source_name, line_no, "expected two comma-separated columns");
    }
    const absl::string_view key = absl::StripAsciiWhitespace(cols[0]);
    const absl::string_view value = absl::StripAsciiWhitespace(cols[1]);
    if (key == "reporting_currency") {
      // A second line would silently re-denominate every rate read so far.
      if (!fx.reporting_.empty()) {
        return LineError(source_name, line_no, "duplicate 'reporting_currency' line");
      }
      auto c = Currency::FromCode(value);
      if (!c.ok()) return LineError(source_name, line_no, c.status().message());
      fx.reporting_ = *c;
      continue;
    }
    if (key == "currency") {
      if (value != "per_reporting_unit") {
        return LineError(source_name, line_no,
                         "column header must be 'currency,per_reporting_unit'");
      }
      have_columns = true;
      continue;
    }
    if (fx.reporting_.empty() || !have_columns) {
      return LineError(
          source_name, line_no,
          "rates must follow 'reporting_currency,XXX' and 'currency,per_reporting_unit'");
    }
    auto c = Currency::FromCode(key);
    if (!c.ok()) return LineError(source_name, line_no, c.status().message());
    // Rates reuse the exact decimal parser; the currency tag is irrelevant here.
    auto rate = Money::Parse(value, *c);
    if (!rate.ok()) return LineError(source_name, line_no, rate.status().message());
    if (rate->units() <= 0) return LineError(source_name, line_no, "rate must be positive");
    // The reporting currency converts at 1 by definition; any other rate for it is a mistake in
    // the table (and would otherwise be silently ignored by ToReportingMicros).
    if (*c == fx.reporting_ && Money::CompareAmounts(*rate, Money(1, 0, *c)) != 0) {
      return LineError(source_name, line_no,
                       absl::StrCat("rate for the reporting currency ", key, " must be 1"));
    }
    if (!fx.rates_.emplace(c->packed(), Rate{rate->units(), rate->scale()}).second) {
      return LineError(source_name, line_no, absl::StrCat("duplicate rate for ", key));
    }
  }
  if (fx.reporting_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": missing 'reporting_currency,XXX' line"));
  }
  return fx;
}

absl::StatusOr<FxRates> FxRates::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open FX rates file '", path, "'"));
  std::stringstream buf;
  buf << in.rdbuf();
  return Parse(buf.str(), path);
}

absl::StatusOr<int64_t> FxRates::ToReportingMicros(const Money& m) const {
  // micros = units × 10^-scale / rate × 10^6 = units × 10^(6 + rate.scale) / (rate.units ×
  // 10^scale)
  if (m.currency() == reporting_ && m.scale() >= 0 && m.scale() <= 6) {
    // The common case, exact in 64 bits unless the product overflows.
    static constexpr int64_t kScale[7] = {1'000'000, 100'000, 10'000, 1'000, 100, 10, 1};
    int64_t micros;
    if (!__builtin_mul_overflow(m.units(), kScale[m.scale()], &micros)) return micros;
  }
  absl::int128 num;
  absl::int128 den;
  if (m.currency() == reporting_) {
    num = absl::int128(m.units()) * Pow10(6);
    den = Pow10(m.scale());
  } else {
    auto it = rates_.find(m.currency().packed());
    if (it == rates_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no FX rate for currency ",
                                                     m.currency().code(), " into ",
                                                     reporting_.code(), " in the rates table"));
    }
    num = absl::int128(m.units()) * Pow10(6 + it->second.scale);
    den = absl::int128(it->second.units) * Pow10(m.scale());
  }
  const bool negative = num < 0;
  const absl::int128 mag = negative ? -num : num;
  absl::int128 q = mag / den;
  if ((mag % den) * 2 >= den) ++q;  // half away from zero
  if (q > std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount ", m.ToString(), " overflows the reporting-currency range: "
                     "converted into ", reporting_.code(), " an amount is at most ",
                     Money(std::numeric_limits<int64_t>::max(), 6, reporting_).ToString()));
  }
  return static_cast<int64_t>(negative ? -q : q);
}

}  // namespace vigil
