#include "vigil/synth/internal/calendar.h"

#include <algorithm>
#include <chrono>

namespace vigil::synth::internal {
namespace {

void Put2(int v, char* out) {
  out[0] = static_cast<char>('0' + v / 10);
  out[1] = static_cast<char>('0' + v % 10);
}

}  // namespace

CivilDay CivilFromDays(int64_t days_since_epoch) {
  using std::chrono::days;
  const std::chrono::sys_days sd{days{days_since_epoch}};
  const std::chrono::year_month_day ymd{sd};
  const std::chrono::year_month_day_last last{ymd.year(), std::chrono::month_day_last{ymd.month()}};
  CivilDay c;
  c.year = static_cast<int>(ymd.year());
  c.month = static_cast<int>(static_cast<unsigned>(ymd.month()));
  c.day = static_cast<int>(static_cast<unsigned>(ymd.day()));
  c.weekday = static_cast<int>(std::chrono::weekday{sd}.iso_encoding());
  c.days_in_month = static_cast<int>(static_cast<unsigned>(last.day()));
  return c;
}

int64_t DaysFromCivil(int year, int month, int day) {
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

void FormatDate(const CivilDay& d, char* out) {
  Put2(d.year / 100, out);
  Put2(d.year % 100, out + 2);
  out[4] = '/';
  Put2(d.month, out + 5);
  out[7] = '/';
  Put2(d.day, out + 8);
}

void FormatTimeOfDay(int minute_of_day, char* out) {
  Put2(minute_of_day / 60, out);
  out[2] = ':';
  Put2(minute_of_day % 60, out + 3);
}

int64_t MonthlyPaymentDay(int year, int month, int due_day, WeekendRule rule) {
  const CivilDay first = CivilFromDays(DaysFromCivil(year, month, 1));
  const int64_t due = DaysFromCivil(year, month, std::clamp(due_day, 1, first.days_in_month));
  const int weekday = CivilFromDays(due).weekday;
  if (weekday < 6) return due;
  if (rule == WeekendRule::kPreviousFriday) return due - (weekday - 5);
  return due + (8 - weekday);
}

bool IsMonthlyPaymentDay(int64_t today, const CivilDay& civil, int due_day, WeekendRule rule) {
  for (int delta = -1; delta <= 1; ++delta) {
    int month = civil.month + delta;
    int year = civil.year;
    if (month == 0) {
      month = 12;
      --year;
    } else if (month == 13) {
      month = 1;
      ++year;
    }
    if (MonthlyPaymentDay(year, month, due_day, rule) == today) return true;
  }
  return false;
}

}  // namespace vigil::synth::internal
