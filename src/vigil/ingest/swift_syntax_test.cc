#include "vigil/ingest/swift_syntax.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

TEST(SwiftSyntax, XCharacterSet) {
  EXPECT_EQ(FindOutsideSwiftX("ABC abc 0-9 /?:().,'+\r\n"), std::string_view::npos);
  EXPECT_EQ(FindOutsideSwiftX("PAY@HOME"), 3u);
  EXPECT_EQ(FindOutsideSwiftX("a;b"), 1u);
  EXPECT_EQ(FindOutsideSwiftX("M\xc3\xbcller"), 1u);  // UTF-8 is outside X
  EXPECT_EQ(FindOutsideSwiftX("{"), 0u);
  EXPECT_EQ(FindOutsideSwiftX("a_b"), 1u);
}

TEST(SwiftSyntax, Bics) {
  EXPECT_OK(CheckBic("DEUTDEFF"));
  EXPECT_OK(CheckBic("DEUTDEFF500"));
  EXPECT_OK(CheckBic("HANYUS33XXX"));
  EXPECT_OK(CheckBic("ABCDLKL0"));  // location may hold a digit
  EXPECT_THAT(CheckBic("DEUTDEF"), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("7 characters, not 8 or 11")));
  EXPECT_THAT(CheckBic("DEUTDEFF5"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CheckBic("DEU1DEFF"), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("character 4 must be a letter (institution")));
  EXPECT_THAT(CheckBic("DEUTD3FF"), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("character 6 must be a letter (country")));
  EXPECT_THAT(CheckBic("deutdeff"), StatusIs(absl::StatusCode::kInvalidArgument));
}

// Check digits verified independently (python: int(rearranged, letters as 10..35) % 97 == 1).
TEST(SwiftSyntax, Ibans) {
  for (const char* iban : {"GB82WEST12345698765432", "DE89370400440532013000",
                           "FR1420041010050500013M02606", "NL91ABNA0417164300", "BE68539007547034",
                           "NO9386011117947", "CH9300762011623852957", "ES9121000418450200051332",
                           "MT84MALT011000012345MTLCAST001S", "SA0380000000608010167519"}) {
    EXPECT_OK(CheckIban(iban)) << iban;
    EXPECT_TRUE(IsValidIban(iban)) << iban;
  }
  EXPECT_THAT(CheckIban("GB82WEST12345698765433"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the check digits 82 are wrong")));
  EXPECT_THAT(CheckIban("GB82WEST1234569876543"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("an IBAN of GB has 22 characters, not 21")));
  EXPECT_THAT(CheckIban("GB82 WEST 1234 5698 7654 32"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("holds ' '")));
  EXPECT_THAT(CheckIban("1234567890123456"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("country code")));
  EXPECT_THAT(CheckIban("DE89"), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("not 15 to 34")));
  // Every single-character change of a valid IBAN is caught (mod 97 catches all of them).
  std::string iban = "DE89370400440532013000";
  for (size_t i = 4; i < iban.size(); ++i) {
    std::string changed = iban;
    changed[i] = changed[i] == '9' ? '0' : static_cast<char>(changed[i] + 1);
    EXPECT_FALSE(IsValidIban(changed)) << changed;
  }
  EXPECT_FALSE(IsValidIban("/2110144802"));
  EXPECT_FALSE(IsValidIban("12345678"));
}

TEST(SwiftSyntax, MtAmounts) {
  const Currency usd = *Currency::FromCode("USD");
  const Currency jpy = *Currency::FromCode("JPY");
  const Currency bhd = *Currency::FromCode("BHD");
  EXPECT_THAT(ParseMtAmount("7138,40", usd), IsOkAndHolds(Money(713840, 2, usd)));
  EXPECT_THAT(ParseMtAmount("1000,", usd), IsOkAndHolds(Money(1000, 0, usd)));
  EXPECT_THAT(ParseMtAmount("0,5", usd), IsOkAndHolds(Money(5, 1, usd)));
  EXPECT_THAT(ParseMtAmount("5000,", jpy), IsOkAndHolds(Money(5000, 0, jpy)));
  EXPECT_THAT(ParseMtAmount("1,234", bhd), IsOkAndHolds(Money(1234, 3, bhd)));
  EXPECT_THAT(ParseMtAmount("12345678901234,", usd), IsOkAndHolds(Money(12345678901234, 0, usd)));
  EXPECT_THAT(ParseMtAmount("1000", usd), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("needs a decimal comma")));
  EXPECT_THAT(ParseMtAmount("10.50", usd), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseMtAmount(",50", usd), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("at least one digit before")));
  EXPECT_THAT(ParseMtAmount("1,2,3", usd), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseMtAmount("-5,00", usd), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseMtAmount("12,345", usd),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("USD has 2 decimals")));
  EXPECT_THAT(ParseMtAmount("5,5", jpy),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("JPY has 0 decimals")));
  EXPECT_THAT(ParseMtAmount("1234567890123456,", usd),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 to 15 characters")));
  EXPECT_THAT(ParseMtAmount("", usd), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SwiftSyntax, Dates) {
  EXPECT_THAT(ParseMtDate("250827"), IsOkAndHolds(std::string("2025-08-27")));
  EXPECT_THAT(ParseMtDate("991231"), IsOkAndHolds(std::string("1999-12-31")));
  EXPECT_THAT(ParseMtDate("000229"), IsOkAndHolds(std::string("2000-02-29")));  // leap
  EXPECT_THAT(ParseMtDate("240229"), IsOkAndHolds(std::string("2024-02-29")));
  EXPECT_THAT(ParseMtDate("250229"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("month 2 of 2025 has no day 29")));
  EXPECT_THAT(ParseMtDate("251301"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("no month 13")));
  EXPECT_THAT(ParseMtDate("250431"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseMtDate("25083"), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("is not YYMMDD")));
  EXPECT_THAT(ParseMtDate("2508a7"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_OK(CheckIsoDate("2024-02-29"));
  EXPECT_OK(CheckIsoDate("2025-12-31"));
  EXPECT_THAT(CheckIsoDate("1900-02-29"), StatusIs(absl::StatusCode::kInvalidArgument));  // not leap
  EXPECT_THAT(CheckIsoDate("2025-8-27"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("is not YYYY-MM-DD")));
  EXPECT_THAT(CheckIsoDate("2025-00-10"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(NormalizeUetrTest, AcceptsUuidsInEitherCaseAndRefusesOtherForms) {
  EXPECT_EQ(*NormalizeUetr("8403C004-66B2-40fc-acba-9f11d1a4ad84"),
            "8403c004-66b2-40fc-acba-9f11d1a4ad84");
  EXPECT_FALSE(NormalizeUetr("8403c004-66b2-40fc-acba-9f11d1a4ad8").ok());
  EXPECT_FALSE(NormalizeUetr("8403c004x66b2-40fc-acba-9f11d1a4ad84").ok());
  const absl::StatusOr<std::string> bad = NormalizeUetr("8403c004-66b2-40fc-acba-9f11d1a4ad8g");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("position 36"));
}

}  // namespace
}  // namespace vigil
