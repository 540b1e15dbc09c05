// AliasTable: draws an index with probability proportional to fixed weights in O(1) (Walker's
// alias method, Vose's construction). The generator uses it for everything weighted: which
// account pays next (activity rates), which payee (popularity), which hour of the day.
//
//   AliasTable hours(kRetailHourWeights);
//   int hour = hours.Sample(rng.Next());
//
// Sample() consumes exactly one 64-bit random word: the high 32 bits pick a column, the low 32
// bits toss its coin. Feeding it a hash instead of an Rng output gives a stable choice per key
// (an account's favourite payees).
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef VIGIL_SYNTH_INTERNAL_ALIAS_TABLE_H_
#define VIGIL_SYNTH_INTERNAL_ALIAS_TABLE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace vigil::synth::internal {

class AliasTable {
 public:
  // An empty table; Sample() must not be called on it.
  AliasTable() = default;
  // REQUIRES: 0 < weights.size() < 2^32, every weight >= 0 and finite, and their sum > 0.
  explicit AliasTable(absl::Span<const double> weights);

  uint32_t size() const { return static_cast<uint32_t>(threshold_.size()); }
  bool empty() const { return threshold_.empty(); }

  // REQUIRES: !empty().
  uint32_t Sample(uint64_t random_bits) const {
    const uint32_t column = static_cast<uint32_t>(((random_bits >> 32) * size()) >> 32);
    const uint32_t coin = static_cast<uint32_t>(random_bits);
    return coin < threshold_[column] ? column : alias_[column];
  }

 private:
  std::vector<uint32_t> threshold_;  // keep the column when coin < threshold (scaled by 2^32)
  std::vector<uint32_t> alias_;
};

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_ALIAS_TABLE_H_
