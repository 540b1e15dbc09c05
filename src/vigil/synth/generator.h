// Synthetic transaction stream generator (`vigil gen`): a deterministic, labelled stream of
// payments in the IBM AMLworld CSV layout, with injected laundering typologies.
//
//   FxRates fx = ...;  // data/fx_rates.csv
//   std::ofstream out("tx.csv", std::ios::binary);
//   VIGIL_ASSIGN_OR_RETURN(GeneratorStats stats,
//                          GenerateTransactions({.accounts = 100000, .days = 20, .seed = 7}, fx,
//                                               out));
//
// Output: the header kGeneratorCsvHeader, then one line per payment:
//   Timestamp        "YYYY/MM/DD HH:MM", UTC, minute resolution (as AMLworld)
//   From Bank        the payer's bank id, 6 decimal digits ("014433")
//   Account          the payer's account id, 9 upper-case hex digits ("8032DF2A0")
//   To Bank, Account the payee's, likewise (equal to the payer's for Reinvestment)
//   Amount Received, Receiving Currency, Amount Paid, Payment Currency
//                    amounts with 2 decimals (Bitcoin 6), currencies by AMLworld name ("US
//                    Dollar", "Yuan"); received differs from paid only for a cross-currency
//                    payment, converted at the FX table's rates
//   Payment Format   ACH, Bitcoin, Cash, Cheque, Credit Card, Reinvestment or Wire
//   Is Laundering    1 for rows of an injected laundering attempt, else 0
//   Typology         the attempt's typology (TypologyName), empty for normal traffic
//
// Order: rows are sorted by timestamp; rows with the same minute keep generation order (normal
// traffic of the day first, then laundering rows). Laundering attempts span hours to days, so
// their rows are interleaved with normal traffic, not written as blocks.
//
// Determinism: the same options, FX table and build of vigil give the same bytes; another seed
// gives another stream. See docs/generator.md for the model and its parameters.
//
// Thread safety: GenerateTransactions is reentrant (no shared state); it uses one thread.
#ifndef VIGIL_SYNTH_GENERATOR_H_
#define VIGIL_SYNTH_GENERATOR_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/common/clock.h"
#include "vigil/core/fx_rates.h"
#include "vigil/synth/typology.h"

namespace vigil::synth {

inline constexpr absl::string_view kGeneratorCsvHeader =
    "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,"
    "Amount Paid,Payment Currency,Payment Format,Is Laundering,Typology";

struct GeneratorOptions {
  // Accounts in the population, in [100, 20,000,000] (about 150 bytes of memory each). The stream
  // has about 0.5 rows per account per day (individuals 85%, companies 10%, merchants 5%), so
  // 100,000 accounts over 20 days give about 1 million rows. Default 10,000.
  int64_t accounts = 10000;

  // Length of the stream in days, in [1, 3650]; timestamps lie in [start, start + days).
  // Default 30.
  int days = 30;

  // Seeds every random choice (population, traffic, laundering). Default 1.
  uint64_t seed = 1;

  // Share of ROWS that are laundering (Is Laundering = 1), in [0, 0.5]. The generator injects
  // attempts until their rows reach this share of all rows (exact to within about one attempt's
  // rows). Default 0.001, AMLworld's HI datasets' share.
  double laundering_rate = 0.001;

  // First day of the stream, 00:00 UTC; must be a whole day (midnight UTC). Default
  // 2022-09-01T00:00Z, the first day of AMLworld HI-Small.
  UtcTime start = std::chrono::sys_days(std::chrono::year(2022) / 9 / 1);

  // The reporting threshold that STRUCTURING payments stay just under: each is in [80%, 99.9%)
  // of it, in this currency's terms converted through the FX table. Default 10,000 USD (the US
  // currency transaction report); China's large-value cash report would be 50,000 CNY.
  double structuring_threshold = 10000.0;
  std::string structuring_threshold_currency = "USD";
};

struct GeneratorStats {
  int64_t rows = 0;  // data rows, header excluded
  int64_t laundering_rows = 0;
  std::array<int64_t, kNumTypologies> rows_by_typology{};      // indexed by TypologyIndex
  std::array<int64_t, kNumTypologies> attempts_by_typology{};  // laundering attempts injected
  int64_t bytes = 0;                                           // header included
};

// One line: "1000432 rows, 1001 laundering (FAN-OUT 118, FAN-IN 120, ...)".
std::string FormatGeneratorStats(const GeneratorStats& stats);

// Writes the stream to `out` (binary mode recommended: lines end in '\n').
// Errors: kInvalidArgument for options out of range, an FX table without USD or without the
// structuring threshold's currency; kUnavailable when writing to `out` fails (what was written
// before stays written).
absl::StatusOr<GeneratorStats> GenerateTransactions(const GeneratorOptions& options,
                                                    const FxRates& fx_rates, std::ostream& out);

}  // namespace vigil::synth

#endif  // VIGIL_SYNTH_GENERATOR_H_
