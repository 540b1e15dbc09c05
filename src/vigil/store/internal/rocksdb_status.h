// Conversion of rocksdb::Status into absl::Status, for the store module only (other modules never
// see RocksDB types).
//
// Thread safety: pure functions.
#ifndef VIGIL_STORE_INTERNAL_ROCKSDB_STATUS_H_
#define VIGIL_STORE_INTERNAL_ROCKSDB_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "rocksdb/status.h"

namespace vigil::store_internal {

// Maps "s" to the canonical code (see kv_store.h) with the message
// "KvStore '<path>': <operation>: <RocksDB's text>". OK stays OK.
absl::Status ToAbslStatus(const rocksdb::Status& s, absl::string_view path,
                          absl::string_view operation);

// The canonical code alone, for "s" not OK.
absl::StatusCode ToAbslCode(const rocksdb::Status& s);

// True when "s" says the store's LOCK file is held (by another process, or by another open of
// the same store in this process).
bool IsLockHeld(const rocksdb::Status& s);

}  // namespace vigil::store_internal

#endif  // VIGIL_STORE_INTERNAL_ROCKSDB_STATUS_H_
