#include "vigil/common/private_file.h"

#include <sys/stat.h>

#include <fstream>
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

}  // namespace
}  // namespace vigil
