// End-to-end tests of `vigil policy check` and `vigil policy diff` through the binary, and of the
// shipped default policy against the engine's real feature schema.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::ReadFile;
using ::vigil::testing::RunProcess;

class PolicyCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vigil_policy_cli_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& content) const {
    std::ofstream(Path(name), std::ios::binary) << content;
  }
  int Vigil(std::vector<std::string> args) const {
    return RunProcess(VIGIL_BINARY, std::move(args), Path("log"));
  }
  static std::string Shipped(const std::string& relative) {
    return testing::SourceDir() + "/" + relative;
  }

  std::string dir_;
};

TEST_F(PolicyCommandTest, ShippedDefaultPolicyIsValid) {
  ASSERT_EQ(Vigil({"policy", "check", Shipped("policies/default.yaml")}), 0)
      << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("policies/default.yaml: valid"));
  EXPECT_THAT(out, HasSubstr("version default-2026.12.1, sha256 "));
  EXPECT_THAT(out, HasSubstr("10 rules (6 active, 4 shadow)"));
}

TEST_F(PolicyCommandTest, CheckOnAStreamCallsOutRulesThatNeverFireOrAlwaysDo) {
  Write("p.yaml", R"(version: "1"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: everything
    when: amount_reporting >= 0
    action: tag
    reason: r
  - id: nothing
    when: amount_reporting < 0
    action: review
    reason: r
  - id: some
    when: payment_format_ach == 1
    action: review
    mode: shadow
    reason: r
)");
  ASSERT_EQ(Vigil({"policy", "check", Path("p.yaml"), "--stream",
                   Shipped("testdata/amlworld/HI-Small_Trans.sample.csv"), "--fx-rates",
                   Shipped("data/fx_rates.csv")}),
            0)
      << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("payments decided"));
  EXPECT_THAT(out, ::testing::ContainsRegex("everything +active +[0-9]+ +100.000%"));
  EXPECT_THAT(out, HasSubstr("warning: fires on 100.0% of the payments (more than 50%)"));
  EXPECT_THAT(out, ::testing::ContainsRegex("nothing +active +0 +0.000%"));
  EXPECT_THAT(out, HasSubstr("warning: never fires on this stream"));
  EXPECT_THAT(out, ::testing::ContainsRegex("some +shadow +[1-9][0-9]* "));
  EXPECT_THAT(out, HasSubstr("2 warnings"));
}

TEST_F(PolicyCommandTest, TuneWritesTheTunedPolicyAndReportsTheHeldOutPart) {
  Write("p.yaml", R"(# kept
version: "big-1"
thresholds: {review: 0.5, block: 0.9}
constants:
  floor: 100000
tune:
  floor: [0, 100000]
rules:
  - id: big
    when: amount_reporting >= floor
    action: review
    reason: "{amount_reporting}"
)");
  ASSERT_EQ(Vigil({"policy", "tune", Path("p.yaml"),
                   Shipped("testdata/amlworld/HI-Small_Trans.sample.csv"), "--budget", "30/day",
                   "--out", Path("tuned.yaml"), "--json-out", Path("tune.json"), "--grid", "21",
                   "--fx-rates", Shipped("data/fx_rates.csv")}),
            0)
      << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("budget: 30 payment alerts a day on the searched part: met"));
  EXPECT_THAT(out, HasSubstr("~ floor: 100000 → "));
  EXPECT_THAT(out, HasSubstr("held out"));
  const std::string tuned = ReadFile(Path("tuned.yaml"));
  EXPECT_THAT(tuned, HasSubstr("# kept\nversion: \"big-1-tuned\"\n"));
  EXPECT_EQ(tuned.find("floor: 100000\n"), std::string::npos) << tuned;
  // The tuned policy is a valid policy, and the JSON says what the text says.
  EXPECT_EQ(Vigil({"policy", "check", Path("tuned.yaml")}), 0) << ReadFile(Path("log"));
  const nlohmann::json j = nlohmann::json::parse(ReadFile(Path("tune.json")));
  EXPECT_EQ(j["within_budget"], true);
  EXPECT_LE(j["searched"]["after"]["alerts_per_day"].get<double>(), 30);
  EXPECT_GT(j["searched"]["after"]["recall"]["value"].get<double>(), 0);
  EXPECT_EQ(j["constants"][0]["constant"], "floor");
  EXPECT_LT(j["constants"][0]["after"].get<double>(), 100000);
  // A policy with nothing to tune is refused with the reason.
  Write("plain.yaml", "version: \"x\"\nthresholds: {review: 0.5, block: 0.9}\nrules: []\n");
  EXPECT_EQ(Vigil({"policy", "tune", Path("plain.yaml"),
                   Shipped("testdata/amlworld/HI-Small_Trans.sample.csv"), "--budget", "30",
                   "--out", Path("x.yaml"), "--fx-rates", Shipped("data/fx_rates.csv")}),
            1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("declares nothing tunable"));
  EXPECT_EQ(Vigil({"policy", "tune", Path("p.yaml"),
                   Shipped("testdata/amlworld/HI-Small_Trans.sample.csv"), "--budget", "lots",
                   "--out", Path("x.yaml")}),
            1);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("--budget: 'lots' is not a number"));
}

TEST_F(PolicyCommandTest, CheckRejectsABadPolicyWithEveryError) {
  Write("bad.yaml", R"(version: "2"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: typo
    when: orig_out_cnt_24h >= 3
    action: review
    reason: r
  - id: country
    when: bene_country in fatf_black_list
    action: block
    reason: r
)");
  // The shipped lists, by flag (the temporary directory has none beside the policy).
  EXPECT_EQ(Vigil({"policy", "check", Path("bad.yaml"), "--lists", Shipped("policies/lists")}), 1);
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("bad.yaml:5:11: unknown name 'orig_out_cnt_24h'"));
  EXPECT_THAT(out, HasSubstr("did you mean 'orig_out_count_24h'?"));
  EXPECT_THAT(out, HasSubstr("bad.yaml:9:27: unknown name 'fatf_black_list'"));
  EXPECT_THAT(out, HasSubstr("2 errors in"));
}

TEST_F(PolicyCommandTest, DiffListsRuleAndThresholdChanges) {
  Write("a.yaml", R"(version: "1"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: kept
    when: amount_reporting > 100
    action: review
    reason: r
  - id: changed
    when: orig_out_count_24h >= 3
    action: review
    reason: r
  - id: removed
    when: amount_reporting > 5
    action: tag
    reason: r
)");
  Write("b.yaml", R"(version: "2"
thresholds: {review: 0.4, block: 0.9}
rules:
  - id: kept
    when: amount_reporting > 100
    action: review
    reason: r
  - id: changed
    when: orig_out_count_24h >= 5
    action: block
    mode: shadow
    reason: r
  - id: added
    when: amount_reporting > 1000000
    action: block
    reason: r
)");
  ASSERT_EQ(Vigil({"policy", "diff", Path("a.yaml"), Path("b.yaml")}), 0) << ReadFile(Path("log"));
  const std::string out = ReadFile(Path("log"));
  EXPECT_THAT(out, HasSubstr("~ thresholds: review 0.5 → 0.4, block 0.9 → 0.9"));
  EXPECT_THAT(out, HasSubstr("- removed: tag, severity 50\n      when: amount_reporting > 5"));
  EXPECT_THAT(out, HasSubstr("+ added: block, severity 50"));
  EXPECT_THAT(out, HasSubstr("~ changed:\n    when: orig_out_count_24h >= 3\n"
                             "       → orig_out_count_24h >= 5\n    action: review → block\n"
                             "    mode: active → shadow"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("kept")));
  EXPECT_THAT(out, HasSubstr("4 changes"));
}

TEST_F(PolicyCommandTest, VersionsAreStoredActivatedAndRolledBack) {
  const std::string data = Path("data");
  ASSERT_EQ(Vigil({"policy", "add", Shipped("policies/default.yaml"), "--data-dir", data,
                   "--author", "alice", "--activate"}),
            0)
      << ReadFile(Path("log"));
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("stored as id 1: version default-2026.12.1"));
  Write("two.yaml", "version: \"two\"\nthresholds: {review: 0.2, block: 0.6}\nrules: []\n");
  ASSERT_EQ(Vigil({"policy", "add", Path("two.yaml"), "--data-dir", data, "--author", "bob"}), 0);
  ASSERT_EQ(Vigil({"policy", "activate", "2", "--data-dir", data, "--author", "bob"}), 0);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("active: id 2, version two"));
  ASSERT_EQ(Vigil({"policy", "rollback", "--data-dir", data, "--author", "carol"}), 0);
  EXPECT_THAT(ReadFile(Path("log")), HasSubstr("active: id 1, version default-2026.12.1"));
  ASSERT_EQ(Vigil({"policy", "list", "--data-dir", data}), 0);
  const std::string list = ReadFile(Path("log"));
  EXPECT_THAT(list, HasSubstr("* 1   default-2026.12.1"));
  EXPECT_THAT(list, HasSubstr("  2   two"));
  EXPECT_THAT(list, HasSubstr("activated id 2 by bob"));
  EXPECT_THAT(list, HasSubstr("activated id 1 by carol"));
  // Unknown ids and policies that do not check are refused, and change nothing.
  EXPECT_EQ(Vigil({"policy", "activate", "9", "--data-dir", data}), 1);
  Write("bad.yaml",
        "version: b\nthresholds: {review: 0.2, block: 0.6}\nrules:\n  - id: x\n"
        "    when: nope\n    action: review\n    reason: r\n");
  EXPECT_EQ(Vigil({"policy", "add", Path("bad.yaml"), "--data-dir", data}), 1);
  ASSERT_EQ(Vigil({"policy", "list", "--data-dir", data}), 0);
  EXPECT_THAT(ReadFile(Path("log")), ::testing::Not(HasSubstr("  3 ")));
}

}  // namespace
}  // namespace vigil
