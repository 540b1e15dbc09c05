// Long check (make test-long): `vigil replay` killed at many random points of a 200,000-row
// generated stream, each run resuming from the last checkpoint, must end with the features output
// and summary counts of an uninterrupted run.
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/testing/testdata.h"

extern char** environ;

namespace vigil {
namespace {

int RunVigil(std::vector<std::string> args) {
  args.insert(args.begin(), VIGIL_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, VIGIL_BINARY, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Compares two files line by line and reports only the first difference (gtest would otherwise
// diff the whole text of two large files).
::testing::AssertionResult SameFile(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(fa, la));
    const bool gb = static_cast<bool>(std::getline(fb, lb));
    if (!ga && !gb) return ::testing::AssertionSuccess();
    if (ga != gb || la != lb) {
      return ::testing::AssertionFailure() << a << " and " << b << " differ at line " << line
                                           << ":\n  " << (ga ? la : "<end>") << "\n  "
                                           << (gb ? lb : "<end>");
    }
  }
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
  const std::vector<std::string> base = {"replay", input, "--fx-rates", fx, "--quiet",
                                         "--data-dir", dir + "/state", "--features-out",
                                         dir + "/resumed.csv", "--checkpoint-every", "7919"};
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

}  // namespace
}  // namespace vigil
