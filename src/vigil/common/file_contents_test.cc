#include "vigil/common/file_contents.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/file_contents_", getpid(), "_", name);
}

TEST(ReadFileContents, ReadsEveryByteUnchanged) {
  const std::string path = TempPath("bytes");
  // NUL, CRLF and a DOS end-of-file byte are bytes like any other; the size crosses the
  // reader's first guess when the size is unknown.
  std::string bytes = std::string("a\0b\r\n\x1a", 6) + std::string(100000, 'x');
  std::ofstream(path, std::ios::binary) << bytes;
  EXPECT_THAT(ReadFileContents(path, "list file"), IsOkAndHolds(bytes));
  std::ofstream(path, std::ios::binary | std::ios::trunc).flush();
  EXPECT_THAT(ReadFileContents(path, "list file"), IsOkAndHolds(std::string()));
  std::remove(path.c_str());
}

TEST(ReadFileContents, AMissingFileIsNotFoundNamingWhatAndThePath) {
  const std::string path = TempPath("absent");
  EXPECT_THAT(ReadFileContents(path, "OFAC SDN file"),
              StatusIs(absl::StatusCode::kNotFound,
                       absl::StrCat("cannot open OFAC SDN file '", path, "'")));
}

}  // namespace
}  // namespace vigil
