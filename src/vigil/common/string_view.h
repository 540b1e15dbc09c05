// Debian's Abseil (20220623) has its own absl::string_view class, not an alias of
// std::string_view: absl::StrCat and Status take the former, the standard library and most of
// vigil the latter. These convert at such call sites, without copying.
//
// Thread safety: pure functions.
#ifndef VIGIL_COMMON_STRING_VIEW_H_
#define VIGIL_COMMON_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace vigil {

inline absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view ToStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace vigil

#endif  // VIGIL_COMMON_STRING_VIEW_H_
