#include "vigil/core/currency.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace vigil {
namespace {

struct CurrencyEntry {
  char code[4];
  int8_t exponent;
};

// ISO 4217 active codes (list one, 2022 amendments) with their minor units, then vigil's non-ISO
// assets. Kept sorted by code: looked up by binary search.
constexpr CurrencyEntry kCurrencies[] = {
    {"AED", 2}, {"AFN", 2}, {"ALL", 2}, {"AMD", 2}, {"ANG", 2}, {"AOA", 2}, {"ARS", 2},
    {"AUD", 2}, {"AWG", 2}, {"AZN", 2}, {"BAM", 2}, {"BBD", 2}, {"BDT", 2}, {"BGN", 2},
    {"BHD", 3}, {"BIF", 0}, {"BMD", 2}, {"BND", 2}, {"BOB", 2}, {"BOV", 2}, {"BRL", 2},
    {"BSD", 2}, {"BTN", 2}, {"BWP", 2}, {"BYN", 2}, {"BZD", 2}, {"CAD", 2}, {"CDF", 2},
    {"CHE", 2}, {"CHF", 2}, {"CHW", 2}, {"CLF", 4}, {"CLP", 0}, {"CNY", 2}, {"COP", 2},
    {"COU", 2}, {"CRC", 2}, {"CUC", 2}, {"CUP", 2}, {"CVE", 2}, {"CZK", 2}, {"DJF", 0},
    {"DKK", 2}, {"DOP", 2}, {"DZD", 2}, {"EGP", 2}, {"ERN", 2}, {"ETB", 2}, {"EUR", 2},
    {"FJD", 2}, {"FKP", 2}, {"GBP", 2}, {"GEL", 2}, {"GHS", 2}, {"GIP", 2}, {"GMD", 2},
    {"GNF", 0}, {"GTQ", 2}, {"GYD", 2}, {"HKD", 2}, {"HNL", 2}, {"HRK", 2}, {"HTG", 2},
    {"HUF", 2}, {"IDR", 2}, {"ILS", 2}, {"INR", 2}, {"IQD", 3}, {"IRR", 2}, {"ISK", 0},
    {"JMD", 2}, {"JOD", 3}, {"JPY", 0}, {"KES", 2}, {"KGS", 2}, {"KHR", 2}, {"KMF", 0},
    {"KPW", 2}, {"KRW", 0}, {"KWD", 3}, {"KYD", 2}, {"KZT", 2}, {"LAK", 2}, {"LBP", 2},
    {"LKR", 2}, {"LRD", 2}, {"LSL", 2}, {"LYD", 3}, {"MAD", 2}, {"MDL", 2}, {"MGA", 2},
    {"MKD", 2}, {"MMK", 2}, {"MNT", 2}, {"MOP", 2}, {"MRU", 2}, {"MUR", 2}, {"MVR", 2},
    {"MWK", 2}, {"MXN", 2}, {"MXV", 2}, {"MYR", 2}, {"MZN", 2}, {"NAD", 2}, {"NGN", 2},
    {"NIO", 2}, {"NOK", 2}, {"NPR", 2}, {"NZD", 2}, {"OMR", 3}, {"PAB", 2}, {"PEN", 2},
    {"PGK", 2}, {"PHP", 2}, {"PKR", 2}, {"PLN", 2}, {"PYG", 0}, {"QAR", 2}, {"RON", 2},
    {"RSD", 2}, {"RUB", 2}, {"RWF", 0}, {"SAR", 2}, {"SBD", 2}, {"SCR", 2}, {"SDG", 2},
    {"SEK", 2}, {"SGD", 2}, {"SHP", 2}, {"SLE", 2}, {"SLL", 2}, {"SOS", 2}, {"SRD", 2},
    {"SSP", 2}, {"STN", 2}, {"SVC", 2}, {"SYP", 2}, {"SZL", 2}, {"THB", 2}, {"TJS", 2},
    {"TMT", 2}, {"TND", 3}, {"TOP", 2}, {"TRY", 2}, {"TTD", 2}, {"TWD", 2}, {"TZS", 2},
    {"UAH", 2}, {"UGX", 0}, {"USD", 2}, {"USN", 2}, {"UYI", 0}, {"UYU", 2}, {"UYW", 4},
    {"UZS", 2}, {"VED", 2}, {"VES", 2}, {"VND", 0}, {"VUV", 0}, {"WST", 2}, {"XAF", 0},
    {"XBT", -1}, {"XCD", 2}, {"XOF", 0}, {"XPF", 0}, {"YER", 2}, {"ZAR", 2}, {"ZMW", 2},
    {"ZWL", 2},
};

// The 15 currency names of the IBM AMLworld datasets.
constexpr std::pair<absl::string_view, absl::string_view> kAmlworldNames[] = {
    {"Australian Dollar", "AUD"}, {"Bitcoin", "XBT"},      {"Brazil Real", "BRL"},
    {"Canadian Dollar", "CAD"},   {"Euro", "EUR"},         {"Mexican Peso", "MXN"},
    {"Ruble", "RUB"},             {"Rupee", "INR"},        {"Saudi Riyal", "SAR"},
    {"Shekel", "ILS"},            {"Swiss Franc", "CHF"},  {"UK Pound", "GBP"},
    {"US Dollar", "USD"},         {"Yen", "JPY"},          {"Yuan", "CNY"},
};

constexpr uint32_t Pack(absl::string_view code) {
  return static_cast<uint32_t>(static_cast<unsigned char>(code[0])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(code[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(code[2]));
}

// The packed code of an entry, from its three characters (no string_view: no strlen on the
// lookup path, which every parsed amount takes).
constexpr uint32_t PackEntry(const CurrencyEntry& e) {
  return static_cast<uint32_t>(static_cast<unsigned char>(e.code[0])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(e.code[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(e.code[2]));
}

const CurrencyEntry* Find(uint32_t packed) {
  const auto* it = std::lower_bound(
      std::begin(kCurrencies), std::end(kCurrencies), packed,
      [](const CurrencyEntry& e, uint32_t p) { return PackEntry(e) < p; });
  if (it == std::end(kCurrencies) || PackEntry(*it) != packed) return nullptr;
  return it;
}

}  // namespace

absl::StatusOr<Currency> Currency::FromCode(absl::string_view code) {
  if (code.size() != 3 || !std::all_of(code.begin(), code.end(),
                                       [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("currency '", code, "' is not a three-letter upper-case ISO 4217 code"));
  }
  const uint32_t packed = Pack(code);
  if (Find(packed) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown currency code '", code, "'"));
  }
  return Currency(packed);
}

absl::StatusOr<Currency> Currency::FromAmlworldName(absl::string_view name) {
  for (const auto& [aml_name, code] : kAmlworldNames) {
    if (aml_name == name) return Currency(Pack(code));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown AMLworld currency name '", name, "'"));
}

std::string Currency::code() const {
  if (packed_ == 0) return "";
  return {static_cast<char>(packed_ >> 16), static_cast<char>(packed_ >> 8),
          static_cast<char>(packed_)};
}

int Currency::iso_exponent() const {
  const CurrencyEntry* e = Find(packed_);
  return e == nullptr ? -1 : e->exponent;
}

absl::string_view AmlworldCurrencyName(Currency c) {
  for (const auto& [aml_name, code] : kAmlworldNames) {
    if (Pack(code) == c.packed()) return aml_name;
  }
  return {};
}

}  // namespace vigil
