// LargeArray<T>: a fixed-size array for big tables read at random (the account index, account
// states). With 4 KiB pages every random access to a table of hundreds of MB also misses the
// TLB, and the page walks limit how many misses can be in flight at once; an array of at least
// 1 MiB is therefore rounded up to whole 2 MiB pages, aligned to 2 MiB and advised for
// transparent huge pages (one TLB entry per 2 MiB). The advice is only advice: where the kernel
// has THP off, it is ordinary memory.
//
// Elements are value-initialized on construction and destroyed with the array.
// Thread safety: as for a plain array.
#ifndef VIGIL_COMMON_LARGE_ARRAY_H_
#define VIGIL_COMMON_LARGE_ARRAY_H_

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace vigil {

namespace large_array_internal {
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugeFromBytes = size_t{1} << 20;
// Bytes reserved for a request of "bytes".
constexpr size_t ReservedBytes(size_t bytes) {
  return bytes < kHugeFromBytes ? bytes
                                : (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}
// Raw storage of ReservedBytes(bytes): huge-page aligned and advised from kHugeFromBytes on.
// Aborts on allocation failure, like operator new.
void* Allocate(size_t bytes);
void Free(void* p);
}  // namespace large_array_internal

template <typename T>
class LargeArray {
 public:
  LargeArray() = default;
  explicit LargeArray(size_t n)
      : data_(static_cast<T*>(large_array_internal::Allocate(n * sizeof(T)))), size_(n) {
    for (size_t i = 0; i < n; ++i) new (data_ + i) T();
  }
  LargeArray(LargeArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  LargeArray& operator=(LargeArray&& other) noexcept {
    if (this != &other) {
      Reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~LargeArray() { Reset(); }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  // Bytes reserved for the elements (huge-page rounding included).
  size_t MemoryBytes() const { return large_array_internal::ReservedBytes(size_ * sizeof(T)); }

 private:
  void Reset() {
    if (data_ == nullptr) return;
    for (size_t i = 0; i < size_; ++i) data_[i].~T();
    large_array_internal::Free(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_COMMON_LARGE_ARRAY_H_
