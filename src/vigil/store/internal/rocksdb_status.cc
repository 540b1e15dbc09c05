#include "vigil/store/internal/rocksdb_status.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace vigil::store_internal {

bool IsLockHeld(const rocksdb::Status& s) {
  // RocksDB reports a held LOCK file as an IOError whose text is "While lock file: <path>/LOCK:
  // Resource temporarily unavailable" (another process) or "lock hold by current process"
  // (this one); there is no dedicated code.
  if (!s.IsIOError()) return false;
  const std::string text = absl::AsciiStrToLower(s.ToString());
  return absl::StrContains(text, "lock file") || absl::StrContains(text, "lock hold");
}

absl::StatusCode ToAbslCode(const rocksdb::Status& s) {
  using C = rocksdb::Status::Code;
  switch (s.code()) {
    case C::kOk:
      return absl::StatusCode::kOk;
    case C::kNotFound:
      return absl::StatusCode::kNotFound;
    case C::kCorruption:
      return absl::StatusCode::kDataLoss;
    case C::kNotSupported:
      return absl::StatusCode::kUnimplemented;
    case C::kInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
    case C::kIOError:
      if (IsLockHeld(s)) return absl::StatusCode::kFailedPrecondition;
      if (s.IsNoSpace()) return absl::StatusCode::kResourceExhausted;
      if (s.IsPathNotFound()) return absl::StatusCode::kNotFound;
      return absl::StatusCode::kUnavailable;
    case C::kTimedOut:
    case C::kExpired:
      return absl::StatusCode::kDeadlineExceeded;
    case C::kAborted:
      return absl::StatusCode::kAborted;
    case C::kShutdownInProgress:
    case C::kBusy:
    case C::kTryAgain:
    case C::kIncomplete:
      return absl::StatusCode::kUnavailable;
    case C::kColumnFamilyDropped:
      return absl::StatusCode::kFailedPrecondition;
    case C::kMergeInProgress:
    case C::kCompactionTooLarge:
    case C::kMaxCode:
      break;
  }
  return absl::StatusCode::kInternal;
}

absl::Status ToAbslStatus(const rocksdb::Status& s, absl::string_view path,
                          absl::string_view operation) {
  if (s.ok()) return absl::OkStatus();
  std::string message = absl::StrCat("KvStore '", path, "': ", operation, ": ", s.ToString());
  if (IsLockHeld(s)) {
    absl::StrAppend(&message, absl::StrContains(message, "current process")
                                  ? " (the store is already open in this process)"
                                  : " (the store is in use by another process)");
  }
  return absl::Status(ToAbslCode(s), message);
}

}  // namespace vigil::store_internal
