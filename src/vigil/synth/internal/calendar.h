// Calendar helpers for the generator: civil dates of UTC days, the AMLworld timestamp text, and
// the days on which monthly payments (salaries, rents) are made when the due date is a weekend.
//
// Days are counted from the Unix epoch (1970-01-01 is day 0), as std::chrono::sys_days does.
//
// Thread safety: stateless functions.
#ifndef VIGIL_SYNTH_INTERNAL_CALENDAR_H_
#define VIGIL_SYNTH_INTERNAL_CALENDAR_H_

#include <cstdint>

namespace vigil::synth::internal {

struct CivilDay {
  int year = 1970;
  int month = 1;    // 1..12
  int day = 1;      // 1..31
  int weekday = 3;  // ISO: 1 Monday .. 7 Sunday
  int days_in_month = 31;

  bool is_weekend() const { return weekday >= 6; }
};

CivilDay CivilFromDays(int64_t days_since_epoch);
int64_t DaysFromCivil(int year, int month, int day);

// Writes "YYYY/MM/DD" (exactly 10 characters, no terminator). REQUIRES: 0 <= year <= 9999.
void FormatDate(const CivilDay& d, char* out);
// Writes "HH:MM" (exactly 5 characters). REQUIRES: 0 <= minute_of_day < 1440.
void FormatTimeOfDay(int minute_of_day, char* out);

enum class WeekendRule { kPreviousFriday, kNextMonday };

// The day (since the epoch) on which a payment due on `due_day` of the given month is made:
// due_day is clamped to the month's length (31 means "the last day"), then moved off a weekend
// by `rule`. The result may fall in the neighbouring month.
int64_t MonthlyPaymentDay(int year, int month, int due_day, WeekendRule rule);

// Whether a payment due monthly on `due_day` is made on `today` (checks the months around it,
// since weekend moves cross month ends).
bool IsMonthlyPaymentDay(int64_t today, const CivilDay& civil, int due_day, WeekendRule rule);

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_CALENDAR_H_
