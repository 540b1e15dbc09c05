// `vigil screen` end to end: hits from the OFAC sample and from a list file, by name and by
// identifier, as JSON lines; exit 0 without hits, 1 with, 2 when a list cannot be read.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::TestDataPath;

class ScreenCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/screen_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    ofac_ = TestDataPath("sanctions/ofac_sdn_legacy_csv_2019");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Exit code; *json the JSON lines of the output, *other the other lines.
  int Screen(const std::vector<std::string>& args, std::vector<nlohmann::json>* json,
             std::vector<std::string>* other) {
    std::vector<std::string> all = {"screen"};
    all.insert(all.end(), args.begin(), args.end());
    const int code = ::vigil::testing::RunProcess(VIGIL_BINARY, all, dir_ + "/out");
    std::istringstream out(ReadFile(dir_ + "/out"));
    for (std::string line; std::getline(out, line);) {
      if (absl::StartsWith(line, "{")) {
        json->push_back(nlohmann::json::parse(line));
      } else {
        other->push_back(line);
      }
    }
    return code;
  }

  std::string dir_, ofac_;
};

TEST_F(ScreenCommandTest, FindsSdnEntriesByNameAndAliasBestFirst) {
  std::vector<nlohmann::json> json;
  std::vector<std::string> other;
  ASSERT_EQ(Screen({"--list", ofac_, "Banco Nacional de Cuba", "Ayman al-Zawahiri"}, &json, &other),
            1);
  ASSERT_EQ(json.size(), 2u) << (other.empty() ? "" : other.front());
  EXPECT_EQ(json[0]["query"], "Banco Nacional de Cuba");
  ASSERT_FALSE(json[0]["hits"].empty());
  const nlohmann::json& bnc = json[0]["hits"][0];
  EXPECT_EQ(bnc["entry_id"], "306");
  EXPECT_EQ(bnc["name"], "BANCO NACIONAL DE CUBA");
  EXPECT_EQ(bnc["matched_alias"], "BANCO NACIONAL DE CUBA");
  EXPECT_EQ(bnc["list"], "OFAC SDN");
  EXPECT_DOUBLE_EQ(bnc["score"].get<double>(), 1.0);

  // "AL ZAWAHIRI, Dr. Ayman": the title is dropped, the order does not matter.
  const nlohmann::json& hits = json[1]["hits"];
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0]["entry_id"], "2676");
  EXPECT_GE(hits[0]["score"].get<double>(), 0.95);
  for (size_t i = 1; i < hits.size(); ++i) {
    EXPECT_LE(hits[i]["score"].get<double>(), hits[i - 1]["score"].get<double>());
    EXPECT_GE(hits[i]["score"].get<double>(), 0.88);
  }
}

TEST_F(ScreenCommandTest, ScreensSeveralListsAndStdinAndExitsZeroWithoutHits) {
  const std::string list = dir_ + "/pep.csv";
  std::ofstream(list) << "id,name,aliases,type,countries,identifiers,list\n"
                         "P1,Maria Exampleova,Mariya Ekzampleova,individual,Bulgaria,,PEP TEST\n";
  std::vector<nlohmann::json> json;
  std::vector<std::string> other;
  EXPECT_EQ(Screen({"--list", ofac_, "--list", list, "maria exampleova"}, &json, &other), 1);
  ASSERT_EQ(json.size(), 1u);
  ASSERT_EQ(json[0]["hits"].size(), 1u);
  EXPECT_EQ(json[0]["hits"][0]["list"], "PEP TEST");
  EXPECT_EQ(json[0]["hits"][0]["entry_id"], "P1");

  json.clear();
  std::ofstream(dir_ + "/names.txt") << "Blue River Logistics\nGreta Lindqvist\n";
  const int code = ::vigil::testing::RunProcess(
      "/bin/sh", {"-c", std::string(VIGIL_BINARY) + " screen --list " + list + " --list " + ofac_ +
                            " < " + dir_ + "/names.txt"},
      dir_ + "/out");
  EXPECT_EQ(code, 0);
  std::istringstream out(ReadFile(dir_ + "/out"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[0]),
            nlohmann::json::parse(R"({"query":"Blue River Logistics","hits":[]})"));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["query"], "Greta Lindqvist");
}

TEST_F(ScreenCommandTest, IdentifiersMatchExactlyAndBicsAcrossBranches) {
  std::vector<nlohmann::json> json;
  std::vector<std::string> other;
  // KOREA DAESONG BANK lists SWIFT/BIC KDBKKPPY; a branch code still finds it.
  EXPECT_EQ(Screen({"--list", ofac_, "--identifier", "KDBKKPPY", "kdbk kp py 123", "KDBKKPPZ"},
                   &json, &other),
            1);
  ASSERT_EQ(json.size(), 3u);
  ASSERT_EQ(json[0]["hits"].size(), 1u);
  EXPECT_EQ(json[0]["hits"][0]["entry_id"], "12312");
  EXPECT_EQ(json[0]["hits"][0]["matched_alias"], "KDBKKPPY");
  ASSERT_EQ(json[1]["hits"].size(), 1u);
  EXPECT_EQ(json[1]["hits"][0]["entry_id"], "12312");
  EXPECT_TRUE(json[2]["hits"].empty());
}

TEST_F(ScreenCommandTest, AListThatCannotBeReadIsAUsageErrorNamingIt) {
  std::vector<nlohmann::json> json;
  std::vector<std::string> other;
  EXPECT_EQ(Screen({"--list", dir_ + "/missing.csv", "x"}, &json, &other), 2);
  EXPECT_TRUE(json.empty());
  ASSERT_FALSE(other.empty());
  EXPECT_TRUE(absl::StrContains(other.front(), "missing.csv")) << other.front();

  const std::string bad = dir_ + "/bad.csv";
  std::ofstream(bad) << "id,name,aliases,type,countries,identifiers,list\n"
                        "1,Someone,,spaceship,,,L\n";
  other.clear();
  EXPECT_EQ(Screen({"--list", bad, "x"}, &json, &other), 2);
  ASSERT_FALSE(other.empty());
  EXPECT_TRUE(absl::StrContains(other.front(), "bad.csv")) << other.front();
  EXPECT_TRUE(absl::StrContains(other.front(), "type")) << other.front();
}

}  // namespace
}  // namespace vigil
