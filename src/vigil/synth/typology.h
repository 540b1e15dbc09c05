// Typology: the laundering patterns that `vigil gen` injects, by the names that the generator's
// CSV "Typology" column, the features, the rules and the evaluation reports share (DOMAIN.md).
//
//   absl::string_view name = TypologyName(Typology::kFanOut);   // "FAN-OUT"
//   absl::StatusOr<Typology> t = ParseTypology("SCATTER-GATHER");
//
// kNone labels normal traffic: its name is empty, as the Typology column is for such rows.
//
// Thread safety: stateless functions.
#ifndef VIGIL_SYNTH_TYPOLOGY_H_
#define VIGIL_SYNTH_TYPOLOGY_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace vigil::synth {

enum class Typology : uint8_t {
  kNone = 0,
  kFanOut,
  kFanIn,
  kCycle,
  kScatterGather,
  kGatherScatter,
  kBipartite,
  kStack,
  kStructuring,
  kPassThrough,
};

// Number of laundering typologies (kNone excluded).
inline constexpr int kNumTypologies = 9;

// Every laundering typology, in enum order. TypologyIndex(kAllTypologies[i]) == i.
inline constexpr std::array<Typology, kNumTypologies> kAllTypologies = {
    Typology::kFanOut,        Typology::kFanIn,         Typology::kCycle,
    Typology::kScatterGather, Typology::kGatherScatter, Typology::kBipartite,
    Typology::kStack,         Typology::kStructuring,   Typology::kPassThrough,
};

// Position of a laundering typology in kAllTypologies. REQUIRES: t != kNone.
inline int TypologyIndex(Typology t) { return static_cast<int>(t) - 1; }

// "FAN-OUT", "FAN-IN", "CYCLE", "SCATTER-GATHER", "GATHER-SCATTER", "BIPARTITE", "STACK",
// "STRUCTURING", "PASS-THROUGH"; "" for kNone.
absl::string_view TypologyName(Typology t);

// The inverse of TypologyName, "" included (kNone). Other text is kInvalidArgument.
absl::StatusOr<Typology> ParseTypology(absl::string_view name);

}  // namespace vigil::synth

#endif  // VIGIL_SYNTH_TYPOLOGY_H_
