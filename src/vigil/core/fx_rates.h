// FxRates: converts Money into the reporting currency, exactly and deterministically.
//
// Amounts are compared (thresholds, velocity sums) in one reporting currency, USD by default.
// The table is a CSV file (data/fx_rates.csv ships as the default; see its header for the source):
//
//   # comment lines start with '#'
//   reporting_currency,USD
//   currency,per_reporting_unit
//   EUR,0.8533727
//   JPY,105.4
//
// `per_reporting_unit` is how many units of the currency one unit of the reporting currency buys.
// Conversion is fixed point: the result is in micro-units of the reporting currency (1e-6),
// rounded half away from zero. A currency missing from the table is an input error, never 1.0.
//
// Thread safety: immutable after Load; safe for concurrent use.
#ifndef VIGIL_CORE_FX_RATES_H_
#define VIGIL_CORE_FX_RATES_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"

namespace vigil {

class FxRates {
 public:
  // Parses the table text; "source_name" is used in error messages ("fx.csv:3: ...").
  static absl::StatusOr<FxRates> Parse(absl::string_view text, absl::string_view source_name);
  static absl::StatusOr<FxRates> LoadFile(const std::string& path);

  Currency reporting_currency() const { return reporting_; }
  bool Has(Currency c) const { return c == reporting_ || rates_.contains(c.packed()); }

  // The amount in micro-units of the reporting currency. Errors: no rate for the currency, or
  // the result does not fit 64 bits.
  absl::StatusOr<int64_t> ToReportingMicros(const Money& m) const;

 private:
  struct Rate {
    int64_t units;  // rate = units × 10^-scale (currency units per reporting unit), > 0
    int scale;
  };
  Currency reporting_;
  absl::flat_hash_map<uint32_t, Rate> rates_;
};

}  // namespace vigil

#endif  // VIGIL_CORE_FX_RATES_H_
