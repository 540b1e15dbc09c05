// `vigil token` end to end: a created token is printed once and authenticates with its role;
// list shows ids and roles but no secret; revoke removes it; bad input exits 1 or 2.
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/server/access_tokens.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"

namespace vigil {
namespace {

class TokenCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/token_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Exit code; stdout and stderr both land in *out.
  int Run(std::vector<std::string> args, std::string* out) {
    args.insert(args.begin(), "token");
    const int code = ::vigil::testing::RunProcess(VIGIL_BINARY, args, dir_ + "/out");
    *out = vigil::testing::ReadFile(dir_ + "/out");
    return code;
  }
  std::string dir_;
};

TEST_F(TokenCommandTest, CreateListRevoke) {
  const std::string data = dir_ + "/state";
  std::string out;
  ASSERT_EQ(Run({"create", "--data-dir", data, "--role", "auditor", "--description", "examiner"},
                &out),
            0)
      << out;
  std::string token;
  for (std::istringstream lines(out); std::getline(lines, token);) {
    if (absl::StartsWith(token, "vgl_")) break;
  }
  ASSERT_TRUE(absl::StartsWith(token, "vgl_")) << out;
  ASSERT_OK_AND_ASSIGN(const AccessTokens tokens, AccessTokens::Open(data));
  EXPECT_EQ(*tokens.Authenticate(token), Role::kAuditor);

  ASSERT_EQ(Run({"list", "--data-dir", data}, &out), 0) << out;
  EXPECT_FALSE(absl::StrContains(out, token.substr(21)));
  const nlohmann::json line = nlohmann::json::parse(out.substr(0, out.find('\n')));
  EXPECT_EQ(line["id"], AccessTokens::IdOf(token));
  EXPECT_EQ(line["role"], "auditor");
  EXPECT_EQ(line["description"], "examiner");

  ASSERT_EQ(Run({"revoke", "--data-dir", data, AccessTokens::IdOf(token)}, &out), 0) << out;
  ASSERT_OK_AND_ASSIGN(const AccessTokens after, AccessTokens::Open(data));
  EXPECT_TRUE(after.tokens().empty());
  EXPECT_EQ(Run({"revoke", "--data-dir", data, AccessTokens::IdOf(token)}, &out), 1);
  EXPECT_TRUE(absl::StrContains(out, "no token with id")) << out;
}

TEST_F(TokenCommandTest, AnUnknownRoleOrAnOpenTokenFileIsAUsageError) {
  std::string out;
  EXPECT_EQ(Run({"create", "--data-dir", dir_, "--role", "root"}, &out), 2);
  EXPECT_TRUE(absl::StrContains(out, "unknown role 'root'")) << out;
  ASSERT_EQ(Run({"create", "--data-dir", dir_, "--role", "scorer"}, &out), 0) << out;
  ::chmod((dir_ + "/access_tokens.jsonl").c_str(), 0644);
  EXPECT_EQ(Run({"list", "--data-dir", dir_}, &out), 2);
  EXPECT_TRUE(absl::StrContains(out, "chmod 600")) << out;
}

}  // namespace
}  // namespace vigil
