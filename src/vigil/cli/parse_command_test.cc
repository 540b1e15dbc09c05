// `vigil parse` end to end over testdata's message corpora: every message vigil reads prints one
// JSON line per transaction (exit 0), messages of other types exit 1, invalid ones exit 2, and
// the refusals name the file, the line and the reason.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::TestDataPath;

struct Corpus {
  std::vector<std::string> readable, unsupported, invalid;
};

// The message files of testdata/swift_mt and testdata/iso20022, by what their manifests say.
Corpus Load() {
  Corpus c;
  for (const std::string dir : {"swift_mt", "iso20022"}) {
    std::istringstream manifest(ReadFile(TestDataPath(dir + "/manifest.csv")));
    std::string line;
    std::getline(manifest, line);
    while (std::getline(manifest, line)) {
      // id, file, type, then (MT) io, role / (MX) has_business_app_header, role: no quotes.
      const std::vector<std::string> f = absl::StrSplit(line, ',');
      const std::string path = TestDataPath(dir + "/" + f[1]);
      const std::string& type = f[2];
      const std::string& role = f[4];
      const bool read_type = dir == "swift_mt" ? !absl::StartsWith(type, "205")
                                               : (absl::StartsWith(type, "pacs.008") ||
                                                  absl::StartsWith(type, "pacs.009"));
      if (role == "known_invalid") {
        c.invalid.push_back(path);
      } else if (role != "valid_sample" && role != "sample") {
        // Fragments; an MT205 one is refused for its type before its fields.
        (read_type ? c.invalid : c.unsupported).push_back(path);
      } else {
        (read_type ? c.readable : c.unsupported).push_back(path);
      }
    }
  }
  return c;
}

class ParseCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/parse_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Exit code; *json the JSON lines of the output, *errors the other lines.
  int Parse(const std::vector<std::string>& files, std::vector<nlohmann::json>* json,
            std::vector<std::string>* errors) {
    std::vector<std::string> args = {"parse"};
    args.insert(args.end(), files.begin(), files.end());
    const int code = ::vigil::testing::RunProcess(VIGIL_BINARY, args, dir_ + "/out");
    std::istringstream out(ReadFile(dir_ + "/out"));
    for (std::string line; std::getline(out, line);) {
      if (absl::StartsWith(line, "{")) {
        json->push_back(nlohmann::json::parse(line));
      } else {
        errors->push_back(line);
      }
    }
    return code;
  }

  std::string dir_;
};

TEST_F(ParseCommandTest, TheCorpusExitsZeroOneOrTwoAsTheManifestsSay) {
  const Corpus c = Load();
  ASSERT_GE(c.readable.size(), 77u + 40u);  // 77 MT, 40 pacs.008/009
  std::vector<nlohmann::json> json;
  std::vector<std::string> errors;
  EXPECT_EQ(Parse(c.readable, &json, &errors), 0);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_GE(json.size(), c.readable.size());
  for (const nlohmann::json& tx : json) {
    EXPECT_FALSE(tx["id"].get<std::string>().empty());
    EXPECT_FALSE(tx["originator"]["account_id"].get<std::string>().empty()) << tx.dump();
    EXPECT_FALSE(tx["beneficiary"]["account_id"].get<std::string>().empty()) << tx.dump();
    EXPECT_TRUE(tx.contains("message_type")) << tx.dump();
  }

  json.clear();
  errors.clear();
  EXPECT_EQ(Parse(c.unsupported, &json, &errors), 1);
  EXPECT_TRUE(json.empty());
  ASSERT_EQ(errors.size(), c.unsupported.size());
  for (const std::string& e : errors) {
    EXPECT_TRUE(absl::StrContains(e, "unsupported message type")) << e;
    EXPECT_TRUE(absl::EndsWith(e, "[unsupported_message_type]")) << e;
  }

  json.clear();
  errors.clear();
  EXPECT_EQ(Parse(c.invalid, &json, &errors), 2);
  EXPECT_TRUE(json.empty());
  ASSERT_EQ(errors.size(), c.invalid.size());
  for (const std::string& e : errors) EXPECT_TRUE(absl::EndsWith(e, "[invalid_message]")) << e;

  // Invalid beats unsupported; a readable file still prints.
  json.clear();
  errors.clear();
  EXPECT_EQ(Parse({c.unsupported[0], c.readable[0], c.invalid[0]}, &json, &errors), 2);
  EXPECT_EQ(json.size(), 1u);
  EXPECT_EQ(errors.size(), 2u);
}

TEST_F(ParseCommandTest, NamesWhereAMessageIsWrong) {
  std::string mt = ReadFile(TestDataPath("swift_mt/messages/mt103_0002.fin"));
  mt.replace(mt.find(":71A:"), 8, ":71A:XYZ");
  const std::string file = dir_ + "/bad.fin";
  std::ofstream(file) << "\n\n" << mt;
  std::vector<nlohmann::json> json;
  std::vector<std::string> errors;
  EXPECT_EQ(Parse({file}, &json, &errors), 2);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(errors[0], "bad.fin:3: SWIFT MT block 4, line ")) << errors[0];
  EXPECT_TRUE(
      absl::StrContains(errors[0], "field :71A: details of charges must be OUR, BEN or SHA"))
      << errors[0];
  EXPECT_EQ(Parse({dir_ + "/missing.fin"}, &json, &errors), 2);  // CLI11: no such file
}

// An RJE file as SWIFT Alliance exports it, each message with its ACK in front and "$" between
// them (the ACK is the corpus's fragments/mt103_0046.fin's, the messages the corpus's): the
// acknowledged messages print with the ACK's reference and time; the NAKed one is refused,
// naming its line and the NAK's error code, and the others still print.
TEST_F(ParseCommandTest, ReadsAnRjeFileWithAcknowledgementsAndRefusesTheNakedMessage) {
  const std::string acked = ReadFile(TestDataPath("swift_mt/fragments/mt103_0046.fin"));
  const std::string ack = acked.substr(0, acked.find("{1:", 1));
  std::string nak = ack;
  nak.replace(nak.find("{451:0}"), 7, "{451:1}{405:H25}");
  const std::string a = ReadFile(TestDataPath("swift_mt/messages/mt103_0071.fin"));
  const std::string b = ReadFile(TestDataPath("swift_mt/messages/mt103_0072.fin"));
  const std::string c = ReadFile(TestDataPath("swift_mt/messages/mt103_0075.fin"));
  const std::string file = dir_ + "/bulk.rje";
  std::ofstream(file) << ack << a << "$" << nak << b << "$" << ack << c << "\n";
  std::vector<nlohmann::json> json;
  std::vector<std::string> errors;
  EXPECT_EQ(Parse({file}, &json, &errors), 2);
  ASSERT_EQ(json.size(), 2u);
  for (const nlohmann::json& tx : json) {
    EXPECT_EQ(tx["ack_reference"], "190325AAAALT2XAXXX0000000000") << tx.dump();
    EXPECT_EQ(tx["ack_time"], "2019-03-25T06:12:00.000000Z") << tx.dump();
    EXPECT_EQ(tx["message_type"], "MT103") << tx.dump();
  }
  EXPECT_EQ(json[0]["reference"], "22342343");
  EXPECT_EQ(json[1]["reference"], "OMF000000724103");
  ASSERT_EQ(errors.size(), 1u);
  const int nak_line = 1 + static_cast<int>(std::count(a.begin(), a.end(), '\n'));
  EXPECT_EQ(errors[0],
            "bulk.rje:" + std::to_string(nak_line) +
                ": SWIFT MT block 4 (ACK), line 1: the network refused this MT103 \"INGDESMM\" "
                "(NAK {451:1}, error code \"H25\" in {405:}); a refused message is not read as "
                "a payment [invalid_message]");
}

}  // namespace
}  // namespace vigil
