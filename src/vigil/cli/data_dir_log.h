// DataDirLog: a data dir's store and the decision log in it, opened for reading by the
// commands that examine a log offline (vigil audit, vigil cases). When a running `vigil serve`
// (or `vigil replay`) holds the store, it is read as a follower: as it is now, nothing written.
#ifndef VIGIL_CLI_DATA_DIR_LOG_H_
#define VIGIL_CLI_DATA_DIR_LOG_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "vigil/audit/audit_log.h"
#include "vigil/store/kv_store.h"

namespace vigil::cli {

// A temporary directory, removed with its contents when this goes.
class TemporaryDirectory {
 public:
  static absl::StatusOr<std::unique_ptr<TemporaryDirectory>> Create();
  ~TemporaryDirectory();
  const std::string& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The store and the log in it. The log is declared last so that it closes first; the
// follower's directory first so that it goes last.
struct OpenedLog {
  std::unique_ptr<TemporaryDirectory> follower_dir;  // when a running server holds the store
  std::unique_ptr<KvStore> store;
  std::unique_ptr<audit::AuditLog> log;
};

// Errors carry the message for the user; every one is an environment error (exit 2).
// "data_dir" exists (AddDataDirOption checked it).
absl::StatusOr<OpenedLog> OpenLog(const std::string& data_dir);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_DATA_DIR_LOG_H_
