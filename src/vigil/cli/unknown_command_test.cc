// The vigil binary on a command line with a word that names no command, at the top level and
// under a command with subcommands: a usage error (exit 2) that names the word and the nearest
// command on stderr, even when --help is on the line too; and --help alone still exits 0.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil {
namespace {

using ::vigil::testing::ReadFile;

class UnknownCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/unknown_command_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs vigil with "args"; its exit code, with stdout in out_ and stderr in err_.
  int Vigil(std::vector<std::string> args) {
    const std::string redirect = "exec \"$0\" \"$@\" > '" + dir_ + "/out' 2> '" + dir_ + "/err'";
    args.insert(args.begin(), {"-c", redirect, VIGIL_BINARY});
    const int code = ::vigil::testing::RunProcess("/bin/sh", args);
    out_ = ReadFile(dir_ + "/out");
    err_ = ReadFile(dir_ + "/err");
    return code;
  }

  std::string dir_, out_, err_;
};

TEST_F(UnknownCommandTest, TopLevelWordIsAUsageErrorEvenWithHelp) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"no-such-command"},
                                               {"no-such-command", "--help"},
                                               {"--help", "no-such-command"}}) {
    EXPECT_EQ(Vigil(args), 2) << args.size();
    EXPECT_EQ(out_, "") << args.size();  // no help text on stdout
    EXPECT_TRUE(absl::StartsWith(err_, "vigil: unknown command \"no-such-command\"")) << err_;
    // No command is within NearestName's distance (5) of a 15-letter word: they are listed.
    EXPECT_TRUE(absl::StrContains(err_, "the commands are: gen, model,")) << err_;
  }
}

TEST_F(UnknownCommandTest, NearMissSuggestsTheNearestCommand) {
  EXPECT_EQ(Vigil({"modle", "--help"}), 2);
  EXPECT_TRUE(absl::StartsWith(err_, "vigil: unknown command \"modle\"; did you mean \"model\"?"))
      << err_;
  EXPECT_EQ(Vigil({"replya"}), 2);
  EXPECT_TRUE(absl::StrContains(err_, "did you mean \"replay\"?")) << err_;
}

TEST_F(UnknownCommandTest, WordUnderACommandWithSubcommands) {
  EXPECT_EQ(Vigil({"model", "no-such"}), 2);
  EXPECT_TRUE(absl::StartsWith(err_, "vigil: unknown command \"model no-such\"")) << err_;
  EXPECT_EQ(Vigil({"model", "no-such", "--help"}), 2);
  EXPECT_EQ(out_, "");
  EXPECT_EQ(Vigil({"model", "--help", "inspectt"}), 2);
  EXPECT_TRUE(absl::StrContains(err_, "did you mean \"model inspect\"?")) << err_;
}

TEST_F(UnknownCommandTest, HelpAndKnownCommandsAreUnchanged) {
  EXPECT_EQ(Vigil({"--help"}), 0);
  EXPECT_TRUE(absl::StrContains(out_, "Subcommands:")) << out_;
  EXPECT_EQ(Vigil({"model", "--help"}), 0);
  EXPECT_TRUE(absl::StrContains(out_, "inspect")) << out_;
  // A command without its required subcommand is still CLI11's usage error.
  EXPECT_EQ(Vigil({"model"}), 2);
  EXPECT_FALSE(absl::StrContains(err_, "unknown command")) << err_;
  // An unknown option is not a command word.
  EXPECT_EQ(Vigil({"--no-such-flag"}), 2);
  EXPECT_FALSE(absl::StrContains(err_, "unknown command")) << err_;
}

}  // namespace
}  // namespace vigil
