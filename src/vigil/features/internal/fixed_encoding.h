// Fixed-width binary encoding of trivially copyable values, in host byte order, for the feature
// state's checkpoint records (AccountState, AccountHistory): a record is read back by the build
// that wrote it or a later one on the same architecture, never exchanged.
//
// Private to the features module. Thread safety: stateless functions.
#ifndef VIGIL_FEATURES_INTERNAL_FIXED_ENCODING_H_
#define VIGIL_FEATURES_INTERNAL_FIXED_ENCODING_H_

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace vigil::features_internal {

template <typename T>
void PutFixed(std::string* out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// Reads one T from the front of *in and consumes it; false (and *in unchanged) when too short.
template <typename T>
bool GetFixed(std::string_view* in, T* v) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace vigil::features_internal

#endif  // VIGIL_FEATURES_INTERNAL_FIXED_ENCODING_H_
