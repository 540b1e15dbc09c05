// Loads the OFAC Specially Designated Nationals list from its legacy CSV files
// (https://ofac.treasury.gov/sdn-list-data-formats-data-schemas):
//
//   sdn.csv           ent_num,SDN_Name,SDN_Type,Program,Title,Call_Sign,Vess_type,Tonnage,GRT,
//                     Vess_flag,Vess_owner,Remarks
//   alt.csv           ent_num,alt_num,alt_type,alt_name,alt_remarks          -> aliases
//   add.csv           ent_num,add_num,address,city/state/postal,country,add_remarks -> countries
//   sdn_comments.csv  ent_num,remarks overflow (optional)                    -> identifiers
//
// No header lines; "-0-" (with or without trailing spaces) is an empty field; fields are trimmed
// of surrounding spaces; CSV dialect as CsvRecordReader. Entry ids are the ent_nums; every entry
// has list "OFAC SDN". SDN_Type "individual", "vessel", "aircraft" map to those types, an empty
// SDN_Type to kEntity. Program "SDGT] [SDT" is the programs {"SDGT", "SDT"}.
//
// Errors are kInvalidArgument "<file>:<line>: field <name>: <reason>" (or, for a record with the
// wrong number of fields, "<file>:<line>: expected N fields (...), got M"): ent_num not a
// number or repeated in sdn.csv, empty SDN_Name or alt_name, unknown SDN_Type, alt.csv or
// add.csv records for an ent_num that sdn.csv lacks. sdn_comments.csv records for an ent_num that
// sdn.csv lacks are skipped: OFAC publishes that file apart, and it may be newer.
//
// Thread safety: pure functions.
#ifndef VIGIL_SCREENING_OFAC_SDN_H_
#define VIGIL_SCREENING_OFAC_SDN_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/screening/watchlist.h"

namespace vigil::screening {

// Name of the Watchlist and list of every entry LoadOfacSdn returns.
inline constexpr std::string_view kOfacSdnListName = "OFAC SDN";

// Reads dir/sdn.csv (required), and dir/alt.csv (aliases), dir/add.csv (addresses: the
// entries' countries) and dir/sdn_comments.csv, each if present and not empty. kNotFound when
// sdn.csv cannot be opened.
//
// version() is ContentVersion() of the sha256sum-style manifest of the files read, in that
// order: "<sha256 hex>  sdn.csv\n", then, for each of alt.csv, add.csv and sdn_comments.csv
// that was read, "<sha256 hex>  <file>\n"; so it equals, with "sha256:" before it, the output
// of `sha256sum sdn.csv [alt.csv] [add.csv] [sdn_comments.csv] | sha256sum` run in dir.
absl::StatusOr<Watchlist> LoadOfacSdn(const std::string& dir);

// The same from the files' contents; an empty "alt", "add" or "comments" is taken as no such
// file.
absl::StatusOr<Watchlist> LoadOfacSdnFromStrings(std::string_view sdn, std::string_view alt,
                                                 std::string_view add,
                                                 std::string_view comments = {});

// Identifiers in an SDN Remarks text (Remarks and its sdn_comments.csv continuation). Remarks
// are ';'-separated items; an item, after an optional "alt. ", that starts with one of these
// labels and a space gives an identifier:
//
//   Passport, National ID No., Registration ID, Registration Number, Tax ID No., Cedula No.,
//   Identification Number, Vessel Registration Identification (value "IMO 9187629"),
//   SWIFT/BIC (kept only if 8 or 11 letters and digits), IBAN (spaces removed; kept only if
//   letters and digits remain)
//
// The value is the text after the label up to " (" (the issuing country), " issued", " expires"
// or the item's end, without a final '.'; values other than BICs and IBANs without a digit
// ("Passport issued 21 Jun 1992") are skipped. Values are returned as given, in order, without
// duplicates. Other items (DOB, POB, nationality, "Linked To", ...) are not identifiers here.
std::vector<std::string> ParseOfacRemarksIdentifiers(std::string_view remarks);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_OFAC_SDN_H_
