#include "vigil/engine/account_pseudonyms.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

class AccountPseudonymsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/account_pseudonyms_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  std::string dir_;
};

TEST_F(AccountPseudonymsTest, ADataDirGetsItsOwnPrivateKeyOnceAndKeepsIt) {
  ASSERT_OK_AND_ASSIGN(auto first, LoadAccountPseudonyms("", dir_, "hmac-sha256"));
  const std::string path = DefaultPseudonymKeyPath(dir_);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 65);  // 64 hex digits and a line end
  ASSERT_OK_AND_ASSIGN(auto second, LoadAccountPseudonyms("", dir_, "hmac-sha256"));
  EXPECT_EQ(first->Of("bank\x1f" "acct"), second->Of("bank\x1f" "acct"));
  EXPECT_EQ(first->key_id(), second->key_id());
  // Another data dir, another key.
  ASSERT_OK_AND_ASSIGN(auto other, LoadAccountPseudonyms("", dir_ + "/other", "hmac-sha256"));
  EXPECT_NE(first->Of("x"), other->Of("x"));
}

TEST_F(AccountPseudonymsTest, AConfiguredKeyIsTheHmacKeyOfThePseudonyms) {
  std::filesystem::create_directories(dir_);
  const std::string path = dir_ + "/configured.key";
  Write(path, std::string(64, 'a') + "\n", 0600);
  ASSERT_OK_AND_ASSIGN(auto sha, LoadAccountPseudonyms(path, dir_, "hmac-sha256"));
  ASSERT_OK_AND_ASSIGN(auto sm3, LoadAccountPseudonyms(path, dir_, "hmac-sm3"));
  const std::string key(32, '\xaa');
  EXPECT_EQ(sha->Of("id"), crypto::Pseudonymizer::Create(crypto::Pseudonymizer::Hash::kHmacSha256,
                                                         key)->Of("id"));
  EXPECT_EQ(sm3->name(), "hmac-sm3");
  EXPECT_NE(sha->Of("id"), sm3->Of("id"));
  EXPECT_FALSE(std::filesystem::exists(DefaultPseudonymKeyPath(dir_)));
}

TEST_F(AccountPseudonymsTest, BadKeyFilesAreRefusedWithoutShowingTheKey) {
  std::filesystem::create_directories(dir_);
  const std::string path = dir_ + "/k.key";
  Write(path, std::string(64, 'b'), 0644);
  EXPECT_THAT(LoadAccountPseudonyms(path, dir_, "hmac-sha256").status(),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("chmod 600")));
  Write(path, "not hex at all, and short", 0600);
  const absl::Status bad = LoadAccountPseudonyms(path, dir_, "hmac-sha256").status();
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("64 hex digits")));
  EXPECT_THAT(std::string(bad.message()), ::testing::Not(HasSubstr("not hex at all")));
  EXPECT_THAT(LoadAccountPseudonyms(dir_ + "/missing.key", dir_, "hmac-sha256").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.key")));
  EXPECT_THAT(LoadAccountPseudonyms("", dir_, "sha1").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("hmac-sm3")));
}

}  // namespace
}  // namespace vigil
