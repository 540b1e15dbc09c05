#include "vigil/common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/status_macros.h"
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

namespace {

// Where a file's temporary twin and its directory live, and how a step's failure reads.
struct PrivateWrite {
  PrivateWrite(const std::string& path_in, std::string_view what_in)
      : path(path_in), what(what_in) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    dir = parent.empty() ? "." : parent.string();
  }

  absl::Status Failed(const char* step, int error) const {
    return absl::UnavailableError(
        absl::StrCat(ToAbsl(what), " ", path, ": cannot ", step, ": ", std::strerror(error)));
  }

  // Writes "contents" whole and synced to a new temporary file beside the path, with "mode";
  // its name in *temp. The directory is created when missing.
  absl::Status WriteTemporary(std::string_view contents, mode_t mode, std::string* temp) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    *temp = absl::StrCat(path, ".tmp.XXXXXX");
    const int fd = ::mkstemp(temp->data());  // mode 0600 from the start
    if (fd < 0) return Failed("create a temporary file", errno);
    bool written = ::fchmod(fd, mode) == 0;
    for (size_t off = 0; written && off < contents.size();) {
      const ssize_t n = ::write(fd, contents.data() + off, contents.size() - off);
      if (n < 0 && errno == EINTR) continue;
      written = n > 0;
      if (written) off += static_cast<size_t>(n);
    }
    written = written && ::fsync(fd) == 0;
    const int write_errno = errno;
    ::close(fd);
    if (!written) {
      ::unlink(temp->c_str());
      return Failed("write", write_errno);
    }
    return absl::OkStatus();
  }

  // The directory entry must survive an OS crash too.
  absl::Status SyncDirectory() const {
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
      const int error = errno;
      if (dir_fd >= 0) ::close(dir_fd);
      return Failed("sync its directory", error);
    }
    ::close(dir_fd);
    return absl::OkStatus();
  }

  const std::string& path;
  std::string_view what;
  std::string dir;
};

// CreatePrivateFileOnce with the file's mode: whether this call created the file.
absl::StatusOr<bool> CreateOnce(const std::string& path, std::string_view contents,
                                std::string_view what, mode_t mode) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return false;
  const PrivateWrite file(path, what);
  std::string temp;
  if (absl::Status s = file.WriteTemporary(contents, mode, &temp); !s.ok()) return s;
  // link, not rename: it fails with EEXIST when another process created the file meanwhile.
  const int linked = ::link(temp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(temp.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST) return false;
    return file.Failed("create", link_errno);
  }
  if (absl::Status s = file.SyncDirectory(); !s.ok()) return s;
  return true;
}

absl::Status AlreadyExists(const std::string& path, std::string_view what) {
  return absl::AlreadyExistsError(absl::StrCat(
      ToAbsl(what), " '", path,
      "' exists; refusing to overwrite it (remove it first if you mean to replace it)"));
}

}  // namespace

absl::StatusOr<bool> CreatePrivateFileOnce(const std::string& path, std::string_view contents,
                                           std::string_view what) {
  return CreateOnce(path, contents, what, 0600);
}

absl::Status CreateNewFile(const std::string& path, std::string_view contents,
                           std::string_view what, mode_t mode) {
  VIGIL_ASSIGN_OR_RETURN(const bool created, CreateOnce(path, contents, what, mode));
  return created ? absl::OkStatus() : AlreadyExists(path, what);
}

absl::Status CheckAbsent(const std::string& path, std::string_view what) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? AlreadyExists(path, what) : absl::OkStatus();
}

absl::Status ReplacePrivateFile(const std::string& path, std::string_view contents,
                                std::string_view what) {
  const PrivateWrite file(path, what);
  std::string temp;
  if (absl::Status s = file.WriteTemporary(contents, 0600, &temp); !s.ok()) return s;
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return file.Failed("replace", error);
  }
  return file.SyncDirectory();
}

}  // namespace vigil
