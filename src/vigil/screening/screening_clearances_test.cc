#include "vigil/screening/screening_clearances.h"

#include <chrono>

#include "gtest/gtest.h"

namespace vigil::screening {
namespace {

const UtcTime kNow = FromUnixMicros(1'796'083'200'000'000);

TEST(ScreenedPartyTest, NamesEachPartyByWhatIdentifiesIt) {
  Transaction tx;
  tx.originator = {.account_id = "GB29NWBK60161331926819", .name = "Acme", .bank_id = "NWBKGB2L"};
  tx.beneficiary = {.account_id = "", .name = "Ivan Petrov"};
  tx.ultimate_beneficiary = Party{.account_id = "U-1"};
  Agent agent;
  agent.role = AgentRole::kIntermediary;
  agent.bic = "DEUTDEFF";
  tx.agents.push_back(agent);
  EXPECT_EQ(ScreenedParty(tx, "originator"), "account:GB29NWBK60161331926819");
  EXPECT_EQ(ScreenedParty(tx, "beneficiary"), "name:Ivan Petrov");
  EXPECT_EQ(ScreenedParty(tx, "ultimate_beneficiary"), "account:U-1");
  EXPECT_EQ(ScreenedParty(tx, "ultimate_originator"), "");
  EXPECT_EQ(ScreenedParty(tx, "originator_bank"), "bank:NWBKGB2L");
  EXPECT_EQ(ScreenedParty(tx, "beneficiary_bank"), "");
  EXPECT_EQ(ScreenedParty(tx, "intermediary"), "bank:DEUTDEFF");
  EXPECT_EQ(ScreenedParty(tx, "nobody"), "");
}

TEST(HitPartyRoleTest, ReadsTheRoleDecisionsWrite) {
  EXPECT_EQ(HitPartyRole("beneficiary name matches OFAC SDN 36 \"X\", score 0.93"), "beneficiary");
  EXPECT_EQ(HitPartyRole("intermediary identifier is listed by OFAC SDN 9 \"Y\""), "intermediary");
  EXPECT_EQ(HitPartyRole("large payment"), "");
  EXPECT_EQ(HitPartyRole(""), "");
}

TEST(ScreeningClearancesTest, HoldUntilTheyExpireAndAreReplacedOrRevoked) {
  ScreeningClearances set;
  EXPECT_TRUE(set.empty());
  set.Grant({.hit = "OFAC SDN:36",
             .party = "account:A1",
             .expires = kNow + std::chrono::hours(24),
             .case_id = "case-3",
             .actor = "token:a",
             .reason = "different person"});
  EXPECT_FALSE(set.empty());
  EXPECT_TRUE(set.Find("OFAC SDN:36", "account:A1", kNow).has_value());
  EXPECT_EQ(set.Find("OFAC SDN:36", "account:A1", kNow)->case_id, "case-3");
  // Another party or entry is not cleared; nor the same after the expiry.
  EXPECT_FALSE(set.Find("OFAC SDN:36", "account:A2", kNow).has_value());
  EXPECT_FALSE(set.Find("OFAC SDN:37", "account:A1", kNow).has_value());
  EXPECT_FALSE(set.Find("OFAC SDN:36", "account:A1", kNow + std::chrono::hours(24)).has_value());
  EXPECT_EQ(set.Holding(kNow).size(), 1u);
  EXPECT_TRUE(set.Holding(kNow + std::chrono::hours(25)).empty());
  // A new grant of the same pair replaces it.
  set.Grant({.hit = "OFAC SDN:36",
             .party = "account:A1",
             .expires = kNow + std::chrono::hours(48),
             .case_id = "case-9"});
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.Find("OFAC SDN:36", "account:A1", kNow + std::chrono::hours(30))->case_id,
            "case-9");
  set.Revoke("OFAC SDN:36", "account:A1");
  EXPECT_FALSE(set.Find("OFAC SDN:36", "account:A1", kNow).has_value());
  EXPECT_EQ(set.size(), 0u);
  EXPECT_TRUE(set.empty());
}

}  // namespace
}  // namespace vigil::screening
