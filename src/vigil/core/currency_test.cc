#include "vigil/core/currency.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(Currency, FromCodeAcceptsKnownCodes) {
  const struct {
    const char* code;
    int exponent;
    const char* why;
  } kCases[] = {
      {"USD", 2, "the default reporting currency"},
      {"EUR", 2, "common ISO code"},
      {"JPY", 0, "no minor unit"},
      {"KRW", 0, "no minor unit"},
      {"BHD", 3, "three decimals"},
      {"KWD", 3, "three decimals"},
      {"CLF", 4, "four decimals (unit of account)"},
      {"AED", 2, "first entry of the sorted table"},
      {"ZWL", 2, "last entry of the sorted table"},
      {"XBT", -1, "Bitcoin: vigil's non-ISO asset, no exponent"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.code << ": " << c.why);
    ASSERT_OK_AND_ASSIGN(Currency cur, Currency::FromCode(c.code));
    EXPECT_EQ(cur.code(), c.code);
    EXPECT_EQ(cur.iso_exponent(), c.exponent);
    EXPECT_EQ(cur.is_iso(), c.exponent >= 0);
    EXPECT_FALSE(cur.empty());
    EXPECT_EQ(Currency::FromPacked(cur.packed()), cur);
  }
}

TEST(Currency, FromCodeRejectsMalformedAndUnknownCodes) {
  const struct {
    const char* code;
    const char* message;
    const char* why;
  } kCases[] = {
      {"", "three-letter upper-case", "empty"},
      {"US", "three-letter upper-case", "too short"},
      {"USDX", "three-letter upper-case", "too long"},
      {"usd", "three-letter upper-case", "lower case is not guessed into upper case"},
      {"Usd", "three-letter upper-case", "mixed case"},
      {"US1", "three-letter upper-case", "digit"},
      {" USD", "three-letter upper-case", "no trimming"},
      {"BTC", "unknown currency code", "vigil spells Bitcoin XBT; BTC is not guessed"},
      {"AAA", "unknown currency code", "well-formed but not in ISO 4217"},
      {"ZZZ", "unknown currency code", "past the end of the table"},
      {"AAB", "unknown currency code", "before the start of the table"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "'" << c.code << "': " << c.why);
    EXPECT_THAT(Currency::FromCode(c.code),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
}

TEST(Currency, AllFifteenAmlworldNamesMapBothWays) {
  const struct {
    const char* name;
    const char* code;
  } kNames[] = {
      {"US Dollar", "USD"},
      {"Euro", "EUR"},
      {"Yuan", "CNY"},
      {"UK Pound", "GBP"},
      {"Yen", "JPY"},
      {"Rupee", "INR"},
      {"Ruble", "RUB"},
      {"Canadian Dollar", "CAD"},
      {"Australian Dollar", "AUD"},
      {"Swiss Franc", "CHF"},
      {"Brazil Real", "BRL"},
      {"Mexican Peso", "MXN"},
      {"Saudi Riyal", "SAR"},
      {"Shekel", "ILS"},
      {"Bitcoin", "XBT"},
  };
  std::set<std::string> codes;
  for (const auto& n : kNames) {
    SCOPED_TRACE(n.name);
    ASSERT_OK_AND_ASSIGN(Currency c, Currency::FromAmlworldName(n.name));
    EXPECT_EQ(c.code(), n.code);
    // The mapped code must also be a code FromCode knows (an exponent, or XBT).
    ASSERT_OK_AND_ASSIGN(Currency by_code, Currency::FromCode(n.code));
    EXPECT_EQ(c, by_code);
    EXPECT_EQ(AmlworldCurrencyName(c), n.name);
    codes.insert(c.code());
  }
  EXPECT_EQ(codes.size(), 15u) << "two AMLworld names map to one code";
}

TEST(Currency, FromAmlworldNameIsExact) {
  // Names are matched exactly: AMLworld files are machine-written, so a variant means the wrong
  // layout or a corrupt row, and vigil never guesses a currency.
  for (const char* name : {"", "us dollar", "US Dollar ", "USD", "Dollar", "Pound", "UK pound"}) {
    SCOPED_TRACE(::testing::Message() << "'" << name << "'");
    EXPECT_THAT(Currency::FromAmlworldName(name),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AMLworld currency name")));
  }
}

TEST(Currency, AmlworldCurrencyNameIsEmptyOutsideAmlworld) {
  ASSERT_OK_AND_ASSIGN(Currency hkd, Currency::FromCode("HKD"));
  EXPECT_EQ(AmlworldCurrencyName(hkd), "");
  EXPECT_EQ(AmlworldCurrencyName(Currency()), "");
}

TEST(Currency, EmptyCurrency) {
  const Currency c;
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.code(), "");
  EXPECT_EQ(c.iso_exponent(), -1);
  EXPECT_FALSE(c.is_iso());
  EXPECT_EQ(c.packed(), 0u);
}

TEST(Currency, OrderingFollowsCode) {
  ASSERT_OK_AND_ASSIGN(Currency eur, Currency::FromCode("EUR"));
  ASSERT_OK_AND_ASSIGN(Currency usd, Currency::FromCode("USD"));
  EXPECT_LT(eur, usd);
  EXPECT_LT(Currency(), eur);  // the empty currency sorts first
  EXPECT_NE(eur, usd);
}

}  // namespace
}  // namespace vigil
