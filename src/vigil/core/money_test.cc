#include "vigil/core/money.h"

#include <compare>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;
using Mark = Money::DecimalMark;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Currency Code(const char* code) {
  absl::StatusOr<Currency> c = Currency::FromCode(code);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.value_or(Currency());
}

struct ParseOkCase {
  const char* text;
  Mark mark;
  int64_t units;
  int scale;
  const char* why;
};

TEST(MoneyParse, AcceptsPlainDecimals) {
  const ParseOkCase kCases[] = {
      {"0", Mark::kPoint, 0, 0, "zero, no decimals"},
      {"51.43", Mark::kPoint, 5143, 2, "typical amount: the scale is the decimals written"},
      {"51.430", Mark::kPoint, 51430, 3, "a trailing zero stays in the scale (not normalized)"},
      {"007", Mark::kPoint, 7, 0, "leading zeros are harmless"},
      {"1.0", Mark::kPoint, 10, 1, "scale 1"},
      {"1.23", Mark::kPoint, 123, 2, "scale 2"},
      {"1.234", Mark::kPoint, 1234, 3, "scale 3"},
      {"1.2345", Mark::kPoint, 12345, 4, "scale 4"},
      {"0.00001", Mark::kPoint, 1, 5, "scale 5; leading fractional zeros"},
      {"0.012345", Mark::kPoint, 12345, 6, "scale 6, as in AMLworld Bitcoin amounts"},
      {"1.2345678", Mark::kPoint, 12345678, 7, "scale 7"},
      {"0.00000001", Mark::kPoint, 1, 8, "scale 8: one satoshi"},
      {"0.000000001", Mark::kPoint, 1, 9, "scale 9 == kMaxScale"},
      {"-0.012345", Mark::kPoint, -12345, 6, "negative fraction (reversals)"},
      {"-0", Mark::kPoint, 0, 0, "negative zero is plain zero"},
      {"9223372036854775807", Mark::kPoint, kMax, 0, "INT64_MAX: the widest positive amount"},
      {"-9223372036854775808", Mark::kPoint, kMin, 0,
       "INT64_MIN: digits accumulate as a negative number, so it is representable"},
      {"9223372036.854775807", Mark::kPoint, kMax, 9, "INT64_MAX units at the maximum scale"},
      {"-9223372036.854775808", Mark::kPoint, kMin, 9, "INT64_MIN units at the maximum scale"},
      {"1234,56", Mark::kComma, 123456, 2, "SWIFT MT decimal comma"},
      {"1000,", Mark::kComma, 1000, 0, "SWIFT MT writes the comma even without decimals"},
      {"0,5", Mark::kComma, 5, 1, "comma with one decimal"},
  };
  const Currency usd = Code("USD");
  for (const ParseOkCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "'" << c.text << "': " << c.why);
    ASSERT_OK_AND_ASSIGN(Money m, Money::Parse(c.text, usd, c.mark));
    EXPECT_EQ(m.units(), c.units);
    EXPECT_EQ(m.scale(), c.scale);
    EXPECT_EQ(m.currency(), usd);
  }
}

struct ParseErrorCase {
  const char* text;
  Mark mark;
  const char* message;  // substring of the error
  const char* why;
};

TEST(MoneyParse, RejectsMalformedText) {
  const ParseErrorCase kCases[] = {
      {"", Mark::kPoint, "empty", "nothing to parse"},
      {"-", Mark::kPoint, "no digits", "a sign alone is not a number"},
      {"+1", Mark::kPoint, "invalid character '+'", "no '+': sources never write one"},
      {"--1", Mark::kPoint, "invalid character '-'", "one sign at most"},
      {"1-", Mark::kPoint, "invalid character '-'", "the sign must lead"},
      {"1e5", Mark::kPoint, "invalid character 'e'", "no exponent notation"},
      {"1E5", Mark::kPoint, "invalid character 'E'", "no exponent notation, upper case"},
      {" 1", Mark::kPoint, "invalid character ' '", "no leading space: the caller trims"},
      {"1 ", Mark::kPoint, "invalid character ' '", "no trailing space"},
      {"1 000", Mark::kPoint, "invalid character ' '", "no space as thousands separator"},
      {"1,000.00", Mark::kPoint, "invalid character ','",
       "no thousands separator; ',' is not the decimal mark here"},
      {"1.50", Mark::kComma, "invalid character '.'", "'.' is not the mark in comma mode"},
      {"1.", Mark::kPoint, "ends with a decimal mark", "JSON/CSV never end on the point"},
      {".5", Mark::kPoint, "no digits before the decimal mark", "a digit must lead the point"},
      {",5", Mark::kComma, "no digits before the decimal mark", "SWIFT needs a leading digit"},
      {"-.5", Mark::kPoint, "no digits before the decimal mark", "same, negative"},
      {"1.2.3", Mark::kPoint, "more than one decimal mark", "two marks"},
      {"1,2,3", Mark::kComma, "more than one decimal mark", "two marks, comma mode"},
      {"0.0000000001", Mark::kPoint, "more than 9 decimals", "scale 10 > kMaxScale"},
      {"1.0000000000", Mark::kPoint, "more than 9 decimals",
       "trailing zeros count: the scale is what was written"},
      {"9.223372036854775807", Mark::kPoint, "more than 9 decimals",
       "INT64_MAX digits, but 18 decimals"},
      {"9223372036854775808", Mark::kPoint, "overflows", "INT64_MAX + 1"},
      {"-9223372036854775809", Mark::kPoint, "overflows", "INT64_MIN - 1"},
      {"9223372036.854775808", Mark::kPoint, "overflows", "INT64_MAX + 1 units at scale 9"},
      {"99999999999999999999", Mark::kPoint, "overflows", "20 digits"},
      {"NaN", Mark::kPoint, "invalid character 'N'", "no floating-point spellings"},
      {"inf", Mark::kPoint, "invalid character 'i'", "no floating-point spellings"},
      {"0x10", Mark::kPoint, "invalid character 'x'", "no hex"},
  };
  const Currency usd = Code("USD");
  for (const ParseErrorCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "'" << c.text << "': " << c.why);
    EXPECT_THAT(Money::Parse(c.text, usd, c.mark),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
}

TEST(MoneyParse, ErrorQuotesTheText) {
  EXPECT_THAT(Money::Parse("12a", Code("USD")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'12a'")));
}

TEST(Money, EqualityIgnoresScaleButNotCurrency) {
  const Currency usd = Code("USD");
  const Currency eur = Code("EUR");
  EXPECT_EQ(Money(15, 1, usd), Money(150, 2, usd));        // 1.5 == 1.50
  EXPECT_EQ(Money(1, 0, usd), Money(1000000000, 9, usd));  // 1 == 1.000000000
  EXPECT_EQ(Money(0, 0, usd), Money(0, 9, usd));           // zero at any scale
  EXPECT_NE(Money(15, 1, usd), Money(151, 2, usd));        // 1.5 != 1.51
  EXPECT_NE(Money(15, 1, usd), Money(15, 1, eur));         // same number, other currency
  EXPECT_NE(Money(15, 1, usd), Money(-15, 1, usd));        // sign matters
  EXPECT_EQ(*Money::Parse("1.50", usd), *Money::Parse("1.5", usd));
}

TEST(Money, CompareAmountsIsExactAcrossScales) {
  const Currency usd = Code("USD");
  const Currency eur = Code("EUR");
  // Rescaling INT64_MAX by 10^9 needs 128 bits; a 64-bit rescale would wrap and misorder.
  EXPECT_EQ(Money::CompareAmounts(Money(kMax, 0, usd), Money(kMax, 9, usd)),
            std::strong_ordering::greater);
  EXPECT_EQ(Money::CompareAmounts(Money(kMin, 0, usd), Money(-1, 9, usd)),
            std::strong_ordering::less);
  EXPECT_EQ(Money::CompareAmounts(Money(kMin, 9, usd), Money(kMax, 9, usd)),
            std::strong_ordering::less);
  // 0.1 < 0.11 even though 1 < 11 would say the same for the wrong reason; 0.2 > 0.11 does not.
  EXPECT_EQ(Money::CompareAmounts(Money(2, 1, usd), Money(11, 2, usd)),
            std::strong_ordering::greater);
  EXPECT_EQ(Money::CompareAmounts(Money(-2, 1, usd), Money(-11, 2, usd)),
            std::strong_ordering::less);
  // Currency is ignored by CompareAmounts (conversion is FxRates' job).
  EXPECT_EQ(Money::CompareAmounts(Money(100, 2, usd), Money(1, 0, eur)),
            std::strong_ordering::equal);
}

TEST(Money, ToDecimalStringWritesExactlyScaleDecimals) {
  const Currency usd = Code("USD");
  const struct {
    Money money;
    const char* text;
    const char* why;
  } kCases[] = {
      {Money(5143, 2, usd), "51.43", "plain"},
      {Money(5, 3, usd), "0.005", "zeros padded between point and digits"},
      {Money(-5, 3, usd), "-0.005", "negative below one"},
      {Money(100, 0, usd), "100", "scale 0 has no point"},
      {Money(0, 2, usd), "0.00", "zero keeps its scale"},
      {Money(kMax, 0, usd), "9223372036854775807", "INT64_MAX"},
      {Money(kMin, 0, usd), "-9223372036854775808", "INT64_MIN: magnitude taken unsigned"},
      {Money(kMin, 9, usd), "-9223372036.854775808", "INT64_MIN at scale 9"},
      {Money(1, 9, usd), "0.000000001", "smallest positive at scale 9"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.why);
    EXPECT_EQ(c.money.ToDecimalString(), c.text);
  }
  EXPECT_EQ(Money(5143, 2, usd).ToString(), "51.43 USD");
}

TEST(Money, ToDecimalStringRoundTripsThroughParse) {
  const Currency xbt = Code("XBT");
  std::mt19937_64 rng(20240601);
  std::uniform_int_distribution<int> scale_dist(0, Money::kMaxScale);
  for (int i = 0; i < 20000; ++i) {
    // Mix full-range values with small ones, so short strings and padding are both exercised.
    int64_t units = static_cast<int64_t>(rng());
    if (i % 2 == 0) units %= 100000;
    if (i == 0) units = kMin;
    if (i == 1) units = kMax;
    const Money m(units, scale_dist(rng), xbt);
    const std::string text = m.ToDecimalString();
    ASSERT_OK_AND_ASSIGN(Money back, Money::Parse(text, xbt));
    ASSERT_EQ(back.units(), m.units()) << text;
    ASSERT_EQ(back.scale(), m.scale()) << text;
  }
}

struct IsoCase {
  const char* code;
  const char* text;
  bool ok;
  const char* why;
};

TEST(Money, CheckIsoExponent) {
  const IsoCase kCases[] = {
      {"JPY", "100", true, "JPY has exponent 0"},
      {"JPY", "100.00", true, "extra decimals are fine when they are zeros"},
      {"JPY", "100.5", false, "half a yen does not exist"},
      {"JPY", "100.50", false, "a non-zero digit past the exponent, with a trailing zero"},
      {"USD", "1.23", true, "USD has exponent 2"},
      {"USD", "1.230", true, "trailing zero past the exponent"},
      {"USD", "1.235", false, "a third decimal"},
      {"USD", "-1.235", false, "negative amounts are checked the same way"},
      {"BHD", "1.234", true, "BHD has exponent 3"},
      {"BHD", "1.2340", true, "trailing zero"},
      {"BHD", "1.2345", false, "a fourth decimal"},
      {"CLF", "1.2345", true, "CLF has exponent 4"},
      {"XBT", "0.123456789", true, "XBT is not ISO: no exponent to check"},
  };
  for (const IsoCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.text << " " << c.code << ": " << c.why);
    ASSERT_OK_AND_ASSIGN(Money m, Money::Parse(c.text, Code(c.code)));
    if (c.ok) {
      EXPECT_OK(m.CheckIsoExponent());
    } else {
      EXPECT_THAT(m.CheckIsoExponent(),
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           HasSubstr(std::string("ISO 4217 minor unit of ") + c.code)));
    }
  }
}

TEST(Money, AccessorsAndApproximateValue) {
  const Currency usd = Code("USD");
  const Money m(-5143, 2, usd);
  EXPECT_TRUE(m.is_negative());
  EXPECT_FALSE(m.is_zero());
  EXPECT_DOUBLE_EQ(m.ToDouble(), -51.43);
  EXPECT_TRUE(Money(0, 4, usd).is_zero());
  EXPECT_FALSE(Money(0, 4, usd).is_negative());
  const Money empty;
  EXPECT_TRUE(empty.currency().empty());
  EXPECT_EQ(empty.ToDecimalString(), "0");
}

TEST(MoneyDeathTest, ScaleOutOfRangeIsABug) {
  // The constructor is for code that already knows the scale; bad input goes through Parse.
  EXPECT_DEATH(Money(1, Money::kMaxScale + 1, Code("USD")), "check failed");
  EXPECT_DEATH(Money(1, -1, Code("USD")), "check failed");
}

}  // namespace
}  // namespace vigil
