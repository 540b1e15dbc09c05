#include "vigil/common/private_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(CheckOwnerOnly, RefusesFilesTheGroupOrOthersMayAccess) {
  const std::string path = ::testing::TempDir() + "/private_file_test.pem";
  std::ofstream(path) << "secret";
  ::chmod(path.c_str(), 0600);
  EXPECT_TRUE(CheckOwnerOnly(path, "key file").ok());
  for (const mode_t mode : {0640, 0604, 0620, 0602}) {
    ::chmod(path.c_str(), mode);
    const absl::Status s = CheckOwnerOnly(path, "key file");
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("key file '" + path + "'"));
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(": chmod 600 it"));
  }
  ::chmod(path.c_str(), 0644);
  EXPECT_THAT(std::string(CheckOwnerOnly(path, "x").message()), ::testing::HasSubstr("(mode 644)"));
  std::remove(path.c_str());
  EXPECT_TRUE(CheckOwnerOnly(path, "key file").ok());  // absent: the caller's to report
}


std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

// Nothing but the file itself is left in its directory.
size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(CreatePrivateFileOnce, CreatesOnceOwnerOnlyAndKeepsTheFirst) {
  const std::string dir = ::testing::TempDir() + "/private_once";
  std::filesystem::remove_all(dir);
  const std::string path = dir + "/key";
  absl::StatusOr<bool> first = CreatePrivateFileOnce(path, "one", "the key");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(*first);
  absl::StatusOr<bool> second = CreatePrivateFileOnce(path, "two", "the key");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(*second);
  EXPECT_EQ(Contents(path), "one");
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(FilesIn(dir), 1u);
}

TEST(CreateNewFile, CreatesWithItsModeAndRefusesToReplaceAFile) {
  const std::string dir = ::testing::TempDir() + "/private_new";
  std::filesystem::remove_all(dir);
  const std::string key = dir + "/key.pem", pub = dir + "/key_pub.pem";
  ASSERT_TRUE(CreateNewFile(key, "secret", "signing key").ok());
  ASSERT_TRUE(CreateNewFile(pub, "public", "public key", 0644).ok());
  EXPECT_EQ(ModeOf(key), 0600u);  // the default: owner only
  EXPECT_EQ(ModeOf(pub), 0644u);  // as asked, whatever the umask
  const absl::Status again = CreateNewFile(key, "another secret", "signing key");
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(std::string(again.message()),
            "signing key '" + key +
                "' exists; refusing to overwrite it (remove it first if you mean to replace it)");
  EXPECT_EQ(Contents(key), "secret");
  EXPECT_EQ(ModeOf(key), 0600u);
  EXPECT_EQ(FilesIn(dir), 2u);  // no temporary file left beside them
}

TEST(CheckAbsent, RefusesAnythingAtThePathWithCreateNewFilesMessage) {
  const std::string dir = ::testing::TempDir() + "/private_absent";
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(CheckAbsent(dir + "/key.pem", "signing key").ok());
  ASSERT_TRUE(CreateNewFile(dir + "/key.pem", "secret", "signing key").ok());
  const absl::Status present = CheckAbsent(dir + "/key.pem", "signing key");
  EXPECT_EQ(present.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(present.message(), CreateNewFile(dir + "/key.pem", "x", "signing key").message());
  EXPECT_EQ(CheckAbsent(dir, "output").code(), absl::StatusCode::kAlreadyExists);  // a directory
}

TEST(ReplacePrivateFile, ReplacesWholeAndOwnerOnlyWhateverTheOldMode) {
  const std::string dir = ::testing::TempDir() + "/private_replace";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tokens";
  std::ofstream(path) << "old contents, longer than the new";
  ::chmod(path.c_str(), 0644);
  ASSERT_TRUE(ReplacePrivateFile(path, "new", "the token file").ok());
  EXPECT_EQ(Contents(path), "new");
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(FilesIn(dir), 1u);
  ASSERT_TRUE(ReplacePrivateFile(dir + "/fresh", "", "the token file").ok());  // created
  EXPECT_EQ(ModeOf(dir + "/fresh"), 0600u);
}

TEST(ReplacePrivateFile, NamesWhatAndWhereWhenItCannotWrite) {
  const std::string blocker = ::testing::TempDir() + "/private_blocker";
  std::filesystem::remove_all(blocker);
  std::ofstream(blocker) << "a file where a directory should be";
  const absl::Status s = ReplacePrivateFile(blocker + "/tokens", "x", "the token file");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("the token file " + blocker + "/tokens: cannot "));
}

}  // namespace
}  // namespace vigil
