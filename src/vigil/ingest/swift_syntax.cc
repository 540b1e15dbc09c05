#include "vigil/ingest/swift_syntax.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsUpperAlnum(char c) { return IsDigit(c) || IsUpper(c); }

constexpr std::array<bool, 256> SwiftXTable() {
  std::array<bool, 256> t{};
  for (char c = 'a'; c <= 'z'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c = 'A'; c <= 'Z'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = true;
  for (char c : std::string_view("/-?:().,'+ \r\n")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kSwiftX = SwiftXTable();

// IBAN lengths of the SWIFT IBAN registry, by country.
struct IbanLength {
  char country[3];
  int length;
};
constexpr IbanLength kIbanLengths[] = {
    {"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16},
    {"BG", 22}, {"BH", 22}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22}, {"CY", 28},
    {"CZ", 24}, {"DE", 22}, {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24},
    {"FI", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18},
    {"GR", 27}, {"GT", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23},
    {"IS", 26}, {"IT", 27}, {"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32},
    {"LI", 21}, {"LT", 20}, {"LU", 20}, {"LV", 21}, {"MC", 27}, {"MD", 24}, {"ME", 22},
    {"MK", 19}, {"MR", 27}, {"MT", 31}, {"MU", 30}, {"NL", 18}, {"NO", 15}, {"PK", 24},
    {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22}, {"SA", 24},
    {"SC", 31}, {"SE", 24}, {"SI", 19}, {"SK", 24}, {"SM", 27}, {"ST", 25}, {"SV", 28},
    {"TL", 23}, {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20},
};

int RegistryLength(std::string_view country) {
  for (const IbanLength& l : kIbanLengths) {
    if (country == std::string_view(l.country, 2)) return l.length;
  }
  return 0;
}

// ISO 7064 mod 97-10 over the rearranged IBAN (country and check digits moved to the end,
// letters as 10..35), computed piecewise. REQUIRES: upper-case letters and digits only.
uint32_t IbanRemainder(std::string_view iban) {
  uint32_t remainder = 0;
  const auto feed = [&remainder](char c) {
    if (IsDigit(c)) {
      remainder = (remainder * 10 + static_cast<uint32_t>(c - '0')) % 97;
    } else {
      remainder = (remainder * 100 + static_cast<uint32_t>(c - 'A' + 10)) % 97;
    }
  };
  for (char c : iban.substr(4)) feed(c);
  for (char c : iban.substr(0, 4)) feed(c);
  return remainder;
}

bool IsLeap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

absl::Status CheckDay(int year, int month, int day, std::string_view text) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) {
    return absl::InvalidArgumentError(absl::StrCat("date \"", ToAbsl(text), "\": no month ", month));
  }
  const int days = kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0);
  if (day < 1 || day > days) {
    return absl::InvalidArgumentError(absl::StrCat("date \"", ToAbsl(text), "\": month ", month,
                                                   " of ", year, " has no day ", day));
  }
  return absl::OkStatus();
}

int Digits(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

}  // namespace

size_t FindOutsideSwiftX(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!kSwiftX[static_cast<unsigned char>(text[i])]) return i;
  }
  return std::string_view::npos;
}

absl::Status CheckBic(std::string_view bic) {
  if (bic.size() != 8 && bic.size() != 11) {
    return absl::InvalidArgumentError(
        absl::StrCat("BIC \"", ToAbsl(bic), "\" has ", bic.size(), " characters, not 8 or 11"));
  }
  for (size_t i = 0; i < bic.size(); ++i) {
    const bool ok = i < 6 ? IsUpper(bic[i]) : IsUpperAlnum(bic[i]);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BIC \"", ToAbsl(bic), "\": character ", i + 1, " must be ",
          i < 4 ? "a letter (institution code)" : i < 6 ? "a letter (country code)"
                                                        : "a letter or digit",
          " in upper case"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIban(std::string_view iban) {
  if (iban.size() < 15 || iban.size() > 34) {
    return absl::InvalidArgumentError(absl::StrCat("IBAN \"", ToAbsl(iban), "\" has ",
                                                   iban.size(), " characters, not 15 to 34"));
  }
  if (!IsUpper(iban[0]) || !IsUpper(iban[1]) || !IsDigit(iban[2]) || !IsDigit(iban[3])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IBAN \"", ToAbsl(iban), "\" must start with a country code and two check digits"));
  }
  for (char c : iban.substr(4)) {
    if (!IsUpperAlnum(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("IBAN \"", ToAbsl(iban), "\" holds '", std::string(1, c),
                       "': only upper-case letters and digits (electronic format)"));
    }
  }
  if (const int length = RegistryLength(iban.substr(0, 2));
      length != 0 && static_cast<size_t>(length) != iban.size()) {
    return absl::InvalidArgumentError(absl::StrCat("IBAN \"", ToAbsl(iban), "\": an IBAN of ",
                                                   ToAbsl(iban.substr(0, 2)), " has ", length,
                                                   " characters, not ", iban.size()));
  }
  if (const uint32_t remainder = IbanRemainder(iban); remainder != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("IBAN \"", ToAbsl(iban), "\": the check digits ", ToAbsl(iban.substr(2, 2)),
                     " are wrong (mod 97 gives ", remainder, ", not 1)"));
  }
  return absl::OkStatus();
}

bool IsValidIban(std::string_view account) {
  // The checks of CheckIban without building its messages: this runs on every account.
  if (account.size() < 15 || account.size() > 34 || !IsUpper(account[0]) || !IsUpper(account[1]) ||
      !IsDigit(account[2]) || !IsDigit(account[3])) {
    return false;
  }
  for (char c : account.substr(4)) {
    if (!IsUpperAlnum(c)) return false;
  }
  if (const int length = RegistryLength(account.substr(0, 2));
      length != 0 && static_cast<size_t>(length) != account.size()) {
    return false;
  }
  return IbanRemainder(account) == 1;
}

absl::StatusOr<Money> ParseMtAmount(std::string_view text, Currency currency) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("amount \"", ToAbsl(text), "\": ", ToAbsl(why)));
  };
  if (text.empty() || text.size() > 15) return bad("must be 1 to 15 characters with the comma");
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos) return bad("needs a decimal comma (\"1000,\" or \"12,50\")");
  if (comma == 0) return bad("needs at least one digit before the comma");
  for (size_t i = 0; i < text.size(); ++i) {
    if (i != comma && !IsDigit(text[i])) return bad("only digits and one decimal comma");
  }
  const size_t decimals = text.size() - comma - 1;
  const int exponent = currency.iso_exponent();
  if (exponent >= 0 && decimals > static_cast<size_t>(exponent)) {
    return bad(absl::StrCat(currency.code(), " has ", exponent, " decimals, the amount ",
                            decimals));
  }
  // "1000," has no decimals: Money::Parse wants digits after a mark.
  const std::string_view number = decimals == 0 ? text.substr(0, comma) : text;
  absl::StatusOr<Money> money = Money::Parse(ToAbsl(number), currency, Money::DecimalMark::kComma);
  if (!money.ok()) return bad(ToStd(money.status().message()));
  return money;
}

absl::StatusOr<std::string> ParseMtDate(std::string_view yymmdd) {
  if (yymmdd.size() != 6 || !std::all_of(yymmdd.begin(), yymmdd.end(), IsDigit)) {
    return absl::InvalidArgumentError(
        absl::StrCat("date \"", ToAbsl(yymmdd), "\" is not YYMMDD"));
  }
  const int yy = Digits(yymmdd.substr(0, 2));
  const int year = yy < 80 ? 2000 + yy : 1900 + yy;
  const int month = Digits(yymmdd.substr(2, 2));
  const int day = Digits(yymmdd.substr(4, 2));
  if (absl::Status s = CheckDay(year, month, day, yymmdd); !s.ok()) return s;
  // yymmdd is digits: the ISO date is "19" or "20", then the digits with dashes between.
  const char out[10] = {yy < 80 ? '2' : '1', yy < 80 ? '0' : '9', yymmdd[0], yymmdd[1], '-',
                        yymmdd[2], yymmdd[3], '-', yymmdd[4], yymmdd[5]};
  return std::string(out, sizeof(out));
}

absl::Status CheckIsoDate(std::string_view date) {
  const bool shaped = date.size() == 10 && date[4] == '-' && date[7] == '-' &&
                      std::all_of(date.begin(), date.begin() + 4, IsDigit) &&
                      IsDigit(date[5]) && IsDigit(date[6]) && IsDigit(date[8]) &&
                      IsDigit(date[9]);
  if (!shaped) {
    return absl::InvalidArgumentError(absl::StrCat("date \"", ToAbsl(date), "\" is not YYYY-MM-DD"));
  }
  return CheckDay(Digits(date.substr(0, 4)), Digits(date.substr(5, 2)), Digits(date.substr(8, 2)),
                  date);
}

absl::StatusOr<std::string> NormalizeUetr(std::string_view uetr) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("UETR \"", ToAbsl(uetr), "\": ", ToAbsl(why)));
  };
  if (uetr.size() != 36) return bad("must be a UUID of 36 characters (8-4-4-4-12 hexadecimal digits)");
  std::string out(uetr);
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return bad("must be a UUID: 8-4-4-4-12 hexadecimal digits separated by '-'");
      continue;
    }
    if (c >= 'A' && c <= 'F') {
      out[i] = static_cast<char>(c - 'A' + 'a');
    } else if (!IsDigit(c) && !(c >= 'a' && c <= 'f')) {
      return bad(absl::StrCat("'", std::string(1, c), "' at position ", i + 1,
                              " is not a hexadecimal digit"));
    }
  }
  return out;
}

}  // namespace vigil
