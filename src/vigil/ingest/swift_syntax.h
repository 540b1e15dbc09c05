// The value syntax SWIFT MT fields and ISO 20022 elements share: the SWIFT X character set,
// BICs, IBANs (with their check digits), MT amounts ("7138,40") and dates (YYMMDD).
//
// Each check returns OK or kInvalidArgument with the reason; the caller adds where the value
// was (block, tag and line, or the XPath).
#ifndef VIGIL_INGEST_SWIFT_SYNTAX_H_
#define VIGIL_INGEST_SWIFT_SYNTAX_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"

namespace vigil {

// The SWIFT X character set: a-z A-Z 0-9 / - ? : ( ) . , ' + space, and line breaks. Returns
// the offset of the first character outside it, or npos.
size_t FindOutsideSwiftX(std::string_view text);

// A BIC (ISO 9362): 4 letters (institution), 2 letters (country), 2 letters or digits
// (location), and optionally 3 letters or digits (branch): 8 or 11 characters, upper case.
absl::Status CheckBic(std::string_view bic);

// An IBAN (ISO 13616): country (2 letters), check digits (2), then the basic bank account
// number (letters and digits), 15 to 34 characters in all, the registry's length for the
// countries it lists, and the check digits right (mod 97 = 1). Upper case, no spaces: the
// electronic format.
absl::Status CheckIban(std::string_view iban);
// True when "account" looks like an IBAN (two letters, two digits) and passes CheckIban.
bool IsValidIban(std::string_view account);

// An MT amount: digits, one decimal comma (required, "1000," is 1000), at most 15 characters
// with the comma, at most as many decimals as the currency's ISO 4217 exponent.
absl::StatusOr<Money> ParseMtAmount(std::string_view text, Currency currency);

// An MT date (YYMMDD; years 00 to 79 are 2000 to 2079, 80 to 99 are 1980 to 1999, as SWIFT
// reads them) as "YYYY-MM-DD", the day checked against the month and leap years.
absl::StatusOr<std::string> ParseMtDate(std::string_view yymmdd);

// An ISO date (YYYY-MM-DD) checked the same way; returned as given.
absl::Status CheckIsoDate(std::string_view date);

// A UETR (unique end-to-end transaction reference, MT block 3 field 121, ISO 20022 PmtId/UETR):
// a UUID in its 36-character form, 8-4-4-4-12 hexadecimal digits, either case. The network asks
// for version 4; the version and variant digits are not checked, so that test and migration
// traffic with other UUIDs is still screened. Returns it in lower case.
absl::StatusOr<std::string> NormalizeUetr(std::string_view uetr);

}  // namespace vigil

#endif  // VIGIL_INGEST_SWIFT_SYNTAX_H_
