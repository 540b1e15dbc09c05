// NormalTraffic: draws one day's ordinary (unlabelled) payments from a Population.
//
// Per day and account kind, the number of payments is Poisson with mean
//   (summed activity of the kind) x (weekday factor of the kind),
// and each payment's payer is drawn in proportion to its activity (an account's heavy-tailed
// rate), which is the same in distribution as every account paying at its own Poisson rate but
// costs O(rows), not O(accounts). Weekday factors: individuals 1.0 (Friday 1.05), Saturday 0.65,
// Sunday 0.5; companies Saturday 0.25, Sunday 0.12; merchants Saturday 0.6, Sunday 0.45.
//
// The payer's kind sets the payment-kind mix, the hour-of-day profile (individuals: a retail
// profile peaking 11:00-20:00; companies and merchants: business hours 09:00-17:00; Bitcoin: flat
// with an evening bump) and the log-normal amount (median and sigma per payment kind, in USD,
// converted into the payer's currency). Payees: merchants for card payments, otherwise
// individuals or companies of the payer's currency area, weighted by popularity; 60% of
// payments go to one of the payer's five stable "favourite" payees per payment kind, so the
// graph has repeated edges. Cross-border payments (35% of wires, a few percent of others) pick
// a payee in another country and are converted at the FX table's cross rate. Reinvestment is a
// self-transfer (from == to) and a currency exchange is an ACH self-transfer into another
// currency, both as in AMLworld. On top: monthly salaries (Population::payrolls, paid the Friday
// before a weekend due day) and rents (Population::leases, the Monday after).
//
// The mix, medians and factors are in normal_traffic.cc and docs/generator.md.
//
// Thread safety: externally synchronized (owns an Rng).
#ifndef VIGIL_SYNTH_INTERNAL_NORMAL_TRAFFIC_H_
#define VIGIL_SYNTH_INTERNAL_NORMAL_TRAFFIC_H_

#include <array>
#include <cstdint>
#include <vector>

#include "vigil/synth/internal/alias_table.h"
#include "vigil/synth/internal/calendar.h"
#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/population.h"
#include "vigil/synth/internal/rng.h"
#include "vigil/synth/internal/synth_row.h"

namespace vigil::synth::internal {

// Relative weights of the 24 UTC hours.
enum class HourProfile { kRetail = 0, kBusiness = 1, kAroundTheClock = 2 };
const std::array<double, 24>& HourWeights(HourProfile profile);

class NormalTraffic {
 public:
  // "*population" and "*fx" must outlive this object.
  NormalTraffic(const Population* population, const FxConverter* fx, uint64_t seed);

  // Appends the ordinary payments of run day `day_index` (`epoch_day` days after 1970-01-01) to
  // *rows, minutes counted from the run's start (day 0, 00:00), in no particular order.
  void GenerateDay(int day_index, int64_t epoch_day, std::vector<SynthRow>* rows);

 private:
  void ScheduledPayments(int day_index, int64_t epoch_day, const CivilDay& civil,
                         std::vector<SynthRow>* rows);
  void RandomPayment(int32_t payer, int day_index, std::vector<SynthRow>* rows);
  int32_t PickPayee(int32_t payer, const AccountPool& pool, int payment_kind);
  int32_t PickForeignPayee(int32_t payer, AccountKind kind);
  uint8_t PickOtherCurrency(uint8_t ccy);

  const Population& population_;
  const FxConverter& fx_;
  Rng rng_;
  uint64_t favourite_salt_;
  std::array<AliasTable, 3> hours_;  // by HourProfile
  std::array<AliasTable, kNumAccountKinds> payment_mix_;
  AliasTable fiat_currencies_;  // available non-Bitcoin currencies, by bank share
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_NORMAL_TRAFFIC_H_
