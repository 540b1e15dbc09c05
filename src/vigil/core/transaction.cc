#include "vigil/core/transaction.h"

#include <chrono>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"

namespace vigil {
namespace {

struct FormatNames {
  PaymentFormat format;
  absl::string_view name;
  absl::string_view json_name;
};

constexpr FormatNames kFormats[] = {
    {PaymentFormat::kUnknown, "Unknown", "unknown"},
    {PaymentFormat::kAch, "ACH", "ach"},
    {PaymentFormat::kBitcoin, "Bitcoin", "bitcoin"},
    {PaymentFormat::kCash, "Cash", "cash"},
    {PaymentFormat::kCheque, "Cheque", "cheque"},
    {PaymentFormat::kCreditCard, "Credit Card", "credit_card"},
    {PaymentFormat::kReinvestment, "Reinvestment", "reinvestment"},
    {PaymentFormat::kWire, "Wire", "wire"},
};

bool ParseDigits(absl::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// A PaymentFormat cast from a stored integer code may be out of range; it reads as Unknown
// rather than past the end of kFormats.
const FormatNames& Names(PaymentFormat f) {
  const auto i = static_cast<size_t>(f);
  return i < std::size(kFormats) ? kFormats[i] : kFormats[0];
}

}  // namespace

absl::string_view PaymentFormatName(PaymentFormat f) { return Names(f).name; }
absl::string_view PaymentFormatJsonName(PaymentFormat f) { return Names(f).json_name; }

absl::StatusOr<PaymentFormat> ParsePaymentFormat(absl::string_view name) {
  for (const FormatNames& f : kFormats) {
    if (name == f.name || name == f.json_name) return f.format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown payment format '", name,
      "' (expected one of ach, bitcoin, cash, cheque, credit_card, reinvestment, wire, unknown)"));
}

absl::string_view PriorityName(Priority p) {
  switch (p) {
    case Priority::kP0: return "P0";
    case Priority::kP1: return "P1";
    case Priority::kP2: return "P2";
  }
  return "P1";
}

absl::StatusOr<Priority> ParsePriority(absl::string_view name) {
  if (name == "P0" || name == "p0") return Priority::kP0;
  if (name == "P1" || name == "p1") return Priority::kP1;
  if (name == "P2" || name == "p2") return Priority::kP2;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown priority '", name, "' (expected P0, P1 or P2)"));
}

namespace {
constexpr absl::string_view kAgentRoleNames[kNumAgentRoles] = {
    "instructing",          "instructed",         "ordering_institution",
    "senders_correspondent", "receivers_correspondent", "reimbursement",
    "intermediary",         "account_with_institution", "beneficiary_institution"};
}  // namespace

absl::string_view AgentRoleName(AgentRole role) {
  return kAgentRoleNames[static_cast<int>(role)];
}

absl::StatusOr<AgentRole> ParseAgentRole(absl::string_view name) {
  for (int i = 0; i < kNumAgentRoles; ++i) {
    if (kAgentRoleNames[i] == name) return static_cast<AgentRole>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown agent role '", name, "' (", absl::StrJoin(kAgentRoleNames, ", "), ")"));
}

std::string FormatUtc(UtcTime t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd(day);
  const auto tod = t - day;
  const auto h = duration_cast<hours>(tod);
  const auto m = duration_cast<minutes>(tod - h);
  const auto s = duration_cast<seconds>(tod - h - m);
  const auto us = duration_cast<microseconds>(tod - h - m - s);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", static_cast<int>(ymd.year()),
                         static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                         h.count(), m.count(), s.count(), us.count());
}

absl::StatusOr<UtcTime> ParseRfc3339(absl::string_view text) {
  using namespace std::chrono;
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp '", text, "' is not RFC 3339 (", why, ")"));
  };
  int Y, M, D, h, m, s;
  if (!ParseDigits(text, 0, 4, Y) || text.size() < 19 || text[4] != '-' ||
      !ParseDigits(text, 5, 2, M) || text[7] != '-' || !ParseDigits(text, 8, 2, D) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !ParseDigits(text, 11, 2, h) ||
      text[13] != ':' || !ParseDigits(text, 14, 2, m) || text[16] != ':' ||
      !ParseDigits(text, 17, 2, s)) {
    return bad("expected YYYY-MM-DDThh:mm:ss");
  }
  const year_month_day ymd{year(Y), month(static_cast<unsigned>(M)), day(static_cast<unsigned>(D))};
  if (!ymd.ok()) return bad("no such date");
  if (h > 23 || m > 59 || s > 59) return bad("time of day out of range");
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (++digits > 6) return bad("more than 6 fractional digits");
      micros = micros * 10 + (text[pos] - '0');
      ++pos;
    }
    if (digits == 0) return bad("empty fraction");
    for (int i = digits; i < 6; ++i) micros *= 10;
  }
  int64_t offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh, om;
    if (!ParseDigits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !ParseDigits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
      return bad("bad UTC offset");
    }
    offset_minutes = (text[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return bad("missing 'Z' or UTC offset");
  }
  if (pos != text.size()) return bad("trailing characters");
  const UtcTime t = sys_days(ymd) + hours(h) + minutes(m) + seconds(s) + microseconds(micros) -
                    minutes(offset_minutes);
  return t;
}

}  // namespace vigil
