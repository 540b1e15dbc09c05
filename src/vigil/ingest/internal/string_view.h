// Debian's Abseil (20220623) is built with its own absl::string_view class, not an alias of
// std::string_view; core and absl::StrCat take the former, simdjson and the ingest API the latter.
// ToAbsl() converts at those call sites, without copying.
//
// Private to the ingest module. Thread safety: pure function.
#ifndef VIGIL_INGEST_INTERNAL_STRING_VIEW_H_
#define VIGIL_INGEST_INTERNAL_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"
#include "vigil/common/string_view.h"

namespace vigil::ingest_internal {

using ::vigil::ToAbsl;
using ::vigil::ToStd;

}  // namespace vigil::ingest_internal

#endif  // VIGIL_INGEST_INTERNAL_STRING_VIEW_H_
