#include "vigil/server/access_tokens.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

class AccessTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tokens_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File() const { return dir_ + "/access_tokens.jsonl"; }
  std::string dir_;
};

TEST_F(AccessTokensTest, ATokenGrantsItsRoleAndIsStoredOnlyAsAHash) {
  ASSERT_OK_AND_ASSIGN(const std::string scorer, AccessTokens::Create(dir_, Role::kScorer, "gateway"));
  ASSERT_OK_AND_ASSIGN(const std::string auditor, AccessTokens::Create(dir_, Role::kAuditor, ""));
  EXPECT_TRUE(absl::StartsWith(scorer, "vgl_"));
  EXPECT_EQ(scorer.size(), 4 + 16 + 1 + 43u);
  EXPECT_NE(scorer, auditor);

  struct stat st {};
  ASSERT_EQ(::stat(File().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string stored = vigil::testing::ReadFile(File());
  EXPECT_FALSE(absl::StrContains(stored, scorer.substr(21))) << "the secret is stored";
  EXPECT_TRUE(absl::StrContains(stored, AccessTokens::IdOf(scorer)));

  ASSERT_OK_AND_ASSIGN(const AccessTokens tokens, AccessTokens::Open(dir_));
  ASSERT_EQ(tokens.tokens().size(), 2u);
  EXPECT_EQ(tokens.tokens()[0].description, "gateway");
  EXPECT_EQ(*tokens.Authenticate(scorer), Role::kScorer);
  EXPECT_EQ(*tokens.Authenticate(auditor), Role::kAuditor);
}

TEST_F(AccessTokensTest, WrongMalformedUnknownAndRevokedTokensAreRefusedWithoutEchoingThem) {
  ASSERT_OK_AND_ASSIGN(const std::string token, AccessTokens::Create(dir_, Role::kAdmin, ""));
  ASSERT_OK_AND_ASSIGN(AccessTokens tokens, AccessTokens::Open(dir_));
  std::string wrong = token;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  std::string unknown = token;
  unknown[4] = unknown[4] == '0' ? '1' : '0';
  for (const std::string& bad : {wrong, unknown, std::string("vgl_short"), std::string(""),
                                 token.substr(0, token.size() - 1), "Bearer " + token}) {
    const absl::Status s = tokens.Authenticate(bad).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnauthenticated)) << bad;
    EXPECT_FALSE(absl::StrContains(s.message(), token.substr(21))) << s;
  }
  ASSERT_OK(AccessTokens::Revoke(dir_, AccessTokens::IdOf(token)));
  ASSERT_OK_AND_ASSIGN(tokens, AccessTokens::Open(dir_));
  EXPECT_THAT(tokens.Authenticate(token).status(), StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(AccessTokens::Revoke(dir_, "0123456789abcdef"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(AccessTokensTest, AFileOthersMayReadOrAMalformedLineIsRefused) {
  ASSERT_OK_AND_ASSIGN(const AccessTokens none, AccessTokens::Open(dir_));
  EXPECT_TRUE(none.tokens().empty());
  ASSERT_OK(AccessTokens::Create(dir_, Role::kScorer, "").status());
  ::chmod(File().c_str(), 0640);
  EXPECT_THAT(AccessTokens::Open(dir_).status(),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("(mode 640): chmod 600")));
  ::chmod(File().c_str(), 0600);
  std::ofstream(File(), std::ios::app) << "{\"id\":\"xyz\",\"role\":\"scorer\",\"secret_sha256\":\"00\"}\n";
  EXPECT_THAT(AccessTokens::Open(dir_).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("access_tokens.jsonl:2: field id")));
}

TEST(Roles, NamesParseAndAdminAllowsEverything) {
  for (Role r : {Role::kScorer, Role::kPolicyAdmin, Role::kAuditor, Role::kAdmin, Role::kAnalyst,
                 Role::kSupervisor}) {
    EXPECT_EQ(*ParseRole(RoleName(r)), r);
    EXPECT_TRUE(RoleAllows(Role::kAdmin, r));
    EXPECT_TRUE(RoleAllows(r, r));
  }
  EXPECT_FALSE(RoleAllows(Role::kScorer, Role::kAuditor));
  EXPECT_FALSE(RoleAllows(Role::kAuditor, Role::kPolicyAdmin));
  EXPECT_FALSE(RoleAllows(Role::kPolicyAdmin, Role::kAdmin));
  // A supervisor is an analyst too; an analyst is not a supervisor, nor a scorer an analyst.
  EXPECT_TRUE(RoleAllows(Role::kSupervisor, Role::kAnalyst));
  EXPECT_FALSE(RoleAllows(Role::kAnalyst, Role::kSupervisor));
  EXPECT_FALSE(RoleAllows(Role::kScorer, Role::kAnalyst));
  EXPECT_FALSE(RoleAllows(Role::kAnalyst, Role::kScorer));
  EXPECT_THAT(ParseRole("root").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("scorer, policy-admin")));
}

}  // namespace
}  // namespace vigil
