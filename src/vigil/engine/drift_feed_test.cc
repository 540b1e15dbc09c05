#include "vigil/engine/drift_feed.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace vigil {
namespace {

Transaction Payment(const char* from_bank, const char* from, const char* to_bank,
                    const char* to) {
  Transaction tx;
  tx.event_time = FromUnixMicros(1'661'990'400'000'000);
  tx.originator.bank_id = from_bank;
  tx.originator.account_id = from;
  tx.beneficiary.bank_id = to_bank;
  tx.beneficiary.account_id = to;
  return tx;
}

TEST(DriftFeed, NamesBothAccountsByBankAndAccountAndTheClient) {
  const drift::RowSource s = DriftSourceOf(Payment("B1", "A", "B2", "C"), 42);
  EXPECT_EQ(s.originator, drift::SourceHash("B1\x1f" "A"));
  EXPECT_EQ(s.beneficiary, drift::SourceHash("B2\x1f" "C"));
  EXPECT_EQ(s.client, 42u);
  // The separator keeps "B1"+"1A" apart from "B11"+"A".
  EXPECT_NE(DriftSourceOf(Payment("B1", "1A", "X", "Y"), 0).originator,
            DriftSourceOf(Payment("B11", "A", "X", "Y"), 0).originator);
}

TEST(DriftFeed, AppendsTimeRowScoreAndSourcesInStep) {
  drift::DriftTap::Rows batch;
  const std::vector<double> row = {1, 2, 3};
  AppendDriftRow(Payment("B", "A", "B", "C"), row, 0.25, 0, batch);
  AppendDriftRow(Payment("B", "C", "B", "A"), row, std::nan(""), 0, batch);
  ASSERT_EQ(batch.times.size(), 2u);
  EXPECT_EQ(batch.features.size(), 6u);
  EXPECT_EQ(batch.scores[0], 0.25);
  EXPECT_TRUE(std::isnan(batch.scores[1]));
  ASSERT_EQ(batch.sources.size(), 2u);
  EXPECT_EQ(batch.sources[0].originator, batch.sources[1].beneficiary);
}

}  // namespace
}  // namespace vigil
