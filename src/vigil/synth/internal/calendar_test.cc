#include "vigil/synth/internal/calendar.h"

#include <string>

#include "gtest/gtest.h"

namespace vigil::synth::internal {
namespace {

TEST(Calendar, CivilFromDaysRoundTrips) {
  const int64_t day = DaysFromCivil(2022, 9, 1);
  EXPECT_EQ(day, 19236);  // 2022-09-01 is day 19236 of the Unix epoch
  const CivilDay c = CivilFromDays(day);
  EXPECT_EQ(c.year, 2022);
  EXPECT_EQ(c.month, 9);
  EXPECT_EQ(c.day, 1);
  EXPECT_EQ(c.weekday, 4);  // Thursday
  EXPECT_EQ(c.days_in_month, 30);
  EXPECT_FALSE(c.is_weekend());
  EXPECT_TRUE(CivilFromDays(DaysFromCivil(2022, 9, 3)).is_weekend());
  EXPECT_EQ(CivilFromDays(DaysFromCivil(2024, 2, 10)).days_in_month, 29);  // leap year
}

TEST(Calendar, FormatsAmlworldTimestamp) {
  char text[16];
  FormatDate(CivilFromDays(DaysFromCivil(2022, 9, 1)), text);
  text[10] = ' ';
  FormatTimeOfDay(9, text + 11);
  EXPECT_EQ(std::string(text, 16), "2022/09/01 00:09");
  FormatTimeOfDay(23 * 60 + 59, text + 11);
  EXPECT_EQ(std::string(text + 11, 5), "23:59");
}

TEST(Calendar, MonthlyPaymentMovesOffWeekends) {
  // 2022-09-25 is a Sunday: salaries go out on Friday the 23rd.
  EXPECT_EQ(MonthlyPaymentDay(2022, 9, 25, WeekendRule::kPreviousFriday),
            DaysFromCivil(2022, 9, 23));
  // Due on the 31st in September means the last day, the 30th (a Friday).
  EXPECT_EQ(MonthlyPaymentDay(2022, 9, 31, WeekendRule::kPreviousFriday),
            DaysFromCivil(2022, 9, 30));
  // 2022-10-01 is a Saturday: rent goes out on Monday the 3rd.
  EXPECT_EQ(MonthlyPaymentDay(2022, 10, 1, WeekendRule::kNextMonday), DaysFromCivil(2022, 10, 3));
  // ... and a salary due that day on Friday 2022-09-30, in the previous month.
  EXPECT_EQ(MonthlyPaymentDay(2022, 10, 1, WeekendRule::kPreviousFriday),
            DaysFromCivil(2022, 9, 30));
  // A weekday due date stays.
  EXPECT_EQ(MonthlyPaymentDay(2022, 9, 15, WeekendRule::kPreviousFriday),
            DaysFromCivil(2022, 9, 15));
}

TEST(Calendar, IsMonthlyPaymentDayLooksAcrossMonthEnds) {
  const int64_t sep30 = DaysFromCivil(2022, 9, 30);
  const CivilDay c = CivilFromDays(sep30);
  EXPECT_TRUE(IsMonthlyPaymentDay(sep30, c, 1, WeekendRule::kPreviousFriday));  // Oct 1 moved
  EXPECT_TRUE(IsMonthlyPaymentDay(sep30, c, 31, WeekendRule::kPreviousFriday));
  EXPECT_FALSE(IsMonthlyPaymentDay(sep30, c, 25, WeekendRule::kPreviousFriday));
  const int64_t oct1 = DaysFromCivil(2022, 10, 1);
  EXPECT_FALSE(IsMonthlyPaymentDay(oct1, CivilFromDays(oct1), 1, WeekendRule::kNextMonday));
}

}  // namespace
}  // namespace vigil::synth::internal
