#include "vigil/config/option_set.h"

#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::config {
namespace {

using ::testing::HasSubstr;

struct Settings {
  bool durable = true;
  int64_t rows = 50;
  double share = 0.5;
  std::string path;
  std::string hash = "sha256";
  std::vector<std::string> lists;
  std::vector<std::pair<std::string, std::string>> roles;
  std::chrono::hours period{24 * 30};
  std::string model;
};

class OptionSetTest : public ::testing::Test {
 protected:
  OptionSetTest() {
    set_.Bool({.key = "audit.durable_ack", .help = "Durable", .flag = "durable-ack"}, &s_.durable);
    set_.Integer({.key = "drift.min_rows", .help = "Rows", .uses = kServe}, &s_.rows, 1, 1000);
    set_.Number({.key = "limits.share", .help = "Share"}, &s_.share, 0, 1, /*above_min=*/true);
    set_.Text({.key = "data_dir", .help = "Dir", .value_name = "DIR"}, &s_.path);
    set_.Choice({.key = "audit.hash", .help = "Hash"}, &s_.hash, {"sha256", "sm3"});
    set_.List({.key = "screening.lists", .help = "Lists", .flag = "screening-list"}, &s_.lists);
    set_.Map({.key = "auth.roles", .help = "Roles"}, &s_.roles);
    set_.Duration<std::chrono::duration<int64_t, std::ratio<86400>>>(
        {.key = "drift.false_alarm_days", .help = "Days"}, &s_.period, 1, 3650);
    set_.Text({.key = "model.file", .help = "Model", .flag = "model", .section_shorthand = true},
              &s_.model);
    set_.Renamed("model_ref", "model.ref");
  }
  Settings s_;
  OptionSet set_;
};

TEST_F(OptionSetTest, ReadsNestedKeysAndRemembersWhere) {
  ASSERT_TRUE(set_.ReadYaml("audit:\n  durable_ack: false\n  hash: sm3\ndrift:\n  min_rows: 80\n"
                            "  false_alarm_days: 2\nscreening:\n  lists: [a.csv, b]\n"
                            "auth:\n  roles: {\"CN=x,O=y\": scorer}\nmodel: m.json\n",
                            "c.yaml")
                  .ok());
  EXPECT_FALSE(s_.durable);
  EXPECT_EQ(s_.hash, "sm3");
  EXPECT_EQ(s_.rows, 80);
  EXPECT_EQ(s_.period, std::chrono::hours(48));
  EXPECT_THAT(s_.lists, ::testing::ElementsAre("a.csv", "b"));
  ASSERT_EQ(s_.roles.size(), 1u);
  EXPECT_EQ(s_.roles[0].first, "CN=x,O=y");
  EXPECT_EQ(s_.model, "m.json");  // the section's shorthand
  EXPECT_EQ(set_.Find("drift.min_rows")->source, "c.yaml:5:13");
  EXPECT_EQ(set_.Find("data_dir")->source, "default");
}

TEST_F(OptionSetTest, ReportsEveryProblemAtOnceWithPositions) {
  const absl::Status s = set_.ReadYaml(
      "audit:\n  durable_ak: true\n  hash: md5\ndrift:\n  min_rows: 0\nmodel_ref: 12345678\n"
      "bogus: 1\ndrift_x: {}\nscreening: x\n",
      "c.yaml");
  ASSERT_FALSE(s.ok());
  const std::string m(s.message());
  EXPECT_THAT(m, HasSubstr("c.yaml:2:3: unknown key 'durable_ak' in audit (did you mean "
                           "'durable_ack'?)"));
  EXPECT_THAT(m, HasSubstr("c.yaml:3:9: audit.hash: must be sha256 or sm3, not \"md5\""));
  EXPECT_THAT(m, HasSubstr("c.yaml:5:13: drift.min_rows: must be a whole number from 1 to 1000"));
  EXPECT_THAT(m, HasSubstr("c.yaml:6:1: 'model_ref' is now 'model.ref'"));
  EXPECT_THAT(m, HasSubstr("c.yaml:7:1: unknown key 'bogus' in the configuration"));
  EXPECT_THAT(m, HasSubstr("did you mean 'drift'?"));
  EXPECT_THAT(m, HasSubstr("c.yaml:9:12: screening: must be a mapping (lists)"));
  // Nothing half-applied counts as valid: the good values are set, the bad ones are not.
  EXPECT_EQ(s_.rows, 50);
}

TEST_F(OptionSetTest, RefusesBadYamlAndScalarsAtTheTop) {
  EXPECT_THAT(std::string(set_.ReadYaml("a: [", "c.yaml").message()),
              HasSubstr("not valid YAML"));
  EXPECT_THAT(std::string(set_.ReadYaml("- a\n- b\n", "c.yaml").message()),
              HasSubstr("a mapping of keys"));
  EXPECT_TRUE(set_.ReadYaml("", "empty.yaml").ok());
  EXPECT_THAT(std::string(set_.ReadYaml("data_dir: [a]\n", "c.yaml").message()),
              HasSubstr("c.yaml:1:11: data_dir: takes a single value (DIR)"));
  EXPECT_THAT(std::string(set_.ReadYaml("data_dir:\n", "c.yaml").message()),
              HasSubstr("data_dir: must be a non-empty string"));
}

TEST_F(OptionSetTest, FlagsPassTheSameChecksAndNameTheFlag) {
  EXPECT_TRUE(set_.Set("drift.min_rows", "7", "--drift-min-rows").ok());
  EXPECT_EQ(s_.rows, 7);
  EXPECT_EQ(set_.Find("drift.min_rows")->source, "--drift-min-rows");
  const absl::Status bad = set_.Set("drift.min_rows", "1001", "--drift-min-rows");
  EXPECT_EQ(bad.message(),
            "--drift-min-rows (drift.min_rows): must be a whole number from 1 to 1000");
  EXPECT_FALSE(set_.Set("limits.share", "0", "--limits-share").ok());  // above 0
  EXPECT_TRUE(set_.Set("limits.share", "1", "--limits-share").ok());
  EXPECT_THAT(std::string(set_.Set("drift.min_row", "1", "x").message()),
              HasSubstr("did you mean 'drift.min_rows'?"));
  EXPECT_FALSE(set_.Set("auth.roles", "x", "--x").ok());  // mappings live in files
  EXPECT_FALSE(set_.Set("audit.durable_ack", "maybe", "--durable-ack").ok());
}

TEST_F(OptionSetTest, ALaterSourceReplacesAList) {
  ASSERT_TRUE(set_.ReadYaml("screening: {lists: [a, b]}\n", "c.yaml").ok());
  ASSERT_TRUE(set_.Set("screening.lists", "c", "--screening-list").ok());
  ASSERT_TRUE(set_.Set("screening.lists", "d", "--screening-list").ok());
  EXPECT_THAT(s_.lists, ::testing::ElementsAre("c", "d"));
  ASSERT_TRUE(set_.Set("screening.lists", "", "--other").ok());  // empties it
  EXPECT_TRUE(s_.lists.empty());
}

TEST_F(OptionSetTest, FlagsAreDerivedFromKeysUnlessNamed) {
  EXPECT_EQ(set_.Find("drift.false_alarm_days")->flag(), "--drift-false-alarm-days");
  EXPECT_EQ(set_.Find("audit.durable_ack")->flag(), "--durable-ack");
  EXPECT_EQ(set_.Find("auth.roles")->flag(), "");
  EXPECT_EQ(set_.FindFlag("--screening-list")->spec.key, "screening.lists");
  EXPECT_EQ(set_.FindFlag("--nothing"), nullptr);
}

TEST_F(OptionSetTest, PrintsTheEffectiveConfigurationWithSources) {
  ASSERT_TRUE(set_.ReadYaml("data_dir: \"state: a\"\n", "c.yaml").ok());
  ASSERT_TRUE(set_.Set("drift.min_rows", "9", "--drift-min-rows").ok());
  const std::string printed = set_.Print();
  EXPECT_THAT(printed, HasSubstr("data_dir: \"state: a\"  # c.yaml:1:11\n"));
  EXPECT_THAT(printed, HasSubstr("drift.min_rows: 9  # --drift-min-rows\n"));
  EXPECT_THAT(printed, HasSubstr("drift.false_alarm_days: 30  # default\n"));
  EXPECT_THAT(set_.Print(kReplay), ::testing::Not(HasSubstr("drift.min_rows")));
  // What Print writes reads back to the same values.
  Settings copy;
  OptionSet again;
  again.Text({.key = "data_dir", .help = "Dir"}, &copy.path);
  ASSERT_TRUE(again.ReadYaml("data_dir: \"state: a\"\n", "p.yaml").ok());
  EXPECT_EQ(copy.path, "state: a");
}

TEST_F(OptionSetTest, ReferenceListsEveryOptionBySection) {
  const std::string ref = set_.Reference("Configuration", "Every option.");
  EXPECT_THAT(ref, HasSubstr("## `audit`"));
  EXPECT_THAT(ref, HasSubstr("| `audit.hash` | `--audit-hash` | sha256 \\| sm3 | `sha256` | "
                             "serve, replay, bench | Hash |"));
  EXPECT_THAT(ref, HasSubstr("| `drift.min_rows` | `--drift-min-rows` | 1 to 1000 | `50` | serve |"));
  EXPECT_THAT(ref, HasSubstr("| `auth.roles` | (file only) | mapping |"));
}

TEST(OptionSetDeathTest, AKeyDeclaredTwiceIsABug) {
  bool a = false, b = false;
  OptionSet set;
  set.Bool({.key = "x", .help = "x"}, &a);
  EXPECT_DEATH(set.Bool({.key = "x", .help = "again"}, &b), "");
}

}  // namespace
}  // namespace vigil::config
