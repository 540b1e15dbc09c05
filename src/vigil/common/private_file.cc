#include "vigil/common/private_file.h"

#include <sys/stat.h>

#include "absl/strings/str_format.h"
#include "vigil/common/string_view.h"

namespace vigil {

absl::Status CheckOwnerOnly(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRWXG | S_IRWXO)) == 0) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrFormat("%s '%s' is accessible to its group or others (mode %03o): chmod 600 it",
                      ToAbsl(what), path, static_cast<unsigned>(st.st_mode & 0777)));
}

}  // namespace vigil
