#include "vigil/synth/internal/alias_table.h"

#include <cmath>

#include "vigil/common/check.h"

namespace vigil::synth::internal {
namespace {

constexpr double kTwo32 = 4294967296.0;

uint32_t ToThreshold(double p) {
  // p in [0, 1]; 1 (or rounding just above) keeps the column for every coin but 2^32 - 1, whose
  // alias is then the column itself (see the constructor), so a full column is exact.
  const double scaled = std::floor(p * kTwo32);
  if (scaled <= 0.0) return 0;
  if (scaled >= kTwo32 - 1.0) return 0xFFFFFFFFu;
  return static_cast<uint32_t>(scaled);
}

}  // namespace

AliasTable::AliasTable(absl::Span<const double> weights) {
  const size_t n = weights.size();
  VIGIL_CHECK(n > 0 && n < (uint64_t{1} << 32));
  double sum = 0.0;
  for (double w : weights) {
    VIGIL_CHECK(w >= 0.0 && std::isfinite(w));
    sum += w;
  }
  VIGIL_CHECK(sum > 0.0);

  std::vector<double> scaled(n);
  std::vector<uint32_t> small;
  std::vector<uint32_t> large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  threshold_.assign(n, 0xFFFFFFFFu);
  alias_.resize(n);
  for (size_t i = 0; i < n; ++i) alias_[i] = static_cast<uint32_t>(i);

  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back();
    small.pop_back();
    const uint32_t l = large.back();
    threshold_[s] = ToThreshold(scaled[s]);
    alias_[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Whatever is left is 1 up to rounding: a full column (threshold and alias already set).
}

}  // namespace vigil::synth::internal
