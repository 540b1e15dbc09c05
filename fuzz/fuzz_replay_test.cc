// Replays every committed fuzz input through its target in the ordinary (non-fuzzing) build:
// the seed corpora (fuzz/corpus/<name>/) and the inputs that once crashed a target
// (fuzz/crashes/<name>/), so a fixed crash stays fixed and the targets keep building and
// running without libFuzzer.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "gtest/gtest.h"
#include "vigil/testing/testdata.h"

namespace vigil::fuzz {

// Test names and ctest's list show the target's name, not FuzzTarget's bytes (found by ADL, so
// outside the unnamed namespace).
void PrintTo(const FuzzTarget& target, std::ostream* os) { *os << target.name; }

namespace {

namespace fs = std::filesystem;

// The files of fuzz/<kind>/<target>/, sorted; none when the directory does not exist.
std::vector<fs::path> InputsOf(std::string_view kind, std::string_view target) {
  const fs::path dir = fs::path(testing::SourceDir()) / "fuzz" / kind / target;
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs one file through the target. A crash ends the test binary; the last "replay" line on
// stderr names the input that caused it.
void Replay(const FuzzTarget& target, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << file;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay %s\n", file.c_str());
  EXPECT_EQ(target.function(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0)
      << file;
}

class FuzzReplayTest : public ::testing::TestWithParam<FuzzTarget> {};

TEST_P(FuzzReplayTest, SeedCorpusRunsClean) {
  const std::vector<fs::path> files = InputsOf("corpus", GetParam().name);
  EXPECT_FALSE(files.empty()) << "no seed inputs under fuzz/corpus/" << GetParam().name
                              << " (source directory " << testing::SourceDir() << ")";
  for (const fs::path& file : files) Replay(GetParam(), file);
}

TEST_P(FuzzReplayTest, PastCrashesRunClean) {
  for (const fs::path& file : InputsOf("crashes", GetParam().name)) Replay(GetParam(), file);
}

// Also the empty input, which no directory can hold usefully.
TEST_P(FuzzReplayTest, EmptyInputRunsClean) { EXPECT_EQ(GetParam().function(nullptr, 0), 0); }

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplayTest, ::testing::ValuesIn(kFuzzTargets),
                         [](const ::testing::TestParamInfo<FuzzTarget>& target) {
                           return std::string(target.param.name);
                         });

}  // namespace
}  // namespace vigil::fuzz
