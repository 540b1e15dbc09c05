#include "vigil/ingest/party_key.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(PartyAccountKeyTest, PrefersTheAccountThenTheBicThenBankAndName) {
  EXPECT_EQ(PartyAccountKey(" BE71096123456769 ", "GEBABEBB", "DEUTDEFF", "Name"),
            "BE71096123456769");
  EXPECT_EQ(PartyAccountKey("", "GEBABEBBXXX", "DEUTDEFF", "Name"), "GEBABEBBXXX");
  EXPECT_EQ(PartyAccountKey("", "", "DEUTDEFF", "  Acme   trading\tLtd "),
            "DEUTDEFF:ACME TRADING LTD");
  EXPECT_EQ(PartyAccountKey("", "", "", "acme ltd"), "ACME LTD");
  EXPECT_EQ(PartyAccountKey("NOTPROVIDED", "", "DEUTDEFF", "Acme"), "DEUTDEFF:ACME");
  EXPECT_EQ(PartyAccountKey("  ", "", "DEUTDEFF", " "), "");
}

}  // namespace
}  // namespace vigil
