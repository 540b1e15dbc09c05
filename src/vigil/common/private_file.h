// Files that must be private to their owner (private keys, the token file): a file its group
// or others may read or write is refused, since its secret is not secret any more.
#ifndef VIGIL_COMMON_PRIVATE_FILE_H_
#define VIGIL_COMMON_PRIVATE_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace vigil {

// OK when "path" is accessible to its owner only, or does not exist (the caller reports
// absence its own way); kPermissionDenied otherwise, as "<what> '<path>' is accessible to its
// group or others (mode 644): chmod 600 it".
absl::Status CheckOwnerOnly(const std::string& path, std::string_view what);

}  // namespace vigil

#endif  // VIGIL_COMMON_PRIVATE_FILE_H_
