// Money: an exact decimal amount in one currency. No floating point ever holds money.
//
// The amount is `units × 10^-scale` with a signed 64-bit `units` and 0 <= scale <= kMaxScale, and
// the scale is the number of decimals the source wrote, so "51.43" US Dollar is (5143, 2) and an
// AMLworld Bitcoin amount "0.012345" is (12345, 6). Equal amounts at different scales compare
// equal (1.5 == 1.50). The widest amount is 9.2e18 units: 92 billion at 8 decimals, 9.2 quadrillion
// at 2, more than any payment in any input format; anything wider is an input error on parse.
//
// Thread safety: immutable value type.
#ifndef VIGIL_CORE_MONEY_H_
#define VIGIL_CORE_MONEY_H_

#include <compare>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/core/currency.h"

namespace vigil {

class Money {
 public:
  static constexpr int kMaxScale = 9;

  enum class DecimalMark { kPoint, kComma };  // "1234.56" (JSON, CSV) or "1234,56" (SWIFT)

  constexpr Money() = default;
  // REQUIRES: 0 <= scale <= kMaxScale.
  Money(int64_t units, int scale, Currency currency);

  // Parses a plain decimal: optional '-', digits, optional mark and up to kMaxScale decimals
  // (no exponent, no thousands separators, no '+'). Errors say what is wrong with the text;
  // the caller adds the field name.
  static absl::StatusOr<Money> Parse(absl::string_view text, Currency currency,
                                     DecimalMark mark = DecimalMark::kPoint);

  // The largest amount with "scale" decimals: (2^63 - 1) x 10^-scale, in no currency.
  static Money MaxAmount(int scale);

  int64_t units() const { return units_; }
  int scale() const { return scale_; }
  Currency currency() const { return currency_; }
  bool is_negative() const { return units_ < 0; }
  bool is_zero() const { return units_ == 0; }

  // OK when the amount has no more decimals than its currency's ISO 4217 exponent allows
  // (trailing zeros beyond it are fine: "100.00" JPY is 100). Formats that require ISO exponents
  // (SWIFT MT, ISO 20022) call this; AMLworld CSV does not (it has Yen with 2 decimals).
  absl::Status CheckIsoExponent() const;

  // The amount as written with exactly scale() decimals: "51.43", "-0.012345", "100".
  std::string ToDecimalString() const;
  // "51.43 USD".
  std::string ToString() const;

  // Approximate value, for statistics only (features, plots), never for money arithmetic.
  double ToDouble() const;

  // Exact numeric comparison of the amounts, ignoring currency.
  static std::strong_ordering CompareAmounts(const Money& a, const Money& b);

  // Same currency and same numeric amount (scale may differ).
  friend bool operator==(const Money& a, const Money& b) {
    return a.currency_ == b.currency_ && CompareAmounts(a, b) == 0;
  }

 private:
  int64_t units_ = 0;
  int8_t scale_ = 0;
  Currency currency_;
};

}  // namespace vigil

#endif  // VIGIL_CORE_MONEY_H_
