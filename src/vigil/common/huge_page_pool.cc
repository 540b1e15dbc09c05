#include "vigil/common/huge_page_pool.h"

#include <sys/mman.h>

#include <cstdlib>

#include "vigil/common/check.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// Free and not yet carved memory is poisoned, so AddressSanitizer still reports a use after
// free or an overflow of a pooled block.
#define VIGIL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define VIGIL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define VIGIL_POISON(p, n) ((void)(p), (void)(n))
#define VIGIL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace vigil {

HugePagePool::~HugePagePool() {
  for (void* slab : slabs_) {
    VIGIL_UNPOISON(slab, kSlabBytes);
    std::free(slab);
  }
}

HugePagePool& HugePagePool::Default() {
  static HugePagePool* pool = new HugePagePool();
  return *pool;
}

void* HugePagePool::Allocate(size_t bytes) {
  VIGIL_DCHECK(bytes <= kMaxBlockBytes);
  if (bytes == 0) bytes = 1;
  const size_t cls = ClassOf(bytes);
  const size_t size = (cls + 1) * kGranule;
  std::lock_guard<std::mutex> lock(mu_);
  used_ += size;
  if (FreeBlock* b = free_[cls]; b != nullptr) {
    VIGIL_UNPOISON(b, size);
    free_[cls] = b->next;
    return b;
  }
  if (static_cast<size_t>(end_ - cursor_) < size) {
    // The tail of the old slab (under kMaxBlockBytes) is left unused.
    void* slab = std::aligned_alloc(kSlabBytes, kSlabBytes);
    VIGIL_CHECK(slab != nullptr);
    // Advice only: where transparent huge pages are off, these are ordinary pages.
    (void)madvise(slab, kSlabBytes, MADV_HUGEPAGE);
    VIGIL_POISON(slab, kSlabBytes);
    slabs_.push_back(slab);
    cursor_ = static_cast<char*>(slab);
    end_ = cursor_ + kSlabBytes;
  }
  void* p = cursor_;
  cursor_ += size;
  VIGIL_UNPOISON(p, size);
  return p;
}

void HugePagePool::Deallocate(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes == 0) bytes = 1;
  const size_t cls = ClassOf(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= (cls + 1) * kGranule;
  auto* b = static_cast<FreeBlock*>(p);
  b->next = free_[cls];
  free_[cls] = b;
  VIGIL_POISON(p, (cls + 1) * kGranule);
}

size_t HugePagePool::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slabs_.size() * kSlabBytes;
}

size_t HugePagePool::used_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

}  // namespace vigil
