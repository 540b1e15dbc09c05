#include "vigil/screening/consolidated_screening_list.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/screening/screener.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::string Sample() {
  return vigil::testing::ReadFile(vigil::testing::TestDataPath("sanctions/csl.csv"));
}

TEST(ConsolidatedScreeningList, ReadsTheTradeGovSample) {
  const std::string text = Sample();
  ASSERT_OK_AND_ASSIGN(const Watchlist list, ParseConsolidatedScreeningList(text, "csl.csv"));
  EXPECT_EQ(list.name(), "csl.csv");
  EXPECT_EQ(list.version(), ContentVersion(text));
  EXPECT_GT(list.size(), 100u);

  const WatchlistEntry* psa = list.Find("20264");
  ASSERT_NE(psa, nullptr);
  EXPECT_EQ(psa->name, "200G PSA HOLDINGS LLC");
  EXPECT_EQ(psa->type, WatchlistEntry::Type::kEntity);
  EXPECT_EQ(psa->list, "Specially Designated Nationals (SDN) - Treasury Department");
  EXPECT_THAT(psa->programs, ElementsAre("SDNTK"));
  EXPECT_THAT(psa->identifiers, ElementsAre("80-0890696"));

  // The Denied Persons List has no entity numbers: the row's line names the entry, and the
  // name loses its stray leading space.
  const WatchlistEntry* dpl = list.Find("line-2");
  ASSERT_NE(dpl, nullptr);
  EXPECT_EQ(dpl->name, "ADRIAN MANUEL HERNANDEZ");
  EXPECT_EQ(dpl->list, "Denied Persons List (DPL) - Bureau of Industry and Security");
}

TEST(ConsolidatedScreeningList, TakesTheCurrentFormsIdColumnAndAliases) {
  const std::string text =
      "_id,source,entity_number,type,programs,name,alt_names,nationalities,citizenships,ids\n"
      "e1f2,\"Entity List (EL) - Bureau of Industry and Security\",,Entity,,ACME TECH CO.,"
      "\"ACME TECHNOLOGY; ACME TECH CO.; ACME HK\",,,\n"
      "a9b8,\"Specially Designated Nationals (SDN) - Treasury Department\",36,Individual,"
      "\"SDGT; IRGC\",PETROV Ivan,\"PETROV, Ivan S.\",RU,\"RU, BY\","
      "\"RU, 4509 123456, Passport; , 7701234567, Tax ID No.\"\n";
  ASSERT_OK_AND_ASSIGN(const Watchlist list, ParseConsolidatedScreeningList(text, "csl_new.csv"));
  ASSERT_EQ(list.size(), 2u);
  const WatchlistEntry& acme = list.entries()[0];
  EXPECT_EQ(acme.id, "e1f2");
  EXPECT_THAT(acme.aliases, ElementsAre("ACME TECHNOLOGY", "ACME HK"));  // the name itself dropped
  const WatchlistEntry& petrov = list.entries()[1];
  EXPECT_EQ(petrov.id, "a9b8");
  EXPECT_EQ(petrov.type, WatchlistEntry::Type::kIndividual);
  EXPECT_THAT(petrov.programs, ElementsAre("SDGT", "IRGC"));
  EXPECT_THAT(petrov.countries, ElementsAre("RU", "BY"));
  EXPECT_THAT(petrov.identifiers, ElementsAre("4509 123456", "7701234567"));
}

TEST(ConsolidatedScreeningList, ErrorsNameTheLineAndField) {
  EXPECT_THAT(ParseConsolidatedScreeningList("source,name,alt_names\nSDN,,\n", "c.csv").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c.csv:2: field name: empty")));
  EXPECT_THAT(ParseConsolidatedScreeningList("", "c.csv").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty file")));
  // Repeated entity numbers (two lists' numbering) stay distinct.
  ASSERT_OK_AND_ASSIGN(
      const Watchlist list,
      ParseConsolidatedScreeningList("source,entity_number,name,alt_names\nA,7,ONE,\nB,7,TWO,\n", "c"));
  EXPECT_NE(list.Find("7"), nullptr);
  EXPECT_NE(list.Find("7@line-3"), nullptr);
}

TEST(ConsolidatedScreeningList, IsRecognizedAsAListSourceAndScreened) {
  EXPECT_TRUE(LooksLikeConsolidatedScreeningList(Sample().substr(0, Sample().find('\n'))));
  EXPECT_FALSE(LooksLikeConsolidatedScreeningList("id,name,aliases,type,countries,identifiers,list"));
  ASSERT_OK_AND_ASSIGN(auto screener,
                       Screener::Create({.sources = {vigil::testing::TestDataPath("sanctions/csl.csv")}}));
  const std::vector<ScreeningHit> hits = screener->Current()->ScreenName("200G PSA Holdings", {});
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].entry_id, "20264");
  EXPECT_EQ(hits[0].list, "Specially Designated Nationals (SDN) - Treasury Department");
}

}  // namespace
}  // namespace vigil::screening
