// File helpers for tests: read a whole file, compare two files reporting only the first
// differing line (gtest's EXPECT_EQ on two large texts would build a diff of both).
#ifndef VIGIL_TESTING_FILES_H_
#define VIGIL_TESTING_FILES_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace vigil::testing {

// A fresh directory under gtest's temporary directory, removed with everything in it when the
// object goes.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "vigil_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // "" when the directory could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The file's bytes; empty when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline ::testing::AssertionResult SameFile(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return ::testing::AssertionFailure() << "cannot open " << (fa ? b : a);
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

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_FILES_H_
