// Locates files under the repository's testdata/ directory from a test.
//
// ctest sets VIGIL_SOURCE_DIR for every test (cmake/VigilHelpers.cmake); a test binary run by hand
// from the build tree falls back to the source directory compiled in.
#ifndef VIGIL_TESTING_TESTDATA_H_
#define VIGIL_TESTING_TESTDATA_H_

#include <cstdlib>
#include <string>

namespace vigil::testing {

inline std::string SourceDir() {
  if (const char* dir = std::getenv("VIGIL_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
#ifdef VIGIL_SOURCE_DIR_DEFAULT
  return VIGIL_SOURCE_DIR_DEFAULT;
#else
  return ".";
#endif
}

// Path of "relative" under testdata/, e.g. TestDataPath("amlworld/HI-Small_Trans.sample.csv").
inline std::string TestDataPath(const std::string& relative) {
  return SourceDir() + "/testdata/" + relative;
}

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_TESTDATA_H_
