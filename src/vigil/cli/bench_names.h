// Party names for `vigil bench http` with screening on. The bench's synthetic payments carry
// account ids only; screening needs names, so each account gets an ordinary person's or
// company's name from a built-in pool (given names and surnames of several cultures, companies
// as "<Surname> <Trading|Logistics|...> <LLC|Ltd|...>"), chosen by a hash of the account id so
// that an account keeps its name. Every kListedNameEvery-th request instead pays a listed name
// (a list entry's primary name), so that some payments hit.
//
// Thread safety: pure functions of their arguments.
#ifndef VIGIL_CLI_BENCH_NAMES_H_
#define VIGIL_CLI_BENCH_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::cli {

// One request in this many (index 0, 200, 400, ...) has a listed beneficiary: 0.5%, far above
// real hit rates, so that a point of a few seconds still decides some hits (REVIEW/BLOCK with
// screening reasons) besides the clean names.
inline constexpr uint64_t kListedNameEvery = 200;

// The name of the account "account_id": a person ("Priya Haddad") or, for about one account
// in four, a company ("Novikov Logistics GmbH"). The same account id always gives the same
// name, on every platform (FNV-1a, not std::hash).
std::string BenchPartyName(std::string_view account_id);

// The beneficiary name request "index" carries instead of its account's: for index 0, 200,
// 400, ... the listed names in turn (round robin, listed[(index / kListedNameEvery) %
// listed.size()]); nullptr for every other index and when "listed" is empty.
// The returned pointer points into "listed", which must outlive its use.
const std::string* ListedBeneficiaryName(uint64_t index, const std::vector<std::string>& listed);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_BENCH_NAMES_H_
