// Test-only helpers for the synth tests: the repository's FX table and small populations.
//
// Thread safety: plain functions.
#ifndef VIGIL_SYNTH_INTERNAL_TEST_UTIL_H_
#define VIGIL_SYNTH_INTERNAL_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "vigil/common/check.h"
#include "vigil/core/fx_rates.h"
#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/population.h"
#include "vigil/testing/testdata.h"

namespace vigil::synth::internal {

// data/fx_rates.csv of the checkout: the table `vigil gen` uses by default.
inline const FxRates& RepositoryFxRates() {
  static const FxRates* const rates = [] {
    absl::StatusOr<FxRates> r =
        FxRates::LoadFile(vigil::testing::SourceDir() + "/data/fx_rates.csv");
    VIGIL_CHECK(r.ok());
    return new FxRates(*std::move(r));
  }();
  return *rates;
}

inline const FxConverter& RepositoryFxConverter() {
  static const FxConverter* const fx = [] {
    absl::StatusOr<FxConverter> c = FxConverter::Create(RepositoryFxRates());
    VIGIL_CHECK(c.ok());
    return new FxConverter(*std::move(c));
  }();
  return *fx;
}

inline Population PopulationForTest(int64_t accounts, uint64_t seed) {
  absl::StatusOr<Population> p = Population::Build(accounts, seed, RepositoryFxConverter());
  VIGIL_CHECK(p.ok());
  return *std::move(p);
}

}  // namespace vigil::synth::internal

#endif  // VIGIL_SYNTH_INTERNAL_TEST_UTIL_H_
