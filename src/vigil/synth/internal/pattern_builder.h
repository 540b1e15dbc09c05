// PatternBuilder: draws one laundering attempt of a given typology as labelled payments between
// accounts of the Population's launderer pool (and, for PASS-THROUGH, a recruited mule).
//
// Each Build() appends the attempt's rows with `minute` counted from the attempt's first payment
// (>= 0); the generator then places the attempt in time (and compresses it if it would run past
// the end of the stream). Along every money path times are non-decreasing: an account pays on
// only after it has been paid. Amounts are drawn in USD and written in the payer's currency
// (converted for a payee in another currency); a Bitcoin attempt pays in Bitcoin throughout.
//
// The parameters below are the model; docs/generator.md describes each typology with them.
//
// Thread safety: Build() is const and safe for concurrent use with distinct Rngs and row vectors.
#ifndef VIGIL_SYNTH_INTERNAL_PATTERN_BUILDER_H_
#define VIGIL_SYNTH_INTERNAL_PATTERN_BUILDER_H_

#include <cstdint>
#include <vector>

#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/population.h"
#include "vigil/synth/internal/rng.h"
#include "vigil/synth/internal/synth_row.h"
#include "vigil/synth/typology.h"

namespace vigil::synth::internal {

// Share of an attempt's participants drawn from the launderers banking in the same currency area
// as its first participant (the rest from the whole pool).
inline constexpr double kLocalParticipantShare = 0.8;
// FAN-OUT / FAN-IN: one account pays (is paid by) this many distinct accounts.
inline constexpr int kFanMinDegree = 4;
inline constexpr int kFanMaxDegree = 16;
// CYCLE: A -> B -> ... -> A through this many distinct accounts (= payments); each hop keeps
// 95-99% of the amount, after a delay of 30 minutes to 4 days (log-normal, median 10 h).
inline constexpr int kCycleMinHops = 3;
inline constexpr int kCycleMaxHops = 8;
// SCATTER-GATHER: intermediaries between source and destination. GATHER-SCATTER: payers into
// the hub and payees out of it, each side drawn separately.
inline constexpr int kScatterMinWidth = 4;
inline constexpr int kScatterMaxWidth = 12;
inline constexpr int kGatherMinWidth = 4;
inline constexpr int kGatherMaxWidth = 10;
// BIPARTITE: each side's size; STACK: layers (each a BIPARTITE step to the next) and layer size.
inline constexpr int kBipartiteMinSide = 2;
inline constexpr int kBipartiteMaxSide = 6;
inline constexpr int kStackMinLayers = 3;
inline constexpr int kStackMaxLayers = 4;
inline constexpr int kStackMinLayerSize = 2;
inline constexpr int kStackMaxLayerSize = 5;
// STRUCTURING: payments, each in [kStructuringLow, kStructuringHigh) of the reporting threshold
// (in USD terms), all within one or two days.
inline constexpr int kStructuringMinPayments = 3;
inline constexpr int kStructuringMaxPayments = 10;
inline constexpr double kStructuringLow = 0.80;
inline constexpr double kStructuringHigh = 0.999;
// PASS-THROUGH: payments into the mule within 6 hours, then payments out, each within
// kPassThroughMaxHoldMinutes of the last one in, totalling 92-99% of what came in.
inline constexpr int kPassThroughMaxIn = 4;
inline constexpr int kPassThroughMaxOut = 3;
inline constexpr int kPassThroughMaxHoldMinutes = 12 * 60;

class PatternBuilder {
 public:
  // "*population" and "*fx" must outlive this object. REQUIRES:
  // population->launderers().size() >= kMinLaunderers, structuring_threshold_usd > 0.
  PatternBuilder(const Population* population, const FxConverter* fx,
                 double structuring_threshold_usd);

  // Appends one attempt of `typology` (not kNone) to *rows; returns the number of rows added.
  int Build(Typology typology, Rng& rng, std::vector<SynthRow>* rows) const;

 private:
  struct Attempt;  // per-call state: format, typology, output

  void FanOut(Attempt& a, Rng& rng) const;
  void FanIn(Attempt& a, Rng& rng) const;
  void Cycle(Attempt& a, Rng& rng) const;
  void ScatterGather(Attempt& a, Rng& rng) const;
  void GatherScatter(Attempt& a, Rng& rng) const;
  void Bipartite(Attempt& a, Rng& rng) const;
  void Stack(Attempt& a, Rng& rng) const;
  void Structuring(Attempt& a, Rng& rng) const;
  void PassThrough(Attempt& a, Rng& rng) const;

  // Draws `n` distinct launderers.
  std::vector<int32_t> Launderers(int n, Rng& rng) const;
  // Edges of a random bipartite graph in which every account of both sides takes part.
  static std::vector<std::pair<int, int>> BipartiteEdges(int left, int right, Rng& rng);
  void Pay(Attempt& a, int32_t from, int32_t to, double usd, double minute,
           PaymentFormat format) const;

  const Population& population_;
  const FxConverter& fx_;
  double threshold_usd_;
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_PATTERN_BUILDER_H_
