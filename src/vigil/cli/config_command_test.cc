// `vigil config` and the one configuration surface end to end: serve, replay and bench take
// the same options spelled alike, through the same checks, and print where values came from.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

class ConfigCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/config_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result Run(const std::vector<std::string>& args) {
    const std::string log = dir_ + "/vigil.log";
    Result r;
    r.exit_code = ::vigil::testing::RunProcess(VIGIL_BINARY, args, log);
    r.out = ::vigil::testing::ReadFile(log);
    return r;
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(ConfigCommandTest, CheckReportsEveryProblemWithItsPlace) {
  const std::string bad = Write("bad.yaml", "data_dir: d\nworkers: {thread: 4}\ndrift:\n"
                                            "  min_rows: 0\nplaintext: true\n");
  const Result r = Run({"config", "check", bad});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("bad.yaml:2:11: unknown key 'thread' in workers (did you mean "
                               "'threads'?)"));
  EXPECT_THAT(r.out, HasSubstr("bad.yaml:4:13: drift.min_rows: must be a whole number from 1"));

  const std::string good = Write("good.yaml", "data_dir: d\nplaintext: true\n");
  EXPECT_EQ(Run({"config", "check", good}).exit_code, 0);
  // The combination, as vigil serve checks it: no TLS and no plaintext.
  const std::string no_tls = Write("no_tls.yaml", "data_dir: d\n");
  const Result refused = Run({"config", "check", no_tls});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.out, HasSubstr("no TLS certificate"));
  EXPECT_EQ(Run({"config", "check", no_tls, "--for", "replay"}).exit_code, 0);
  EXPECT_EQ(Run({"config", "check", dir_ + "/missing.yaml"}).exit_code, 2);
}

TEST_F(ConfigCommandTest, PrintShowsWhereEachValueCameFrom) {
  const std::string file = Write("serve.yaml", "data_dir: state\nworkers: {threads: 4}\n");
  const Result r = Run({"config", "print", "--config", file, "--workers", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("data_dir: state  # " + file + ":1:11\n"));
  EXPECT_THAT(r.out, HasSubstr("workers.threads: 8  # --workers\n"));
  EXPECT_THAT(r.out, HasSubstr("drift.short_window: 60/10  # default\n"));
  EXPECT_THAT(Run({"config", "print", "--for", "replay"}).out, Not(HasSubstr("listen:")));
}

// One spelling and one check per option: the same bad value is refused by serve, replay and
// bench with the same words, and the spellings of earlier versions are gone from all three.
TEST_F(ConfigCommandTest, ServeReplayAndBenchShareOptions) {
  const std::string expected =
      "--drift-min-rows (drift.min_rows): must be a whole number from 1 to 100000000";
  const std::string sample = ::vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"serve", "--data-dir", dir_, "--plaintext", "--drift-min-rows",
                                 "0"},
        std::vector<std::string>{"replay", sample, "--drift-min-rows", "0"},
        std::vector<std::string>{"bench", "http", "--drift-min-rows", "0"},
        std::vector<std::string>{"bench", "drift", sample, "--drift-min-rows", "0"}}) {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr(expected)) << args[0];
  }
  for (const char* command : {"serve", "replay"}) {
    const Result help = Run({command, "--help"});
    EXPECT_THAT(help.out, HasSubstr("--drift-measured-null")) << command;
    EXPECT_THAT(help.out, HasSubstr("--drift-short-window")) << command;
    EXPECT_THAT(help.out, HasSubstr("--screening-list")) << command;
    EXPECT_THAT(help.out, Not(HasSubstr("--drift-null "))) << command;
    EXPECT_THAT(help.out, Not(HasSubstr("--drift-short "))) << command;
  }
}

TEST_F(ConfigCommandTest, BooleansTakeNoAndAnExplicitValue) {
  const Result off = Run({"config", "print", "--no-drift-freeze", "--gpu=false", "--plaintext"});
  ASSERT_EQ(off.exit_code, 0) << off.out;
  EXPECT_THAT(off.out, HasSubstr("drift.freeze: false  # --drift-freeze\n"));
  EXPECT_THAT(off.out, HasSubstr("gpu.enabled: false  # --gpu\n"));
  EXPECT_THAT(off.out, HasSubstr("plaintext: true  # --plaintext\n"));
  const Result lists = Run({"config", "print", "--drift-exclude", "a,b", "--screening-list", "x",
                            "--screening-list", "y"});
  EXPECT_THAT(lists.out, HasSubstr("drift.exclude: [a, b]  # --drift-exclude\n"));
  EXPECT_THAT(lists.out, HasSubstr("screening.lists: [x, y]  # --screening-list\n"));
}

}  // namespace
}  // namespace vigil
