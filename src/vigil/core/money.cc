#include "vigil/core/money.h"

#include <cstdlib>
#include <limits>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil {
namespace {

constexpr int64_t kPow10[] = {1,         10,         100,         1000,        10000,
                              100000,    1000000,    10000000,    100000000,   1000000000};

// |units| * 10^(target - scale) as 128 bits; target >= scale, target <= kMaxScale.
absl::int128 Rescale(int64_t units, int scale, int target) {
  return absl::int128(units) * kPow10[target - scale];
}

// The decimals "text" writes after its mark (at most kMaxScale counted): the scale the amount
// would have.
int DecimalsWritten(absl::string_view text, char mark) {
  const size_t at = text.find(mark);
  if (at == absl::string_view::npos) return 0;
  const size_t decimals = text.size() - at - 1;
  return static_cast<int>(decimals < Money::kMaxScale ? decimals : Money::kMaxScale);
}

absl::Status Overflow(absl::string_view text, char mark) {
  const int scale = DecimalsWritten(text, mark);
  return absl::InvalidArgumentError(absl::StrCat(
      "amount '", text, "' overflows the representable range: with ", scale,
      " decimals an amount is at most ", Money::MaxAmount(scale).ToDecimalString(),
      " (2^63-1 units of its last decimal)"));
}

}  // namespace

Money Money::MaxAmount(int scale) {
  return Money(std::numeric_limits<int64_t>::max(), scale, Currency());
}

Money::Money(int64_t units, int scale, Currency currency)
    : units_(units), scale_(static_cast<int8_t>(scale)), currency_(currency) {
  VIGIL_CHECK(scale >= 0 && scale <= kMaxScale);
}

absl::StatusOr<Money> Money::Parse(absl::string_view text, Currency currency, DecimalMark mark) {
  const char mark_char = mark == DecimalMark::kPoint ? '.' : ',';
  if (text.empty()) return absl::InvalidArgumentError("amount is empty");
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  if (i == text.size()) return absl::InvalidArgumentError("amount has no digits");
  // Accumulate as a negative number so INT64_MIN is representable and overflow checks are one
  // comparison.
  int64_t acc = 0;
  int int_digits = 0;
  int scale = -1;  // -1 until the decimal mark is seen
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == mark_char) {
      if (scale >= 0) return absl::InvalidArgumentError(
          absl::StrCat("amount '", text, "' has more than one decimal mark"));
      scale = 0;
      continue;
    }
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(absl::StrCat(
          "amount '", text, "' has invalid character '", absl::string_view(&c, 1),
          "' (expected digits and '", absl::string_view(&mark_char, 1), "' as decimal mark)"));
    }
    if (scale >= 0) {
      if (++scale > kMaxScale) {
        return absl::InvalidArgumentError(absl::StrCat(
            "amount '", text, "' has more than ", kMaxScale, " decimals"));
      }
    } else {
      ++int_digits;
    }
    const int d = c - '0';
    if (acc < (std::numeric_limits<int64_t>::min() + d) / 10) return Overflow(text, mark_char);
    acc = acc * 10 - d;
  }
  if (int_digits == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount '", text, "' has no digits before the decimal mark"));
  }
  if (scale == 0 && mark == DecimalMark::kPoint) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount '", text, "' ends with a decimal mark"));
  }
  if (scale < 0) scale = 0;
  if (!negative) {
    if (acc == std::numeric_limits<int64_t>::min()) return Overflow(text, mark_char);
    acc = -acc;
  }
  return Money(acc, scale, currency);
}

absl::Status Money::CheckIsoExponent() const {
  const int exponent = currency_.iso_exponent();
  if (exponent < 0 || scale_ <= exponent) return absl::OkStatus();
  // Extra decimals are allowed only when they are zeros.
  if (units_ % kPow10[scale_ - exponent] == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("amount ", ToDecimalString(), " has more than ",
                                                 exponent, " decimals, the ISO 4217 minor unit of ",
                                                 currency_.code()));
}

std::string Money::ToDecimalString() const {
  const bool negative = units_ < 0;
  // Magnitude as unsigned so INT64_MIN prints correctly.
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(units_) : static_cast<uint64_t>(units_);
  std::string digits = std::to_string(mag);
  if (scale_ > 0) {
    if (digits.size() <= static_cast<size_t>(scale_)) {
      digits.insert(0, static_cast<size_t>(scale_) + 1 - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale_), 1, '.');
  }
  if (negative) digits.insert(0, 1, '-');
  return digits;
}

std::string Money::ToString() const { return absl::StrCat(ToDecimalString(), " ", currency_.code()); }

double Money::ToDouble() const {
  return static_cast<double>(units_) / static_cast<double>(kPow10[scale_]);
}

std::strong_ordering Money::CompareAmounts(const Money& a, const Money& b) {
  const int target = a.scale_ > b.scale_ ? a.scale_ : b.scale_;
  const absl::int128 x = Rescale(a.units_, a.scale_, target);
  const absl::int128 y = Rescale(b.units_, b.scale_, target);
  if (x < y) return std::strong_ordering::less;
  if (x > y) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

}  // namespace vigil
