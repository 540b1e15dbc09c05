// The currencies of the synthetic population: the 15 of the IBM AMLworld datasets, each with the
// number of decimals the CSV writes, its share of banks and the countries its banks sit in.
// Rows carry a currency as a small index into kSynthCurrencies (SynthRow is kept compact).
//
// The mix is mostly US dollar and euro with a tail of the other 12 fiat currencies; Bitcoin has
// no banks: it is the currency of every "Bitcoin" payment and of nothing else.
//
// Thread safety: constant data.
#ifndef VIGIL_SYNTH_INTERNAL_CURRENCY_TABLE_H_
#define VIGIL_SYNTH_INTERNAL_CURRENCY_TABLE_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace vigil::synth::internal {

struct SynthCurrency {
  absl::string_view code;      // ISO 4217 (XBT for Bitcoin)
  absl::string_view aml_name;  // AMLworld's name, as written in the CSV
  int decimals;                // 2, or 6 for Bitcoin (AMLworld writes Yen with 2 as well)
  double bank_share;           // share of banks (and so of accounts) in this currency
  std::array<absl::string_view, 5> countries;  // ISO 3166 alpha-2 home countries of its banks
};

inline constexpr int kNumSynthCurrencies = 15;
inline constexpr uint8_t kUsd = 0;
inline constexpr uint8_t kXbt = 14;

inline constexpr std::array<SynthCurrency, kNumSynthCurrencies> kSynthCurrencies = {{
    {"USD", "US Dollar", 2, 0.42, {"US"}},
    {"EUR", "Euro", 2, 0.26, {"DE", "FR", "NL", "IT", "ES"}},
    {"GBP", "UK Pound", 2, 0.04, {"GB"}},
    {"JPY", "Yen", 2, 0.03, {"JP"}},
    {"CNY", "Yuan", 2, 0.04, {"CN"}},
    {"INR", "Rupee", 2, 0.03, {"IN"}},
    {"RUB", "Ruble", 2, 0.03, {"RU"}},
    {"AUD", "Australian Dollar", 2, 0.03, {"AU"}},
    {"CAD", "Canadian Dollar", 2, 0.03, {"CA"}},
    {"CHF", "Swiss Franc", 2, 0.03, {"CH"}},
    {"MXN", "Mexican Peso", 2, 0.02, {"MX"}},
    {"BRL", "Brazil Real", 2, 0.02, {"BR"}},
    {"ILS", "Shekel", 2, 0.01, {"IL"}},
    {"SAR", "Saudi Riyal", 2, 0.01, {"SA"}},
    {"XBT", "Bitcoin", 6, 0.0, {}},
}};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_CURRENCY_TABLE_H_
