// Currency: an ISO 4217 alphabetic code (or one of vigil's documented non-ISO asset codes),
// packed into 4 bytes, with its minor-unit exponent.
//
// Non-ISO assets: Bitcoin is "XBT" (the code used by most exchanges; ISO reserves X-codes for
// supranational units and has none for Bitcoin). Its exponent is unset (-1): ISO exponent checks
// do not apply, amounts may carry up to Money::kMaxScale decimals.
//
// Thread safety: immutable value type.
#ifndef VIGIL_CORE_CURRENCY_H_
#define VIGIL_CORE_CURRENCY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace vigil {

class Currency {
 public:
  // The empty currency (no code); never the result of a successful parse.
  constexpr Currency() = default;

  // Accepts a known three-letter upper-case code ("USD", "XBT"). Unknown codes are errors:
  // vigil never guesses a currency.
  static absl::StatusOr<Currency> FromCode(absl::string_view code);

  // Maps the currency names of the IBM AMLworld CSV layout ("US Dollar", "UK Pound", "Yuan",
  // "Bitcoin", ...) to codes; see docs/ingest.md for the table.
  static absl::StatusOr<Currency> FromAmlworldName(absl::string_view name);

  std::string code() const;
  // ISO 4217 minor-unit exponent (USD 2, JPY 0, BHD 3); -1 for non-ISO assets.
  int iso_exponent() const;
  bool is_iso() const { return iso_exponent() >= 0; }
  bool empty() const { return packed_ == 0; }
  uint32_t packed() const { return packed_; }
  static constexpr Currency FromPacked(uint32_t packed) { return Currency(packed); }

  friend bool operator==(Currency, Currency) = default;
  friend auto operator<=>(Currency, Currency) = default;

 private:
  constexpr explicit Currency(uint32_t packed) : packed_(packed) {}
  uint32_t packed_ = 0;  // 'A' << 16 | 'B' << 8 | 'C'
};

// Name of the AMLworld currency for a code ("USD" -> "US Dollar"); empty when AMLworld has none.
absl::string_view AmlworldCurrencyName(Currency c);

}  // namespace vigil

#endif  // VIGIL_CORE_CURRENCY_H_
