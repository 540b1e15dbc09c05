#include "vigil/synth/internal/fx_converter.h"

#include <cmath>

#include "vigil/core/currency.h"
#include "vigil/core/money.h"

namespace vigil::synth::internal {
namespace {

constexpr double kMaxMinorUnits = 1e15;

int64_t RoundMinor(double minor) {
  if (!(minor >= 1.0)) return 1;  // also catches NaN
  if (minor > kMaxMinorUnits) return static_cast<int64_t>(kMaxMinorUnits);
  return static_cast<int64_t>(std::round(minor));
}

}  // namespace

double ReportingPerUnit(const FxRates& rates, Currency c) {
  if (!rates.Has(c)) return 0.0;
  // A large probe amount keeps the micro-unit rounding negligible; a currency worth much more
  // than the reporting one (Bitcoin) overflows it, so fall back to smaller probes.
  for (int64_t probe : {int64_t{1000000000}, int64_t{1000000}, int64_t{1000}, int64_t{1}}) {
    absl::StatusOr<int64_t> micros = rates.ToReportingMicros(Money(probe, 0, c));
    if (micros.ok() && *micros > 0) {
      return static_cast<double>(*micros) / 1e6 / static_cast<double>(probe);
    }
  }
  return 0.0;
}

absl::StatusOr<FxConverter> FxConverter::Create(const FxRates& rates) {
  std::array<double, kNumSynthCurrencies> reporting{};
  for (int i = 0; i < kNumSynthCurrencies; ++i) {
    absl::StatusOr<Currency> c = Currency::FromCode(kSynthCurrencies[i].code);
    if (!c.ok()) return c.status();
    reporting[i] = ReportingPerUnit(rates, *c);
  }
  if (reporting[kUsd] <= 0.0) {
    return absl::InvalidArgumentError(
        "the FX rates table has no US dollar rate; vigil gen draws amounts in USD and needs it");
  }
  FxConverter fx;
  for (int i = 0; i < kNumSynthCurrencies; ++i) {
    fx.usd_per_unit_[i] = reporting[i] / reporting[kUsd];
    fx.minor_per_unit_[i] = std::pow(10.0, kSynthCurrencies[i].decimals);
  }
  return fx;
}

int64_t FxConverter::FromUsd(double usd, uint8_t ccy) const {
  return RoundMinor(usd / usd_per_unit_[ccy] * minor_per_unit_[ccy]);
}

int64_t FxConverter::Convert(int64_t minor, uint8_t from, uint8_t to) const {
  if (from == to) return minor;
  return FromUsd(ToUsd(minor, from), to);
}

double FxConverter::ToUsd(int64_t minor, uint8_t ccy) const {
  return static_cast<double>(minor) / minor_per_unit_[ccy] * usd_per_unit_[ccy];
}

}  // namespace vigil::synth::internal
