#include "vigil/common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<bool> CreatePrivateFileOnce(const std::string& path, std::string_view contents,
                                           std::string_view what) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return false;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::filesystem::create_directories(dir, ec);
  const auto failed = [&](const char* step) {
    return absl::UnavailableError(
        absl::StrCat(ToAbsl(what), " ", path, ": cannot ", step, ": ", std::strerror(errno)));
  };
  std::string temp = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return failed("create a temporary file");
  bool written = ::fchmod(fd, 0600) == 0;
  for (size_t off = 0; written && off < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
    written = n > 0;
    if (written) off += static_cast<size_t>(n);
  }
  written = written && ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!written) {
    ::unlink(temp.c_str());
    errno = write_errno;
    return failed("write");
  }
  // link, not rename: it fails with EEXIST when another process created the file meanwhile.
  const int linked = ::link(temp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(temp.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST) return false;
    errno = link_errno;
    return failed("create");
  }
  // The directory entry must survive an OS crash too.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
    if (dir_fd >= 0) ::close(dir_fd);
    return failed("sync its directory");
  }
  ::close(dir_fd);
  return true;
}

}  // namespace vigil
