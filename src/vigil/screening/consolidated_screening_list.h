// The US Consolidated Screening List (CSL) in the CSV form trade.gov publishes: one row per
// entry of eleven export-control and sanctions lists (OFAC's SDN and non-SDN lists, BIS's
// Entity and Denied Persons lists, State's ISN and AECA lists, ...).
//
// Header: source, entity_number, type, programs, name, title, addresses, ..., alt_names,
// citizenships, dates_of_birth, nationalities, places_of_birth, source_information_url, ids;
// the current form adds a first column "_id". Columns are found by name, in any order.
// Mapping:
//  - id: "_id" when present; else entity_number; else "line-<N>" (the row's line). An id that
//    repeats gets "@line-<N>" appended (entity numbers are unique only within one source).
//  - name, trimmed; aliases: alt_names split on ';'.
//  - type: Individual, Entity, Vessel, Aircraft (case-insensitive), else unknown.
//  - list: the row's source ("Specially Designated Nationals (SDN) - Treasury Department").
//  - programs: split on ';'. countries: nationalities and citizenships, split on ';' and ','.
//  - identifiers: the number of each ';'-separated "country, number, kind" in ids.
// The Watchlist is named after the file; its version is ContentVersion() of the file's bytes.
#ifndef VIGIL_SCREENING_CONSOLIDATED_SCREENING_LIST_H_
#define VIGIL_SCREENING_CONSOLIDATED_SCREENING_LIST_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/screening/watchlist.h"

namespace vigil::screening {

// Whether "first_line" (a CSV header) is the CSL's: it names source, name and alt_names.
bool LooksLikeConsolidatedScreeningList(std::string_view first_line);

// Errors name the file, line and field: "csl.csv:12: field name: empty".
absl::StatusOr<Watchlist> ParseConsolidatedScreeningList(std::string_view text, std::string name);
absl::StatusOr<Watchlist> LoadConsolidatedScreeningList(const std::string& path);

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_CONSOLIDATED_SCREENING_LIST_H_
