// HugePagePool: small blocks carved from 2 MiB transparent huge pages, for data that is both
// plentiful and read at random, such as the event buffers of a million accounts.
//
// With the C library's allocator those buffers sit on 4 KiB pages, so each random access also
// misses the TLB and the page walks cap how many misses can be in flight; its free() also
// coalesces neighbouring chunks, touching more cold lines. Here blocks come from 2 MiB slabs
// advised for huge pages, freed blocks wait in a free list per size class (multiples of 16
// bytes up to kMaxBlockBytes) for the next request of that class, and slabs are kept for the
// life of the process (the memory is reused, not returned). Larger requests go to operator new.
//
// Thread safety: thread-safe (one mutex; requests are rare next to the work done per block).
#ifndef VIGIL_COMMON_HUGE_PAGE_POOL_H_
#define VIGIL_COMMON_HUGE_PAGE_POOL_H_

#include <array>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace vigil {

class HugePagePool {
 public:
  static constexpr size_t kGranule = 16;
  static constexpr size_t kMaxBlockBytes = 4096;

  HugePagePool() = default;
  HugePagePool(const HugePagePool&) = delete;
  HugePagePool& operator=(const HugePagePool&) = delete;
  ~HugePagePool();

  // The process-wide pool (never destroyed, so blocks may outlive static destructors).
  static HugePagePool& Default();

  // A block of at least "bytes" bytes, 16-byte aligned. Aborts when memory is exhausted.
  void* Allocate(size_t bytes);
  // REQUIRES: p came from Allocate(bytes) of this pool (same "bytes").
  void Deallocate(void* p, size_t bytes);

  // Bytes held in slabs (in use or free), and bytes in blocks handed out and not returned.
  size_t reserved_bytes() const;
  size_t used_bytes() const;

 private:
  static constexpr size_t kSlabBytes = size_t{2} << 20;
  static constexpr size_t kClasses = kMaxBlockBytes / kGranule;
  struct FreeBlock {
    FreeBlock* next;
  };
  static size_t ClassOf(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }

  mutable std::mutex mu_;
  std::array<FreeBlock*, kClasses> free_{};
  char* cursor_ = nullptr;  // unused rest of the newest slab
  char* end_ = nullptr;
  std::vector<void*> slabs_;
  size_t used_ = 0;
};

// std::allocator replacement that takes small arrays from HugePagePool::Default().
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: allocator conversion

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes > HugePagePool::kMaxBlockBytes) {
      return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    }
    return static_cast<T*>(HugePagePool::Default().Allocate(bytes));
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes > HugePagePool::kMaxBlockBytes) {
      ::operator delete (p, std::align_val_t{alignof(T)});
      return;
    }
    HugePagePool::Default().Deallocate(p, bytes);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace vigil

#endif  // VIGIL_COMMON_HUGE_PAGE_POOL_H_
