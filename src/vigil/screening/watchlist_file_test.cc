#include "vigil/screening/watchlist_file.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/screening/ofac_sdn.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;
using Type = WatchlistEntry::Type;

std::vector<WatchlistEntry> SampleEntries() {
  WatchlistEntry a;
  a.id = "42";
  a.name = "ACME TRADING, \"LLC\"";
  a.aliases = {"ACME TRADING", "ACME LLC"};
  a.type = Type::kEntity;
  a.countries = {"Iran", "United Arab Emirates"};
  a.identifiers = {"ACMEIRTH", "IR123456789"};
  a.list = "PEP";
  WatchlistEntry b;
  b.id = "p-7";
  b.name = "DOE\nJohn";
  b.type = Type::kUnknown;
  b.list = "Internal";
  WatchlistEntry c;
  c.id = "v1";
  c.name = "SEA STAR";
  c.type = Type::kVessel;
  c.identifiers = {"IMO 9187629"};
  c.list = "PEP";
  return {a, b, c};
}

TEST(WatchlistFileTest, CsvAndJsonLinesRoundTrip) {
  const std::vector<WatchlistEntry> entries = SampleEntries();
  ASSERT_OK_AND_ASSIGN(const std::string csv, FormatWatchlistCsv(entries));
  EXPECT_THAT(csv, ::testing::StartsWith("id,name,aliases,type,countries,identifiers,list\n42,"));
  ASSERT_OK_AND_ASSIGN(const Watchlist from_csv, ParseWatchlist(csv, "l", "l.csv"));
  EXPECT_EQ(from_csv.entries(), entries);
  EXPECT_EQ(from_csv.version(), ContentVersion(csv));

  const std::string jsonl = FormatWatchlistJsonLines(entries);
  ASSERT_OK_AND_ASSIGN(const Watchlist from_json, ParseWatchlist(jsonl, "l", "l.jsonl"));
  EXPECT_EQ(from_json.entries(), entries);
  EXPECT_NE(from_json.version(), from_csv.version());
}

TEST(WatchlistFileTest, OfacSampleRoundTripsThroughBothFormats) {
  ASSERT_OK_AND_ASSIGN(
      const Watchlist sdn,
      LoadOfacSdn(vigil::testing::TestDataPath("sanctions/ofac_sdn_legacy_csv_2019")));
  std::vector<WatchlistEntry> entries = sdn.entries();
  for (WatchlistEntry& e : entries) e.programs.clear();  // not part of the format
  ASSERT_OK_AND_ASSIGN(const std::string csv, FormatWatchlistCsv(entries));
  ASSERT_OK_AND_ASSIGN(const Watchlist from_csv, ParseWatchlist(csv, "sdn", "sdn.csv"));
  EXPECT_TRUE(from_csv.entries() == entries);
  ASSERT_OK_AND_ASSIGN(const Watchlist from_json,
                       ParseWatchlist(FormatWatchlistJsonLines(entries), "sdn", "sdn.jsonl"));
  EXPECT_TRUE(from_json.entries() == entries);
}

TEST(WatchlistFileTest, LoadsFilesAndDefaultsListToTheFileName) {
  const std::string path = ::testing::TempDir() + "/pep_list.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << "\xEF\xBB\xBF"
           "name , id\r\n\"Jane Q\",j1\r\n\r\n";
  }
  ASSERT_OK_AND_ASSIGN(const Watchlist w, LoadWatchlistFile(path));
  EXPECT_EQ(w.name(), "pep_list.csv");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w.entries()[0].id, "j1");
  EXPECT_EQ(w.entries()[0].name, "Jane Q");
  EXPECT_EQ(w.entries()[0].list, "pep_list.csv");
  EXPECT_EQ(w.entries()[0].type, Type::kUnknown);
  std::remove(path.c_str());

  const std::string jpath = ::testing::TempDir() + "/x.jsonl";
  {
    std::ofstream out(jpath, std::ios::binary);
    out << "\n  {\"id\":\"1\",\"name\":\"A\",\"aliases\":null,\"type\":\"individual\","
           "\"countries\":[\"Cuba\"]}\n";
  }
  ASSERT_OK_AND_ASSIGN(const Watchlist j, LoadWatchlistFile(jpath));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j.entries()[0].type, Type::kIndividual);
  EXPECT_THAT(j.entries()[0].countries, ElementsAre("Cuba"));
  std::remove(jpath.c_str());

  EXPECT_THAT(LoadWatchlistFile("/nonexistent/list.csv"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/list.csv")));
}

TEST(WatchlistFileTest, CsvSplitsListsOnSemicolons) {
  ASSERT_OK_AND_ASSIGN(
      const Watchlist w,
      ParseWatchlist("id,name,aliases,countries\n1,A, B ; C;;,Cuba\n", "l", "l.csv"));
  EXPECT_THAT(w.entries()[0].aliases, ElementsAre("B", "C"));
  EXPECT_THAT(w.entries()[0].countries, ElementsAre("Cuba"));
}

void ExpectError(std::string_view content, std::string_view message) {
  EXPECT_THAT(ParseWatchlist(content, "l", "l.txt"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(std::string(message))))
      << content;
}

TEST(WatchlistFileTest, CsvErrorsNameLineAndField) {
  ExpectError("", "l.txt: empty: expected a CSV header");
  ExpectError("id,name,program\n", "l.txt:1: field program: unknown column");
  ExpectError("id,name,id\n", "l.txt:1: field id: column appears twice");
  ExpectError("id,aliases\n", "l.txt:1: field name: missing column");
  ExpectError("id,name\n1,A\n2\n", "l.txt:3: expected 2 fields (as the header), got 1");
  ExpectError("id,name\n1,A\n ,B\n", "l.txt:3: field id: empty");
  ExpectError("id,name\n1,\n", "l.txt:2: field name: empty");
  ExpectError("id,name\n1,A\n\n1,B\n", "l.txt:4: field id: duplicate id \"1\" (first on line 2)");
  ExpectError("id,name,type\n1,A,person\n", "l.txt:2: field type: unknown type \"person\"");
  ExpectError("id,name\n1,\"A\n", "l.txt:2: field 2: quoted field not terminated");
}

TEST(WatchlistFileTest, JsonLinesErrorsNameLineAndMember) {
  ExpectError("{\"id\":\"1\",\"name\":\"A\"}\n{\"id\":\"2\",\"name\":\"B\",\"program\":\"X\"}",
              "l.txt:2: field program: unknown member");
  ExpectError("{\"id\":\"1\"}", "l.txt:1: field name: empty");
  ExpectError("{\"name\":\"A\"}", "l.txt:1: field id: empty");
  ExpectError("{\"id\":1,\"name\":\"A\"}", "l.txt:1: field id: expected a string");
  ExpectError("{\"id\":\"1\",\"name\":\"A\",\"aliases\":\"B\"}",
              "l.txt:1: field aliases: expected an array of strings");
  ExpectError("{\"id\":\"1\",\"name\":\"A\",\"countries\":[\"X\",2]}",
              "l.txt:1: field countries: element 1: expected a string");
  ExpectError("{\"id\":\"1\",\"name\":\"A\",\"type\":\"ship\"}",
              "l.txt:1: field type: unknown type \"ship\"");
  ExpectError("{\"id\":\"1\",\"name\":\"A\"}\n\n{\"id\":\"1\",\"name\":\"B\"}",
              "l.txt:3: field id: duplicate id \"1\" (first on line 1)");
  ExpectError("{\"id\":\"1\",\"name\":\"A\"}\n{\"id\":", "l.txt:2: not a JSON value");
  ExpectError("{\"id\":\"1\",\"name\":\"A\"}\n[1]", "l.txt:2: expected a JSON object");
}

TEST(WatchlistFileTest, CsvWriterRejectsValuesThatWouldNotReadBack) {
  std::vector<WatchlistEntry> entries = SampleEntries();
  entries[0].aliases.push_back("A;B");
  EXPECT_THAT(FormatWatchlistCsv(entries),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 0: field aliases: element \"A;B\"")));
  entries = SampleEntries();
  entries[2].name = " SEA STAR";
  EXPECT_THAT(FormatWatchlistCsv(entries),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 2: field name: leading or trailing spaces")));
}

}  // namespace
}  // namespace vigil::screening
