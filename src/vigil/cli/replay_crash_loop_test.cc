// Long checks (make test-long): `vigil replay` killed at many random points of a generated
// stream, each run resuming from the last checkpoint, must end with the features output of an
// uninterrupted run, and with every decision recorded in the audit log exactly once.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::SameFile;

int RunVigil(std::vector<std::string> args) {
  return ::vigil::testing::RunProcess(VIGIL_BINARY, std::move(args));
}

TEST(ReplayCrashLoop, ManyKillsResumeToTheUninterruptedOutput) {
  const std::string dir = ::testing::TempDir() + "/crash_loop";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string fx = ::vigil::testing::SourceDir() + "/data/fx_rates.csv";
  const std::string input = dir + "/tx.csv";
  ASSERT_EQ(RunVigil({"gen", "--accounts", "20000", "--days", "20", "--seed", "3", "--fx-rates", fx,
                      "--out", input}),
            0);
  ASSERT_EQ(RunVigil({"replay", input, "--fx-rates", fx, "--quiet", "--features-out",
                      dir + "/clean.csv"}),
            0);
  const std::vector<std::string> base = {"replay",
                                         input,
                                         "--fx-rates",
                                         fx,
                                         "--quiet",
                                         "--data-dir",
                                         dir + "/state",
                                         "--features-out",
                                         dir + "/resumed.csv",
                                         "--checkpoint-every",
                                         "7919"};
  std::mt19937 rng(17);
  int crashes = 0;
  for (int attempt = 0; attempt < 12; ++attempt) {
    std::vector<std::string> args = base;
    args.push_back("--crash-after");
    args.push_back(std::to_string(1000 + rng() % 30000));
    const int code = RunVigil(args);
    if (code == 0) break;  // the stream ended before the crash point
    ASSERT_EQ(code, 137);
    ++crashes;
  }
  EXPECT_GE(crashes, 5);
  ASSERT_EQ(RunVigil(base), 0);
  EXPECT_TRUE(SameFile(dir + "/resumed.csv", dir + "/clean.csv"));
  std::filesystem::remove_all(dir);
}

TEST(ReplayCrashLoop, KilledReplaysRecordEveryDecisionOnce) {
  const std::string dir = ::testing::TempDir() + "/crash_loop_audit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string source = ::vigil::testing::SourceDir();
  const std::string fx = source + "/data/fx_rates.csv";
  const std::string input = dir + "/tx.csv";
  ASSERT_EQ(RunVigil({"gen", "--accounts", "3000", "--days", "10", "--seed", "5", "--fx-rates", fx,
                      "--out", input}),
            0);
  const std::vector<std::string> base = {
      "replay", input, "--fx-rates", fx, "--quiet", "--data-dir", dir + "/state", "--policy",
      source + "/policies/default.yaml", "--checkpoint-every", "3001", "--summary-json",
      dir + "/summary.json"};
  std::mt19937 rng(23);
  int crashes = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::vector<std::string> args = base;
    args.push_back("--crash-after");
    args.push_back(std::to_string(500 + rng() % 6000));
    const int code = RunVigil(args);
    if (code == 0) break;
    ASSERT_EQ(code, 137);
    ++crashes;
  }
  EXPECT_GE(crashes, 3);
  ASSERT_EQ(RunVigil(base), 0);
  const nlohmann::json summary =
      nlohmann::json::parse(::vigil::testing::ReadFile(dir + "/summary.json"));
  // Every record of the input decided and recorded once: the log holds exactly as many
  // decisions as the input has records (a repeat would make it longer, a loss shorter).
  EXPECT_EQ(summary["audit"]["log_size"], summary["total_in_order"]);
  EXPECT_EQ(RunVigil({"audit", "verify", "--data-dir", dir + "/state"}), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
