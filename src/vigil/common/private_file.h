// Files that must be private to their owner (private keys, the token file), and the one way
// they are written: whole and synced under a temporary name, then put in place. A file its group
// or others may read or write is refused, since its secret is not secret any more.
#ifndef VIGIL_COMMON_PRIVATE_FILE_H_
#define VIGIL_COMMON_PRIVATE_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil {

// OK when "path" is accessible to its owner only, or does not exist (the caller reports
// absence its own way); kPermissionDenied otherwise, as "<what> '<path>' is accessible to its
// group or others (mode 644): chmod 600 it".
absl::Status CheckOwnerOnly(const std::string& path, std::string_view what);

// Creates "path" holding "contents", mode 0600, unless it exists; its directory is created
// when missing. The file is written whole and synced under a temporary name, then linked into
// place and the directory synced: it is either absent or complete, also after a crash, and of
// two processes creating it at once exactly one wins. Returns whether this call created it.
// Errors (kUnavailable) name "what", the path and the system's reason, never the contents.
absl::StatusOr<bool> CreatePrivateFileOnce(const std::string& path, std::string_view contents,
                                           std::string_view what);

// Creates "path" holding "contents" as CreatePrivateFileOnce does, for a file that must never
// replace another (a new signing key): one already there, also one another process creates
// meanwhile, is kAlreadyExists (CheckAbsent's message) and is left as it was. "mode" is the new
// file's permission bits: 0600, or 0644 for one meant to be read by others, such as a public key
// written beside its private half. Other errors as CreatePrivateFileOnce's.
absl::Status CreateNewFile(const std::string& path, std::string_view contents,
                           std::string_view what, mode_t mode = 0600);

// OK when nothing is at "path"; kAlreadyExists otherwise, as "<what> '<path>' exists; refusing
// to overwrite it (remove it first if you mean to replace it)". For a command that checks every
// file it will create before it writes the first.
absl::Status CheckAbsent(const std::string& path, std::string_view what);

// Replaces "path" (or creates it) with "contents", mode 0600, atomically: written whole and
// synced under a temporary name, renamed into place, the directory synced; a reader or a crash
// sees the old file or the new one, never a mix, and never a moment with group or others
// allowed. Errors (kUnavailable) as CreatePrivateFileOnce's.
absl::Status ReplacePrivateFile(const std::string& path, std::string_view contents,
                                std::string_view what);

}  // namespace vigil

#endif  // VIGIL_COMMON_PRIVATE_FILE_H_
