#include "vigil/synth/internal/population.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "vigil/synth/internal/test_util.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::synth::internal {
namespace {

using ::vigil::testing::StatusIs;

TEST(Population, HasTheConfiguredMixOfAccounts) {
  const Population p = PopulationForTest(20000, 3);
  ASSERT_EQ(p.size(), 20000);
  int counts[kNumAccountKinds] = {};
  int usd_or_eur = 0;
  for (int32_t a = 0; a < p.size(); ++a) {
    ++counts[static_cast<int>(p.kind(a))];
    usd_or_eur += p.currency(a) <= 1;
    ASSERT_NE(p.currency(a), kXbt);  // no bank holds Bitcoin
  }
  EXPECT_NEAR(counts[0] / 20000.0, 0.85, 0.02);
  EXPECT_NEAR(counts[1] / 20000.0, 0.10, 0.02);
  EXPECT_NEAR(counts[2] / 20000.0, 0.05, 0.02);
  EXPECT_NEAR(usd_or_eur / 20000.0, 0.68, 0.08);  // mostly USD and EUR
}

TEST(Population, IdsAreDistinctAndAmlworldShaped) {
  const Population p = PopulationForTest(20000, 4);
  std::set<std::string> accounts;
  for (int32_t a = 0; a < p.size(); ++a) {
    const std::string id(p.hex_id(a), 9);
    for (char c : id) ASSERT_TRUE(absl::ascii_isdigit(c) || (c >= 'A' && c <= 'F')) << id;
    accounts.insert(id);
  }
  EXPECT_EQ(accounts.size(), 20000u);
  std::set<std::string> banks;
  for (int32_t b = 0; b < p.bank_count(); ++b) {
    const std::string id(p.bank(b).id, p.bank(b).id_len);
    ASSERT_EQ(id.size(), 6u);
    for (char c : id) ASSERT_TRUE(absl::ascii_isdigit(c)) << id;
    banks.insert(id);
  }
  EXPECT_EQ(banks.size(), static_cast<size_t>(p.bank_count()));
  EXPECT_GE(p.bank_count(), 100);
}

TEST(Population, SameSeedSamePopulation) {
  const Population a = PopulationForTest(1000, 5);
  const Population b = PopulationForTest(1000, 5);
  const Population c = PopulationForTest(1000, 6);
  EXPECT_EQ(std::string(a.hex_id(0), 9 * 1000), std::string(b.hex_id(0), 9 * 1000));
  EXPECT_NE(std::string(a.hex_id(0), 9 * 1000), std::string(c.hex_id(0), 9 * 1000));
  EXPECT_EQ(a.launderers(), b.launderers());
}

TEST(Population, PayrollsPayIndividualsOfTheirCurrencyInWholeUnits) {
  const Population p = PopulationForTest(5000, 7);
  ASSERT_FALSE(p.payrolls().empty());
  size_t employed = 0;
  for (const Payroll& pr : p.payrolls()) {
    ASSERT_EQ(p.kind(pr.company), AccountKind::kCompany);
    ASSERT_LT(pr.begin, pr.end);
    for (int32_t e = pr.begin; e < pr.end; ++e) {
      const int32_t employee = p.employees()[e];
      EXPECT_EQ(p.kind(employee), AccountKind::kIndividual);
      EXPECT_EQ(p.currency(employee), p.currency(pr.company));
      EXPECT_EQ(p.salaries()[e] % 100, 0);
      ++employed;
    }
  }
  EXPECT_NEAR(static_cast<double>(employed) / (0.85 * 5000), 0.70, 0.05);
}

TEST(Population, LaunderersAreDistinctNonMerchants) {
  const Population p = PopulationForTest(10000, 8);
  EXPECT_EQ(p.launderers().size(), 200u);  // accounts / 50
  std::set<int32_t> seen;
  for (int32_t a : p.launderers()) {
    EXPECT_NE(p.kind(a), AccountKind::kMerchant);
    EXPECT_TRUE(seen.insert(a).second);
  }
  for (int32_t m : p.mules()) {
    EXPECT_EQ(p.kind(m), AccountKind::kIndividual);
    EXPECT_TRUE(seen.insert(m).second) << "a mule is also a launderer";
  }
}

TEST(Population, RejectsTooFewOrTooManyAccounts) {
  EXPECT_THAT(Population::Build(99, 1, RepositoryFxConverter()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Population::Build(kMaxAccounts + 1, 1, RepositoryFxConverter()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(Population::Build(kMinAccounts, 1, RepositoryFxConverter()).ok());
}

}  // namespace
}  // namespace vigil::synth::internal
