#include "vigil/cli/data_files.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/cli/audit_command.h"
#include "vigil/cli/model_command.h"
#include "vigil/cli/policy_command.h"
#include "vigil/cli/token_command.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_config.h"
#include "vigil/engine/pipeline_options.h"

namespace vigil::cli {
namespace {

using ::testing::HasSubstr;

class DataDirOption : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vigil_data_dir_option_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Parses "args" (after the program's name) with --data-dir added for "use"; the parse's
  // error message, or "" when it parsed.
  std::string Parse(DataDirUse use, std::vector<std::string> args) {
    CLI::App app("test");
    AddDataDirOption(&app, &value_, use);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  }

  std::string dir_, value_;
};

TEST_F(DataDirOption, IsRequired) {
  EXPECT_THAT(Parse(DataDirUse::kMayCreate, {}), HasSubstr("--data-dir is required"));
  EXPECT_THAT(Parse(DataDirUse::kExisting, {}), HasSubstr("--data-dir is required"));
}

TEST_F(DataDirOption, AMissingDirIsRefusedOnlyWhereTheCommandReadsOne) {
  const std::string missing = dir_ + "/nowhere";
  EXPECT_EQ(Parse(DataDirUse::kMayCreate, {"--data-dir", missing}), "");
  EXPECT_EQ(value_, missing);
  EXPECT_FALSE(std::filesystem::exists(missing));  // the option creates nothing
  EXPECT_THAT(Parse(DataDirUse::kExisting, {"--data-dir", missing}),
              HasSubstr("data dir '" + missing +
                        "' does not exist (--data-dir is the directory given to `vigil serve` "
                        "or `vigil replay`)"));
  EXPECT_EQ(Parse(DataDirUse::kExisting, {"--data-dir", dir_}), "");
  const std::string file = dir_ + "/file";
  std::ofstream(file) << "not a directory";
  EXPECT_THAT(Parse(DataDirUse::kExisting, {"--data-dir", file}), HasSubstr("does not exist"));
}

// audit, model, policy and token register --data-dir through AddDataDirOption, with the help
// serve, replay and bench show for the pipeline's data_dir.
TEST_F(DataDirOption, EveryCommandThatTakesOneShowsThePipelinesHelp) {
  PipelineConfig config;
  config::OptionSet set;
  DeclarePipelineOptions(&config, &set);
  const std::string pipeline_help = set.Find("data_dir")->spec.help;
  CLI::App vigil("vigil");
  // Held: their flags, which the options are bound to, live as long as the commands.
  const std::vector<Command> commands = {AddAuditCommand(vigil), AddModelCommand(vigil),
                                         AddPolicyCommand(vigil), AddTokenCommand(vigil)};
  const auto all = [](CLI::App*) { return true; };
  std::set<std::string> with_data_dir;
  for (CLI::App* command : vigil.get_subcommands(all)) {
    for (CLI::App* sub : command->get_subcommands(all)) {
      const CLI::Option* option = sub->get_option_no_throw("--data-dir");
      if (option == nullptr) continue;
      with_data_dir.insert(command->get_name() + " " + sub->get_name());
      EXPECT_EQ(option->get_description(), pipeline_help) << sub->get_name();
      EXPECT_TRUE(option->get_required()) << sub->get_name();
    }
  }
  EXPECT_EQ(with_data_dir,
            (std::set<std::string>{"audit verify", "audit prove", "audit prove-consistency",
                                   "audit show", "audit export", "audit rewrap", "model add",
                                   "model list", "policy add", "policy activate", "policy rollback",
                                   "policy list", "token create", "token list", "token revoke"}));
}

}  // namespace
}  // namespace vigil::cli
