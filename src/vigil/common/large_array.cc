#include "vigil/common/large_array.h"

#include <sys/mman.h>

#include <cstdlib>

#include "vigil/common/check.h"

namespace vigil::large_array_internal {

void* Allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (bytes >= kHugeFromBytes) {
    bytes = ReservedBytes(bytes);
    p = std::aligned_alloc(kHugePageBytes, bytes);
    VIGIL_CHECK(p != nullptr);
    // Advice only: failure (THP compiled out, an old kernel) leaves ordinary pages.
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }
  p = std::malloc(bytes);
  VIGIL_CHECK(p != nullptr);
  return p;
}

void Free(void* p) { std::free(p); }

}  // namespace vigil::large_array_internal
