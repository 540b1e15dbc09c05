#include "vigil/core/transaction.h"

#include <cstdint>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
// 2022-09-01T00:00:00Z in Unix microseconds.
constexpr int64_t k20220901 = 1'661'990'400 * kSecond;

TEST(FormatUtc, WritesMicrosecondsAndZ) {
  const struct {
    int64_t micros;
    const char* text;
    const char* why;
  } kCases[] = {
      {0, "1970-01-01T00:00:00.000000Z", "the epoch"},
      {k20220901 + 9 * kMinute, "2022-09-01T00:09:00.000000Z", "AMLworld-style minute"},
      {k20220901 + 23 * kHour + 59 * kMinute + 59 * kSecond + 999'999,
       "2022-09-01T23:59:59.999999Z", "last microsecond of a day"},
      {-1, "1969-12-31T23:59:59.999999Z", "before the epoch: floor to the day, not truncate"},
      {951'782'400 * kSecond, "2000-02-29T00:00:00.000000Z", "leap day of a 400-year"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.why);
    EXPECT_EQ(FormatUtc(FromUnixMicros(c.micros)), c.text);
  }
}

TEST(ParseRfc3339, AcceptsValidForms) {
  const struct {
    const char* text;
    int64_t micros;
    const char* why;
  } kCases[] = {
      {"2022-09-01T00:09:00Z", k20220901 + 9 * kMinute, "plain UTC"},
      {"2022-09-01t00:09:00z", k20220901 + 9 * kMinute, "RFC 3339 allows lower-case t and z"},
      {"2022-09-01 00:09:00Z", k20220901 + 9 * kMinute, "RFC 3339 section 5.6 allows a space"},
      {"2022-09-01T00:00:00.5Z", k20220901 + 500'000, "one fractional digit is tenths"},
      {"2022-09-01T00:00:00.000001Z", k20220901 + 1, "six digits: one microsecond"},
      {"2022-09-01T00:00:00.123Z", k20220901 + 123'000, "milliseconds"},
      {"2022-09-01T05:30:00+05:30", k20220901, "positive offset is subtracted"},
      {"2022-08-31T16:00:00-08:00", k20220901, "negative offset crosses back a day"},
      {"2022-09-01T00:00:00+00:00", k20220901, "+00:00 is UTC"},
      {"2022-09-01T00:00:00-00:00", k20220901, "-00:00 (unknown local offset) is UTC too"},
      {"2023-01-01T00:30:00+01:00", 1'672'531'200 * kSecond - 30 * kMinute,
       "offset crosses the year boundary backwards"},
      {"2024-02-29T00:00:00Z", 1'709'164'800 * kSecond, "2024 is a leap year"},
      {"2000-02-29T00:00:00Z", 951'782'400 * kSecond, "2000 is divisible by 400: leap"},
      {"1969-12-31T23:59:59.999999Z", -1, "before the epoch"},
      {"2022-09-01T23:59:59+23:59",
       k20220901 + 23 * kHour + 59 * kMinute + 59 * kSecond - (23 * kHour + 59 * kMinute),
       "largest offset"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.text << ": " << c.why);
    EXPECT_THAT(ParseRfc3339(c.text), IsOkAndHolds(FromUnixMicros(c.micros)));
  }
}

TEST(ParseRfc3339, RejectsInvalidTimestamps) {
  const struct {
    const char* text;
    const char* why;  // the expected reason in parentheses in the message
    const char* reason;
  } kCases[] = {
      {"", "empty", "expected YYYY-MM-DDThh:mm:ss"},
      {"2022-09-01", "date only: a payment time needs a time", "expected YYYY-MM-DDThh:mm:ss"},
      {"2022/09/01T00:00:00Z", "wrong date separator", "expected YYYY-MM-DDThh:mm:ss"},
      {"2022-09-01X00:00:00Z", "wrong date/time separator", "expected YYYY-MM-DDThh:mm:ss"},
      {"22-09-01T00:00:00Z", "two-digit year", "expected YYYY-MM-DDThh:mm:ss"},
      {"2022-9-01T00:00:00Z", "one-digit month", "expected YYYY-MM-DDThh:mm:ss"},
      {"2022-09-01T0:00:00Z", "one-digit hour", "expected YYYY-MM-DDThh:mm:ss"},
      {"2023-02-29T00:00:00Z", "2023 is not a leap year", "no such date"},
      {"1900-02-29T00:00:00Z", "1900 is divisible by 100, not 400: not leap", "no such date"},
      {"2022-04-31T00:00:00Z", "April has 30 days", "no such date"},
      {"2022-13-01T00:00:00Z", "month 13", "no such date"},
      {"2022-00-10T00:00:00Z", "month 0", "no such date"},
      {"2022-09-00T00:00:00Z", "day 0", "no such date"},
      {"2022-09-01T24:00:00Z", "hour 24 (RFC 3339 has no 24:00)", "time of day out of range"},
      {"2022-09-01T23:60:00Z", "minute 60", "time of day out of range"},
      {"2022-09-01T23:59:60Z",
       "leap second: UtcTime has none, so 60 is refused rather than silently folded",
       "time of day out of range"},
      {"2022-09-01T00:00:00", "no offset: a local time is ambiguous", "missing 'Z' or UTC offset"},
      {"2022-09-01T00:00:00.Z", "empty fraction", "empty fraction"},
      {"2022-09-01T00:00:00.1234567Z", "sub-microsecond digits would be lost",
       "more than 6 fractional digits"},
      {"2022-09-01T00:00:00+5:30", "one-digit offset hour", "bad UTC offset"},
      {"2022-09-01T00:00:00+0530", "offset without colon", "bad UTC offset"},
      {"2022-09-01T00:00:00+05", "offset without minutes", "bad UTC offset"},
      {"2022-09-01T00:00:00+24:00", "offset hour 24", "bad UTC offset"},
      {"2022-09-01T00:00:00+05:60", "offset minute 60", "bad UTC offset"},
      {"2022-09-01T00:00:00ZZ", "trailing characters", "trailing characters"},
      {"2022-09-01T00:00:00Z ", "trailing space", "trailing characters"},
      {"2022-09-01T00:00:00+05:30x", "trailing after offset", "trailing characters"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "'" << c.text << "': " << c.why);
    EXPECT_THAT(ParseRfc3339(c.text),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.reason)));
  }
  EXPECT_THAT(ParseRfc3339("2023-02-29T00:00:00Z"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("timestamp '2023-02-29T00:00:00Z' is not RFC 3339")));
}

TEST(ParseRfc3339, RoundTripsFormatUtc) {
  std::mt19937_64 rng(3339);
  // 1900-01-01 .. 2100-01-01 in microseconds.
  std::uniform_int_distribution<int64_t> dist(-2'208'988'800 * kSecond, 4'102'444'800 * kSecond);
  for (int i = 0; i < 10000; ++i) {
    const UtcTime t = FromUnixMicros(dist(rng));
    const std::string text = FormatUtc(t);
    ASSERT_THAT(ParseRfc3339(text), IsOkAndHolds(t)) << text;
  }
}

TEST(PaymentFormat, NamesRoundTrip) {
  const struct {
    PaymentFormat format;
    const char* name;
    const char* json_name;
  } kCases[] = {
      {PaymentFormat::kUnknown, "Unknown", "unknown"},
      {PaymentFormat::kAch, "ACH", "ach"},
      {PaymentFormat::kBitcoin, "Bitcoin", "bitcoin"},
      {PaymentFormat::kCash, "Cash", "cash"},
      {PaymentFormat::kCheque, "Cheque", "cheque"},
      {PaymentFormat::kCreditCard, "Credit Card", "credit_card"},
      {PaymentFormat::kReinvestment, "Reinvestment", "reinvestment"},
      {PaymentFormat::kWire, "Wire", "wire"},
  };
  static_assert(sizeof(kCases) / sizeof(kCases[0]) == kNumPaymentFormats);
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PaymentFormatName(c.format), c.name);
    EXPECT_EQ(PaymentFormatJsonName(c.format), c.json_name);
    EXPECT_THAT(ParsePaymentFormat(c.name), IsOkAndHolds(c.format));       // AMLworld CSV
    EXPECT_THAT(ParsePaymentFormat(c.json_name), IsOkAndHolds(c.format));  // JSON
  }
}

TEST(PaymentFormat, OutOfRangeCodeReadsAsUnknown) {
  // A format cast from a stored integer code must not read past the name table.
  const auto bad = static_cast<PaymentFormat>(kNumPaymentFormats + 3);
  EXPECT_EQ(PaymentFormatName(bad), "Unknown");
  EXPECT_EQ(PaymentFormatJsonName(bad), "unknown");
}

TEST(PaymentFormat, RejectsOtherSpellings) {
  // Only the two documented spellings: a variant is a different layout, not a typo to guess.
  for (const char* name : {"", "WIRE", "Credit card", "credit-card", "creditcard", " wire"}) {
    SCOPED_TRACE(::testing::Message() << "'" << name << "'");
    EXPECT_THAT(ParsePaymentFormat(name),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown payment format")));
  }
}

TEST(Priority, NamesRoundTrip) {
  for (Priority p : {Priority::kP0, Priority::kP1, Priority::kP2}) {
    EXPECT_THAT(ParsePriority(PriorityName(p)), IsOkAndHolds(p));
  }
  EXPECT_EQ(PriorityName(Priority::kP0), "P0");
  EXPECT_EQ(PriorityName(Priority::kP2), "P2");
  EXPECT_THAT(ParsePriority("p1"), IsOkAndHolds(Priority::kP1));  // lower case accepted
  for (const char* name : {"", "P3", "P", "1", "urgent"}) {
    SCOPED_TRACE(::testing::Message() << "'" << name << "'");
    EXPECT_THAT(ParsePriority(name),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown priority")));
  }
}

TEST(Transaction, DefaultsAndEquality) {
  Transaction a;
  EXPECT_EQ(a.priority, Priority::kP1);  // normal unless the source says urgent or bulk
  EXPECT_EQ(a.payment_format, PaymentFormat::kUnknown);
  EXPECT_FALSE(a.settled_amount.has_value());
  EXPECT_FALSE(a.label.has_value());
  a.id = "t1";
  a.amount = *Money::Parse("1.50", *Currency::FromCode("USD"));
  Transaction b = a;
  EXPECT_EQ(a, b);
  b.amount = *Money::Parse("1.5", *Currency::FromCode("USD"));
  EXPECT_EQ(a, b) << "amounts compare by value, not by scale";
  b.label = Label{true, "fan_out"};
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace vigil
