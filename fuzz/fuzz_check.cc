#include "fuzz/fuzz_check.h"

#include <cstdio>
#include <cstdlib>

namespace vigil::fuzz::internal {

void InvariantFailed(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, condition);
  std::abort();
}

}  // namespace vigil::fuzz::internal
