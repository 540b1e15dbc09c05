#include "vigil/server/api_access.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/server/access_tokens.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;

class ApiAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/api_access_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static HttpRequest WithToken(const std::string& token, const std::string& principal = "") {
    HttpRequest r;
    r.headers.push_back({"Authorization", "Bearer " + token});
    r.client_principal = principal;
    return r;
  }
  std::string TokenFile() const { return dir_ + "/" + std::string(AccessTokens::kFileName); }

  std::string dir_;
};

TEST_F(ApiAccessTest, RolesCertificatesAndActors) {
  ASSERT_OK_AND_ASSIGN(const std::string auditor,
                       AccessTokens::Create(dir_, Role::kAuditor, "examiner"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ApiAccess> access,
                       ApiAccess::Open(dir_, {{"CN=gw,O=Bank", Role::kScorer}}));
  // The auditor's token: allowed where the auditor role is needed, 403 where scoring is.
  AccessDecision d = access->Check(WithToken(auditor), Role::kAuditor);
  EXPECT_TRUE(d.allowed());
  EXPECT_EQ(d.actor, "token:" + AccessTokens::IdOf(auditor));
  EXPECT_EQ(access->Check(WithToken(auditor), Role::kScorer).denial, AccessDenial::kForbidden);
  EXPECT_TRUE(access->Check(WithToken(auditor), std::nullopt).allowed());
  // A granted certificate alone is enough; an ungranted one is not.
  HttpRequest gw;
  gw.client_principal = "CN=gw,O=Bank";
  d = access->Check(gw, Role::kScorer);
  EXPECT_TRUE(d.allowed());
  EXPECT_EQ(d.actor, "tls:CN=gw,O=Bank");
  HttpRequest other;
  other.client_principal = "CN=other,O=Bank";
  EXPECT_EQ(access->Check(other, Role::kScorer).denial, AccessDenial::kMissing);
  EXPECT_EQ(access->Check(HttpRequest{}, Role::kScorer).denial, AccessDenial::kMissing);
  HttpRequest basic;
  basic.headers.push_back({"Authorization", "Basic dXNlcjpwYXNz"});
  EXPECT_EQ(access->Check(basic, Role::kScorer).denial, AccessDenial::kMalformed);
  std::string wrong = auditor;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  d = access->Check(WithToken(wrong), Role::kAuditor);
  EXPECT_EQ(d.denial, AccessDenial::kInvalid);
  EXPECT_EQ(d.token_id, AccessTokens::IdOf(auditor));  // for the log; never the secret
}

TEST_F(ApiAccessTest, AFileThatStopsLoadingIsReportedOnceAndAChmodBackIsNoticed) {
  ASSERT_OK_AND_ASSIGN(const std::string scorer, AccessTokens::Create(dir_, Role::kScorer, "s"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ApiAccess> access, ApiAccess::Open(dir_, {}));
  ASSERT_OK_AND_ASSIGN(bool reloaded, access->ReloadIfChanged());
  EXPECT_FALSE(reloaded);
  // Readable by others: refused; the tokens in force stay, and the error is said once.
  ASSERT_EQ(::chmod(TokenFile().c_str(), 0644), 0);
  EXPECT_THAT(access->ReloadIfChanged().status(),
              testing::StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("chmod 600")));
  EXPECT_TRUE(access->Check(WithToken(scorer), Role::kScorer).allowed());
  ASSERT_OK_AND_ASSIGN(reloaded, access->ReloadIfChanged());
  EXPECT_FALSE(reloaded);
  // A chmod back changes neither size nor content; it is noticed all the same.
  ASSERT_EQ(::chmod(TokenFile().c_str(), 0600), 0);
  ASSERT_OK_AND_ASSIGN(reloaded, access->ReloadIfChanged());
  EXPECT_TRUE(reloaded);
  // A revocation takes effect at the next reload.
  ASSERT_OK(AccessTokens::Revoke(dir_, AccessTokens::IdOf(scorer)));
  ASSERT_OK_AND_ASSIGN(reloaded, access->ReloadIfChanged());
  EXPECT_TRUE(reloaded);
  EXPECT_EQ(access->Check(WithToken(scorer), Role::kScorer).denial, AccessDenial::kInvalid);
}

}  // namespace
}  // namespace vigil
