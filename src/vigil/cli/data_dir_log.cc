#include "vigil/cli/data_dir_log.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/cli/data_files.h"

namespace vigil::cli {

absl::StatusOr<std::unique_ptr<TemporaryDirectory>> TemporaryDirectory::Create() {
  std::string path = (std::filesystem::temp_directory_path() / "vigil-audit-XXXXXX").string();
  if (::mkdtemp(path.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a temporary directory '", path, "': ", std::strerror(errno)));
  }
  return std::unique_ptr<TemporaryDirectory>(new TemporaryDirectory(std::move(path)));
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

absl::StatusOr<OpenedLog> OpenLog(const std::string& data_dir) {
  KvStoreOptions options;
  options.path = (std::filesystem::path(data_dir) / "features").string();
  options.create_if_missing = false;
  // No families named: KvStore opens those on disk, and creates none in a store without a log
  // (this command writes nothing).
  options.block_cache_bytes = size_t{8} << 20;
  absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
  OpenedLog opened;
  if (absl::IsFailedPrecondition(store.status())) {
    // A running `vigil serve` (or `vigil replay`) holds the store: read it as a follower, as it
    // is now (what it has written, its write-ahead log included); nothing is written to it.
    absl::StatusOr<std::unique_ptr<TemporaryDirectory>> dir = TemporaryDirectory::Create();
    if (!dir.ok()) return dir.status();
    options.follower_dir = (*dir)->path();
    absl::StatusOr<std::unique_ptr<KvStore>> follower = KvStore::Open(options);
    if (follower.ok()) {
      std::cerr << "note: '" << options.path
                << "' is held by a running vigil serve (or replay); reading the log as it is "
                   "now\n";
      opened.follower_dir = *std::move(dir);
      store = std::move(follower);
    }
  }
  if (!store.ok()) {
    if (absl::IsNotFound(store.status())) {
      return absl::NotFoundError(
          absl::StrCat("no vigil store at '", options.path, "' (", kDataDirHint, ")"));
    }
    if (absl::IsFailedPrecondition(store.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", options.path,
          "' is locked: a running `vigil serve` (or `vigil replay`) holds it. Ask the server "
          "(GET /v1/audit/verify) or stop it first (",
          store.status().message(), ")"));
    }
    return store.status();
  }
  opened.store = *std::move(store);
  const std::vector<std::string> families = opened.store->ColumnFamilies();
  for (const std::string& family : audit::AuditColumnFamilies()) {
    // A log written before records were sealed has no audit_keys: it reads as empty.
    if (family == audit::kAuditKeysFamily) continue;
    if (std::find(families.begin(), families.end(), family) == families.end()) {
      return absl::NotFoundError(absl::StrCat("no audit log in '", options.path,
                                              "': no decision has been recorded there"));
    }
  }
  absl::StatusOr<std::unique_ptr<audit::AuditLog>> log =
      audit::AuditLog::OpenForReading(opened.store.get());
  if (!log.ok()) {
    if (absl::IsNotFound(log.status())) {
      return absl::NotFoundError(absl::StrCat("no audit log in '", options.path,
                                              "': no decision has been recorded there"));
    }
    return log.status();
  }
  opened.log = *std::move(log);
  return opened;
}

}  // namespace vigil::cli
