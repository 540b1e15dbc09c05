#include "vigil/screening/ofac_sdn.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/sha256.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::StatusIs;
using Type = WatchlistEntry::Type;

const char kSdnDir[] = "sanctions/ofac_sdn_legacy_csv_2019";

TEST(OfacSdnTest, LoadsThe2019Sample) {
  ASSERT_OK_AND_ASSIGN(const Watchlist w, LoadOfacSdn(vigil::testing::TestDataPath(kSdnDir)));
  EXPECT_EQ(w.name(), "OFAC SDN");
  // 7,378 line breaks; the last record has none (testdata/sanctions/PROVENANCE.md).
  ASSERT_EQ(w.size(), 7379u);
  size_t aliases = 0, countries = 0, with_identifiers = 0;
  size_t by_type[5] = {};
  for (const WatchlistEntry& e : w.entries()) {
    aliases += e.aliases.size();
    countries += e.countries.empty() ? 0 : 1;
    with_identifiers += e.identifiers.empty() ? 0 : 1;
    ++by_type[static_cast<int>(e.type)];
    EXPECT_EQ(e.list, "OFAC SDN");
  }
  EXPECT_EQ(aliases, 9682u);
  EXPECT_EQ(by_type[static_cast<int>(Type::kIndividual)], 3845u);
  EXPECT_EQ(by_type[static_cast<int>(Type::kEntity)], 2994u);
  EXPECT_EQ(by_type[static_cast<int>(Type::kVessel)], 323u);
  EXPECT_EQ(by_type[static_cast<int>(Type::kAircraft)], 217u);
  EXPECT_EQ(by_type[static_cast<int>(Type::kUnknown)], 0u);
  EXPECT_EQ(countries, 5151u);
  EXPECT_EQ(with_identifiers, 2142u);

  const WatchlistEntry* bnc = w.Find("306");
  ASSERT_NE(bnc, nullptr);
  EXPECT_EQ(bnc->name, "BANCO NACIONAL DE CUBA");
  EXPECT_EQ(bnc->type, Type::kEntity);
  EXPECT_THAT(bnc->aliases, Contains("NATIONAL BANK OF CUBA"));
  EXPECT_THAT(bnc->countries, Contains("Switzerland"));
  EXPECT_THAT(bnc->countries, Contains("Japan"));
  EXPECT_THAT(bnc->programs, ElementsAre("CUBA"));

  const WatchlistEntry* anglo = w.Find("173");
  ASSERT_NE(anglo, nullptr);
  EXPECT_EQ(anglo->name, "ANGLO-CARIBBEAN CO., LTD.");
  EXPECT_THAT(anglo->aliases, ElementsAre("AVIA IMPORT"));
  EXPECT_THAT(anglo->countries, ElementsAre("United Kingdom"));

  // The version is sha256sum's manifest of the four files, hashed.
  EXPECT_THAT(w.version(), ::testing::StartsWith("sha256:"));
  EXPECT_EQ(w.version().size(), 7u + 64u);
}

TEST(OfacSdnTest, VersionIsStableAndFollowsEveryByte) {
  const std::string dir = vigil::testing::TestDataPath(kSdnDir);
  const std::string sdn = vigil::testing::ReadFile(dir + "/sdn.csv");
  const std::string alt = vigil::testing::ReadFile(dir + "/alt.csv");
  const std::string add = vigil::testing::ReadFile(dir + "/add.csv");
  const std::string comments = vigil::testing::ReadFile(dir + "/sdn_comments.csv");
  ASSERT_OK_AND_ASSIGN(const Watchlist from_dir, LoadOfacSdn(dir));
  ASSERT_OK_AND_ASSIGN(const Watchlist again, LoadOfacSdnFromStrings(sdn, alt, add, comments));
  EXPECT_EQ(again.version(), from_dir.version());
  EXPECT_EQ(again.entries(), from_dir.entries());

  std::string changed = add;
  changed[changed.find("Havana")] = 'h';
  ASSERT_OK_AND_ASSIGN(const Watchlist one_byte,
                       LoadOfacSdnFromStrings(sdn, alt, changed, comments));
  EXPECT_NE(one_byte.version(), from_dir.version());
  ASSERT_OK_AND_ASSIGN(const Watchlist no_comments, LoadOfacSdnFromStrings(sdn, alt, add));
  EXPECT_NE(no_comments.version(), from_dir.version());
}

TEST(OfacSdnTest, ReadsQuotesCommasAndEmptyMarkers) {
  const std::string sdn =
      "10,\"DOE, John \"\"Johnny\"\"\",individual,\"SDGT] [SDT\",\"Dr.\",-0- ,-0- ,-0- ,-0- ,-0- ,"
      "-0- ,\"DOB 1 Jan 1960; Passport A123, 45 (Utopia) issued 2001; alt. Passport A123, 45; "
      "National ID No. 998877 (Utopia).\"\n"
      "11,\"SEA STAR\",vessel,\"IRAN\",-0- ,\"9HXX\",\"Tanker\",-0- ,-0- ,\"Malta\",-0- ,"
      "\"Vessel Registration Identification IMO 9187629.\"\n"
      "12,\"ACME BANK\",-0- ,\"SYRIA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"
      "\"SWIFT/BIC ACMESYDA; IBAN SY12 3456 7890; Registration ID 42 (Syria)\"\n";
  const std::string alt = "10,1,\"aka\",\"DOE, Jack\",-0- \n12,2,\"fka\",\"ACME\",-0-";
  const std::string add = "10,1,-0- ,\"Town\",\"Utopia\",-0- \n10,2,-0- ,-0- ,\"Utopia\",-0- \n";
  ASSERT_OK_AND_ASSIGN(const Watchlist w, LoadOfacSdnFromStrings(sdn, alt, add));
  ASSERT_EQ(w.size(), 3u);
  const WatchlistEntry& doe = w.entries()[0];
  EXPECT_EQ(doe.id, "10");
  EXPECT_EQ(doe.name, "DOE, John \"Johnny\"");
  EXPECT_EQ(doe.type, Type::kIndividual);
  EXPECT_THAT(doe.programs, ElementsAre("SDGT", "SDT"));
  EXPECT_THAT(doe.aliases, ElementsAre("DOE, Jack"));
  EXPECT_THAT(doe.countries, ElementsAre("Utopia"));
  EXPECT_THAT(doe.identifiers, ElementsAre("A123, 45", "998877"));
  EXPECT_EQ(w.entries()[1].type, Type::kVessel);
  EXPECT_THAT(w.entries()[1].identifiers, ElementsAre("IMO 9187629"));
  EXPECT_THAT(w.entries()[1].countries, IsEmpty());
  EXPECT_EQ(w.entries()[2].type, Type::kEntity);
  EXPECT_THAT(w.entries()[2].identifiers, ElementsAre("ACMESYDA", "SY1234567890", "42"));
}

TEST(OfacSdnTest, RemarksIdentifiers) {
  EXPECT_THAT(ParseOfacRemarksIdentifiers("Passport issued 21 Jun 1992 in Amman, Jordan."),
              IsEmpty());
  EXPECT_THAT(ParseOfacRemarksIdentifiers("SWIFT/BIC SYLCLBBE.; SWIFT/BIC TOOLONGBIC1234"),
              ElementsAre("SYLCLBBE"));
  EXPECT_THAT(ParseOfacRemarksIdentifiers(
                  "Tax ID No. 7707083893 (Russia); Registration Number 1027700132195 (Russia)"),
              ElementsAre("7707083893", "1027700132195"));
  EXPECT_THAT(ParseOfacRemarksIdentifiers("a.k.a. 'BNC'.; DOB 1948; Passports 12"), IsEmpty());
}

TEST(OfacSdnTest, CommentsExtendRemarksAndUnknownEntriesAreSkipped) {
  const std::string sdn =
      "5,\"X\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,\"DOB 1960; Tax ID\"\n";
  ASSERT_OK_AND_ASSIGN(
      const Watchlist w,
      LoadOfacSdnFromStrings(sdn, "", "", "5,\" No. 123 (Cuba).\"\n99,\"other\"\n\x1a"));
  EXPECT_THAT(w.entries()[0].identifiers, ElementsAre("123"));
}

TEST(OfacSdnTest, ErrorsNameFileLineAndField) {
  const std::string row = "1,\"A\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \n";
  EXPECT_THAT(LoadOfacSdnFromStrings(row + "2,\"B\",-0- \n", "", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sdn.csv:2: expected 12 fields (ent_num,SDN_Name,")));
  EXPECT_THAT(LoadOfacSdnFromStrings(row + "x2" + row.substr(1), "", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sdn.csv:2: field ent_num: not a number: \"x2\"")));
  EXPECT_THAT(LoadOfacSdnFromStrings(row + row, "", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sdn.csv:2: field ent_num: duplicate ent_num 1")));
  EXPECT_THAT(
      LoadOfacSdnFromStrings("3,-0- ,-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ", "",
                             ""),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sdn.csv:1: field SDN_Name: empty")));
  EXPECT_THAT(LoadOfacSdnFromStrings(
                  "3,\"A\",\"person\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ", "", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sdn.csv:1: field SDN_Type: unknown type \"person\"")));
  EXPECT_THAT(LoadOfacSdnFromStrings(row, "1,1,\"aka\",\"B\",-0- \n7,2,\"aka\",\"C\",-0- ", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("alt.csv:2: field ent_num: 7 is not in sdn.csv")));
  EXPECT_THAT(
      LoadOfacSdnFromStrings(row, "1,1,\"aka\",-0- ,-0- ", ""),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alt.csv:1: field alt_name: empty")));
  EXPECT_THAT(LoadOfacSdnFromStrings(row, "", "1,x,-0- ,-0- ,\"Cuba\",-0- "),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("add.csv:1: field add_num: not a number")));
  EXPECT_THAT(
      LoadOfacSdnFromStrings(row, "", "1,1,\"Cuba\"\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("add.csv:1: expected 6 fields")));
  EXPECT_THAT(LoadOfacSdnFromStrings(row + "2,\"unterminated", "", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sdn.csv:2: field 2: quoted field not terminated")));
  EXPECT_THAT(LoadOfacSdn("/nonexistent-dir"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent-dir/sdn.csv")));
}

// An extract of the list may come as sdn.csv alone: entries without aliases or countries, and
// a version over the one file.
TEST(OfacSdn, AFolderWithSdnCsvAloneLoads) {
  const std::string dir = ::testing::TempDir() + "/sdn_only";
  std::filesystem::create_directories(dir);
  const std::string sdn = "306,\"BANCO NACIONAL DE CUBA\",-0- ,\"CUBA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,\"a.k.a. 'BNC'.\"\n";
  std::ofstream(dir + "/sdn.csv", std::ios::binary) << sdn;
  ASSERT_OK_AND_ASSIGN(const Watchlist list, LoadOfacSdn(dir));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list.entries()[0].name, "BANCO NACIONAL DE CUBA");
  EXPECT_TRUE(list.entries()[0].aliases.empty());
  EXPECT_EQ(list.version(),
            ContentVersion(absl::StrCat(vigil::Sha256Hex(sdn), "  sdn.csv\n")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::screening
