// FxConverter: the generator's view of an FxRates table as double-precision unit values, for
// drawing amounts ("a rent of about 1,300 USD, in the payer's currency") and converting the
// received side of cross-currency payments.
//
// Amounts here are synthetic draws, not money being moved, so doubles are fine; what matters is
// that the written amounts agree with the FxRates table: for every cross-currency row,
// FxRates::ToReportingMicros(paid) and ToReportingMicros(received) differ by at most half a minor
// unit of the received currency (plus 1e-9 relative), which generator_test.cc checks.
//
// FxRates has no rate accessor; the unit values are read back through ToReportingMicros of a
// large round amount, which is exact to about 1e-10 relative.
//
// Thread safety: immutable after Create; safe for concurrent use.
#ifndef VIGIL_SYNTH_INTERNAL_FX_CONVERTER_H_
#define VIGIL_SYNTH_INTERNAL_FX_CONVERTER_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "vigil/core/currency.h"
#include "vigil/core/fx_rates.h"
#include "vigil/synth/internal/currency_table.h"

namespace vigil::synth::internal {

// Value of one unit of `c` in units of the table's reporting currency; 0 when the table has no
// rate for `c`.
double ReportingPerUnit(const FxRates& rates, Currency c);

class FxConverter {
 public:
  // Errors: the table has no US dollar rate (kInvalidArgument): the amount model is in USD.
  // Currencies the table lacks are reported unavailable; the population leaves them out.
  static absl::StatusOr<FxConverter> Create(const FxRates& rates);

  bool available(uint8_t ccy) const { return usd_per_unit_[ccy] > 0.0; }
  // US dollars per unit of the currency. REQUIRES: available(ccy).
  double usd_per_unit(uint8_t ccy) const { return usd_per_unit_[ccy]; }

  // A US dollar amount in minor units of the currency, rounded half away from zero, at least 1
  // (a payment is never zero) and at most 10^15 units (no overflow). REQUIRES: available(ccy).
  int64_t FromUsd(double usd, uint8_t ccy) const;
  // Converts minor units of one currency into another at the table's cross rate, rounded as
  // FromUsd. REQUIRES: available(from) && available(to).
  int64_t Convert(int64_t minor, uint8_t from, uint8_t to) const;
  double ToUsd(int64_t minor, uint8_t ccy) const;

 private:
  std::array<double, kNumSynthCurrencies> usd_per_unit_{};  // 0 when unavailable
  std::array<double, kNumSynthCurrencies> minor_per_unit_{};
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_FX_CONVERTER_H_
