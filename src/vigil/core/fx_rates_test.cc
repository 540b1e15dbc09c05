#include "vigil/core/fx_rates.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

Currency Code(const char* code) {
  absl::StatusOr<Currency> c = Currency::FromCode(code);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.value_or(Currency());
}

Money Amount(const char* text, const char* code) {
  absl::StatusOr<Money> m = Money::Parse(text, Code(code));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.value_or(Money());
}

constexpr char kTable[] =
    "# test table\n"
    "reporting_currency,USD\n"
    "currency,per_reporting_unit\n"
    "JPY,105.4\n"
    "CHF,4\n"
    "XBT,0.0000848\n";

class FxRatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<FxRates> fx = FxRates::Parse(kTable, "fx.csv");
    ASSERT_TRUE(fx.ok()) << fx.status();
    fx_ = *std::move(fx);
  }
  absl::StatusOr<int64_t> Micros(const char* text, const char* code) const {
    return fx_.ToReportingMicros(Amount(text, code));
  }
  FxRates fx_;
};

TEST_F(FxRatesTest, ExactConversionsWorkedByHand) {
  const struct {
    const char* amount;
    const char* code;
    int64_t micros;
    const char* why;
  } kCases[] = {
      {"105.40", "JPY", 1'000'000, "105.40 / 105.4 = 1 USD exactly: no float drift"},
      {"1054", "JPY", 10'000'000, "10 USD"},
      {"1", "JPY", 9'488, "1e6 / 105.4 = 9487.666 rounds up to 9488"},
      {"-1", "JPY", -9'488, "the magnitude rounds, then the sign comes back"},
      {"51.43", "USD", 51'430'000, "the reporting currency converts at 1"},
      {"-12.5", "USD", -12'500'000, "negative, in the reporting currency"},
      {"0.0000005", "USD", 1, "0.5 micros: a half rounds away from zero"},
      {"-0.0000005", "USD", -1, "-0.5 micros: away from zero, to -1 (not toward +inf to 0)"},
      {"0.0000025", "USD", 3, "2.5 micros: away from zero gives 3 (banker's would give 2)"},
      {"-0.0000025", "USD", -3, "-2.5 micros: -3 (banker's -2, floor -3, truncation -2)"},
      {"-0.0000024", "USD", -2, "-2.4 micros: below the half, toward zero"},
      {"0.000000001", "USD", 0, "0.001 micros rounds to zero"},
      {"0.000002", "CHF", 1, "0.000002 / 4 = 0.5 micros, through a rate"},
      {"-0.000010", "CHF", -3, "-0.00001 / 4 = -2.5 micros -> -3"},
      {"1", "CHF", 250'000, "integer rate"},
      {"1", "XBT", 11'792'452'830, "1e13 / 848 = 11792452830.19: 7-decimal rate, exact"},
      {"0.00000001", "XBT", 118, "one satoshi: 1e5 / 848 = 117.9 -> 118"},
      {"9223372036854.775807", "USD", std::numeric_limits<int64_t>::max(),
       "INT64_MAX micros is the largest result; the 128-bit intermediate does not wrap"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.amount << " " << c.code << ": " << c.why);
    EXPECT_THAT(Micros(c.amount, c.code), IsOkAndHolds(c.micros));
  }
}

TEST_F(FxRatesTest, OverflowIsAnError) {
  // 9.2e18 USD is 9.2e24 micros: far past 64 bits.
  EXPECT_THAT(Micros("9223372036854775807", "USD"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflows")));
  // 9223372036854.78 USD is 9223372036854780000 micros: just past INT64_MAX (...775807).
  EXPECT_THAT(Micros("9223372036854.78", "USD"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflows")));
  EXPECT_THAT(Micros("-9223372036854775808", "JPY"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overflows")));
}

TEST_F(FxRatesTest, UnknownCurrencyIsAnErrorNeverRateOne) {
  EXPECT_EQ(fx_.reporting_currency(), Code("USD"));
  EXPECT_TRUE(fx_.Has(Code("USD")));
  EXPECT_TRUE(fx_.Has(Code("JPY")));
  EXPECT_FALSE(fx_.Has(Code("GBP")));
  EXPECT_THAT(Micros("1", "GBP"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("no FX rate for currency GBP into USD")));
}

TEST(FxRates, OtherReportingCurrency) {
  ASSERT_OK_AND_ASSIGN(FxRates fx, FxRates::Parse("reporting_currency,EUR\n"
                                                  "currency,per_reporting_unit\n"
                                                  "USD,1.25\n",
                                                  "eur.csv"));
  EXPECT_EQ(fx.reporting_currency(), Code("EUR"));
  // 1 USD buys 1 / 1.25 = 0.8 EUR.
  EXPECT_THAT(fx.ToReportingMicros(Amount("1", "USD")), IsOkAndHolds(800'000));
  EXPECT_THAT(fx.ToReportingMicros(Amount("2.50", "EUR")), IsOkAndHolds(2'500'000));
}

TEST(FxRates, ToleratesCommentsBlankLinesSpacesAndCrlf) {
  ASSERT_OK_AND_ASSIGN(FxRates fx, FxRates::Parse("# comment\r\n"
                                                  "\r\n"
                                                  "reporting_currency , USD\r\n"
                                                  "currency,per_reporting_unit\r\n"
                                                  "  EUR , 0.8 \r\n"
                                                  "USD,1.00\r\n",  // the reporting currency at 1
                                                  "crlf.csv"));
  EXPECT_THAT(fx.ToReportingMicros(Amount("1", "EUR")), IsOkAndHolds(1'250'000));
  EXPECT_THAT(fx.ToReportingMicros(Amount("1", "USD")), IsOkAndHolds(1'000'000));
}

TEST(FxRates, ParseErrorsNameFileAndLine) {
  constexpr char kHead[] = "reporting_currency,USD\ncurrency,per_reporting_unit\n";
  const struct {
    std::string text;
    const char* error;  // expected prefix of the message
    const char* why;
  } kCases[] = {
      {"reporting_currency\n", "fx.csv:1: expected two comma-separated columns", "one column"},
      {std::string(kHead) + "EUR,0.8,x\n", "fx.csv:3: expected two", "three columns"},
      {"# c\n\n# c\nreporting_currency,usd\n", "fx.csv:4: currency 'usd'",
       "comments and blank lines count toward the line number"},
      {"reporting_currency,USD\ncurrency,rate\n", "fx.csv:2: column header must be",
       "wrong column header"},
      {"reporting_currency,USD\nEUR,0.8\n", "fx.csv:2: rates must follow",
       "a rate before the column header"},
      {"currency,per_reporting_unit\nEUR,0.8\n", "fx.csv:2: rates must follow",
       "a rate before the reporting currency"},
      {std::string(kHead) + "ABC,1.0\n", "fx.csv:3: unknown currency code 'ABC'",
       "unknown currency"},
      {std::string(kHead) + "eur,1.0\n", "fx.csv:3: currency 'eur'", "lower-case code"},
      {std::string(kHead) + "EUR,1e5\n", "fx.csv:3: amount '1e5' has invalid character",
       "rates use the exact decimal parser: no exponent"},
      {std::string(kHead) + "EUR,\n", "fx.csv:3: amount is empty", "missing rate"},
      {std::string(kHead) + "EUR,0\n", "fx.csv:3: rate must be positive", "zero rate"},
      {std::string(kHead) + "EUR,-0.8\n", "fx.csv:3: rate must be positive", "negative rate"},
      {std::string(kHead) + "EUR,0.8\nEUR,0.9\n", "fx.csv:4: duplicate rate for EUR",
       "two rates for one currency"},
      {std::string(kHead) + "USD,1.1\n", "fx.csv:3: rate for the reporting currency USD must be 1",
       "the reporting currency converts at 1 by definition"},
      {std::string(kHead) + "reporting_currency,EUR\n", "fx.csv:3: duplicate 'reporting_currency'",
       "a second reporting currency would re-denominate the rates read so far"},
      {"", "fx.csv: missing 'reporting_currency", "empty file"},
      {"currency,per_reporting_unit\n", "fx.csv: missing 'reporting_currency", "no reporting"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.why << ": " << c.text);
    EXPECT_THAT(FxRates::Parse(c.text, "fx.csv"),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith(c.error)));
  }
}

TEST(FxRates, LoadFileMissingIsNotFound) {
  EXPECT_THAT(FxRates::LoadFile("/nonexistent/fx.csv"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/fx.csv")));
}

TEST(FxRates, ShippedTableCoversEveryAmlworldCurrency) {
  const std::string path = ::vigil::testing::SourceDir() + "/data/fx_rates.csv";
  ASSERT_OK_AND_ASSIGN(FxRates fx, FxRates::LoadFile(path));
  EXPECT_EQ(fx.reporting_currency(), Code("USD"));
  for (const char* name : {"US Dollar", "Euro", "Yuan", "UK Pound", "Yen", "Rupee", "Ruble",
                           "Canadian Dollar", "Australian Dollar", "Swiss Franc", "Brazil Real",
                           "Mexican Peso", "Saudi Riyal", "Shekel", "Bitcoin"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(Currency c, Currency::FromAmlworldName(name));
    EXPECT_TRUE(fx.Has(c));
    EXPECT_OK(fx.ToReportingMicros(Money(100, 0, c)).status());
  }
  // The shipped JPY rate is 105.4000: 105.40 JPY is exactly one dollar.
  EXPECT_THAT(fx.ToReportingMicros(Amount("105.40", "JPY")), IsOkAndHolds(1'000'000));
  // SAR is at its peg of 3.75: 3.75 SAR is one dollar.
  EXPECT_THAT(fx.ToReportingMicros(Amount("3.75", "SAR")), IsOkAndHolds(1'000'000));
}

}  // namespace
}  // namespace vigil
