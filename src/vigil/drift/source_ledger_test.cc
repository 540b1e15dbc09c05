#include "vigil/drift/source_ledger.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace vigil::drift {
namespace {

using Admission = SourceLedger::Admission;

RowSource Pay(uint64_t from, uint64_t to, uint64_t client = 9) { return {from, to, client}; }

TEST(SourceLedger, OneAccountsBurstIsCappedWhateverTheCounterparty) {
  SourceLedger ledger(6, SourceCaps{5, 0.05, 1.0});
  // 3,000 payments of account 1, each to another counterparty: five count.
  int admitted = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    admitted += ledger.Admit(0, Pay(1, 1000 + i)) == Admission::kAdmitted;
  }
  EXPECT_EQ(admitted, 5);
  EXPECT_EQ(ledger.capped(), 2995u);
  // And 3,000 to one counterparty from as many originators: five count too.
  admitted = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    admitted += ledger.Admit(0, Pay(10'000 + i, 2)) == Admission::kAdmitted;
  }
  EXPECT_EQ(admitted, 5);
  EXPECT_EQ(ledger.rows(), 10u);
  EXPECT_EQ(ledger.distinct_accounts(), 2u + 5u + 5u);
}

TEST(SourceLedger, TheCapGrowsWithTheWindowsRows) {
  SourceLedger ledger(6, SourceCaps{5, 0.05, 1.0});
  for (uint64_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(ledger.Admit(0, Pay(2 * i + 100, 2 * i + 101)), Admission::kAdmitted);
  }
  // 5% of the window's rows: one account may hold 50 of the first 1,000, and 52 of 1,052.
  int admitted = 0;
  for (int i = 0; i < 100; ++i) admitted += ledger.Admit(0, Pay(1, 3)) == Admission::kAdmitted;
  EXPECT_EQ(admitted, 52);
}

TEST(SourceLedger, PanesLeavingTheWindowFreeTheirSources) {
  SourceLedger ledger(3, SourceCaps{2, 0.01, 1.0});
  EXPECT_EQ(ledger.Admit(10, Pay(1, 2)), Admission::kAdmitted);
  EXPECT_EQ(ledger.Admit(11, Pay(1, 3)), Admission::kAdmitted);
  EXPECT_EQ(ledger.Admit(12, Pay(1, 4)), Admission::kCapped);
  EXPECT_EQ(ledger.distinct_accounts(), 3u);
  // Pane 13 pushes pane 10 out: account 1 holds one row again.
  EXPECT_EQ(ledger.Admit(13, Pay(1, 5)), Admission::kAdmitted);
  EXPECT_EQ(ledger.Admit(13, Pay(1, 6)), Admission::kCapped);
  EXPECT_EQ(ledger.Admit(10, Pay(7, 8)), Admission::kLate);
  ledger.AdvanceTo(100);
  EXPECT_EQ(ledger.rows(), 0u);
  EXPECT_EQ(ledger.distinct_accounts(), 0u);
  EXPECT_EQ(ledger.distinct_clients(), 0u);
}

TEST(SourceLedger, ClientsAreCappedOnlyWhenAsked) {
  SourceLedger uncapped(6, SourceCaps{5, 1.0, 1.0});
  SourceLedger capped(6, SourceCaps{5, 1.0, 0.5});
  int a = 0, b = 0;
  for (uint64_t i = 0; i < 100; ++i) {
    a += uncapped.Admit(0, Pay(2 * i + 10, 2 * i + 11, 1)) == Admission::kAdmitted;
    b += capped.Admit(0, Pay(2 * i + 10, 2 * i + 11, 1)) == Admission::kAdmitted;
  }
  EXPECT_EQ(a, 100);
  EXPECT_EQ(b, 5);  // one client alone cannot grow its own cap
  EXPECT_EQ(uncapped.distinct_clients(), 1u);
}

TEST(SourceLedger, UnknownSourcesAreNotCappedAndCountAsDistinct) {
  SourceLedger ledger(6, SourceCaps{1, 0.01, 0.5});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ledger.Admit(0, RowSource{}), Admission::kAdmitted);
  EXPECT_EQ(ledger.distinct_accounts(), 20u);
  EXPECT_EQ(ledger.distinct_clients(), 1u);
  // A self-transfer is one account.
  SourceLedger self(6, SourceCaps{});
  EXPECT_EQ(self.Admit(0, Pay(4, 4)), Admission::kAdmitted);
  EXPECT_EQ(self.distinct_accounts(), 1u);
}

TEST(SourceLedger, HashesAreNeverZero) {
  EXPECT_NE(SourceHash(""), 0u);
  EXPECT_NE(SourceHash("B1\x1f" "A1"), SourceHash("B1\x1f" "A2"));
}

}  // namespace
}  // namespace vigil::drift
