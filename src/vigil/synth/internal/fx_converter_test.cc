#include "vigil/synth/internal/fx_converter.h"

#include <cmath>

#include "gtest/gtest.h"
#include "vigil/core/money.h"
#include "vigil/synth/internal/test_util.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::synth::internal {
namespace {

using ::vigil::testing::StatusIs;

constexpr uint8_t kEur = 1;
constexpr uint8_t kJpy = 3;

Currency C(absl::string_view code) { return *Currency::FromCode(code); }

TEST(FxConverter, ReadsUnitValuesFromTheTable) {
  const FxConverter& fx = RepositoryFxConverter();
  EXPECT_DOUBLE_EQ(fx.usd_per_unit(kUsd), 1.0);
  EXPECT_NEAR(fx.usd_per_unit(kEur), 1.0 / 0.8533727, 1e-9);  // data/fx_rates.csv
  EXPECT_NEAR(fx.usd_per_unit(kXbt), 1.0 / 0.0000848, 1e-3);
  for (uint8_t c = 0; c < kNumSynthCurrencies; ++c) EXPECT_TRUE(fx.available(c)) << int{c};
}

TEST(FxConverter, FromUsdRoundsToMinorUnits) {
  const FxConverter& fx = RepositoryFxConverter();
  EXPECT_EQ(fx.FromUsd(51.43, kUsd), 5143);
  EXPECT_EQ(fx.FromUsd(100.0, kEur), 8534);  // 85.33727 EUR
  EXPECT_EQ(fx.FromUsd(100.0, kXbt), 8480);  // 0.008480 BTC, 6 decimals
  EXPECT_EQ(fx.FromUsd(0.0, kUsd), 1);       // a payment is never zero
}

TEST(FxConverter, ConvertAgreesWithFxRatesWithinHalfAMinorUnit) {
  const FxConverter& fx = RepositoryFxConverter();
  const FxRates& rates = RepositoryFxRates();
  for (int64_t paid : {int64_t{1}, int64_t{5143}, int64_t{123456789}, int64_t{99999999999}}) {
    for (uint8_t to = 0; to < kNumSynthCurrencies; ++to) {
      const int64_t received = fx.Convert(paid, kJpy, to);
      const SynthCurrency& t = kSynthCurrencies[to];
      const double paid_usd =
          static_cast<double>(*rates.ToReportingMicros(Money(paid, 2, C("JPY")))) / 1e6;
      const double received_usd =
          static_cast<double>(*rates.ToReportingMicros(Money(received, t.decimals, C(t.code)))) /
          1e6;
      const double half_unit_usd = 0.5 * std::pow(10.0, -t.decimals) * fx.usd_per_unit(to);
      if (received > 1) {  // 1 is the "never zero" floor
        EXPECT_LE(std::abs(paid_usd - received_usd), half_unit_usd + 2e-6 + 1e-9 * paid_usd)
            << paid << " JPY -> " << t.code;
      }
    }
  }
}

TEST(FxConverter, SameCurrencyIsUnchanged) {
  EXPECT_EQ(RepositoryFxConverter().Convert(123456, kEur, kEur), 123456);
}

TEST(FxConverter, RequiresAUsDollarRate) {
  absl::StatusOr<FxRates> no_usd =
      FxRates::Parse("reporting_currency,EUR\ncurrency,per_reporting_unit\nGBP,0.9\n", "t.csv");
  ASSERT_TRUE(no_usd.ok());
  EXPECT_THAT(FxConverter::Create(*no_usd), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(FxConverter, ReportsMissingCurrenciesUnavailable) {
  absl::StatusOr<FxRates> small = FxRates::Parse(
      "reporting_currency,EUR\ncurrency,per_reporting_unit\nUSD,1.25\nGBP,0.9\n", "t.csv");
  ASSERT_TRUE(small.ok());
  absl::StatusOr<FxConverter> fx = FxConverter::Create(*small);
  ASSERT_TRUE(fx.ok()) << fx.status();
  EXPECT_TRUE(fx->available(kUsd));
  EXPECT_TRUE(fx->available(kEur));
  EXPECT_FALSE(fx->available(kJpy));
  // A non-USD reporting currency still gives USD unit values.
  EXPECT_NEAR(fx->usd_per_unit(kEur), 1.25, 1e-9);
}

}  // namespace
}  // namespace vigil::synth::internal
