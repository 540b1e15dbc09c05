#include "vigil/synth/typology.h"

#include "absl/strings/str_cat.h"

namespace vigil::synth {
namespace {

constexpr absl::string_view kNames[kNumTypologies + 1] = {
    "",          "FAN-OUT", "FAN-IN",      "CYCLE",        "SCATTER-GATHER", "GATHER-SCATTER",
    "BIPARTITE", "STACK",   "STRUCTURING", "PASS-THROUGH",
};

}  // namespace

absl::string_view TypologyName(Typology t) {
  const auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : absl::string_view();
}

absl::StatusOr<Typology> ParseTypology(absl::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i] == name) return static_cast<Typology>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown typology '", name,
      "' (expected FAN-OUT, FAN-IN, CYCLE, SCATTER-GATHER, GATHER-SCATTER, BIPARTITE, STACK, "
      "STRUCTURING, PASS-THROUGH or empty)"));
}

}  // namespace vigil::synth
