// KvStore: vigil's embedded, durable key-value store (RocksDB underneath).
//
// One store is one directory holding named column families: independent keyspaces that share
// one write-ahead log, so a KvWriteBatch across families is atomic (account feature state and
// the audit record of the decision that changed it commit together or not at all).
//
//   KvStoreOptions options;
//   options.path = "/var/lib/vigil/state";
//   options.column_families = {"features", "audit"};
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvStore> store, KvStore::Open(options));
//   VIGIL_RETURN_IF_ERROR(store->Put("features", key, value));
//   VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> v, store->Get("features", key));
//
// Durability: with sync_writes (the default) a write is fsync'd to the log before it returns,
// so an acknowledged write survives a power loss. Checkpoint() writes a consistent on-disk copy
// that KvStore::Open can open like any store (backups, feature-state snapshots).
//
// Errors are absl::Status values whose message names the operation and the store's path:
// kInvalidArgument (empty path, column family not open, oversized batch entry), kNotFound (no
// store at the path and create_if_missing is false), kFailedPrecondition (the store is locked by
// another process, or by another KvStore in this process), kAlreadyExists (checkpoint directory
// exists), kDataLoss (corruption), kResourceExhausted (disk full), kUnavailable (other I/O
// errors, shutdown in progress).
//
// RocksDB types stay out of this header (pimpl): including it is cheap and the engine's other
// modules do not see RocksDB.
//
// Thread safety: safe for concurrent use; every method may be called from any thread at any
// time (RocksDB serializes writers internally). Destroying the store must not race with calls.
#ifndef VIGIL_STORE_KV_STORE_H_
#define VIGIL_STORE_KV_STORE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/store/kv_faults.h"
#include "vigil/store/kv_iterator.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil {

struct KvStoreOptions {
  // Directory of the store. Required.
  std::string path;

  // Create the directory and an empty store when none exists. Default true. Set it to false
  // where a missing store means misconfiguration (restoring state that must exist): Open then
  // fails with kNotFound instead of silently starting empty.
  bool create_if_missing = true;

  // Column families to open; those missing on disk are created. "default" is always open.
  // Families that exist on disk but are not listed are opened too (so their data stays
  // reachable and RocksDB accepts the open). Names must be non-empty; duplicates are ignored.
  std::vector<std::string> column_families;

  // Default durability of writes. true (default): the log is fsync'd before a write returns; an
  // acknowledged write survives an OS crash or power loss (about 0.3 ms per sync on this
  // class of disk, so batch writes: one sync per KvWriteBatch, not per key). false: a write
  // survives a process crash but may be lost with the OS; for state that can be rebuilt.
  // KvWriteOptions::sync overrides it per write.
  bool sync_writes = true;

  // Size in bytes of the LRU cache of uncompressed data blocks, shared by every column family
  // of this store. Default 64 MiB. 0 disables the block cache (every read hits the OS page
  // cache): only for tests and tiny stores.
  size_t block_cache_bytes = size_t{64} << 20;

  // The memtables of every column family together hold at most about this many bytes
  // (RocksDB's db_write_buffer_size): beyond it the largest is flushed, whatever each family's
  // own 64 MiB allows. Default 256 MiB. 0: no bound over all families (each still bounded).
  size_t write_buffer_bytes = size_t{256} << 20;

  // Open the store of another process (which holds its lock) as a read-only follower: reads
  // see what that process had written when Open returned (its write-ahead log included);
  // writes fail. This directory, which must exist, holds the follower's own files. Empty
  // (default): open normally, taking the lock. For tools that examine a running server's data.
  std::string follower_dir;

  // Fault injection for tests (kv_faults.h): the store's file writes and syncs consult it.
  // Null (always, outside tests): the files are the operating system's, unwrapped.
  std::shared_ptr<KvFaults> faults;
};

struct KvWriteOptions {
  // When set, overrides KvStoreOptions::sync_writes for this write.
  std::optional<bool> sync;
};

class KvStore {
 public:
  // Opens (or creates) the store described by "options".
  static absl::StatusOr<std::unique_ptr<KvStore>> Open(const KvStoreOptions& options);

  // Closes the store and releases its lock (writes are already as durable as configured).
  // Every KvIterator of this store must be destroyed first.
  ~KvStore();
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  // The value stored under "key", or nullopt when there is none.
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view column_family,
                                                 absl::string_view key) const;

  absl::Status Put(absl::string_view column_family, absl::string_view key, absl::string_view value,
                   const KvWriteOptions& write_options = {});
  // Deleting a missing key is OK.
  absl::Status Delete(absl::string_view column_family, absl::string_view key,
                      const KvWriteOptions& write_options = {});

  // Applies every operation of "batch" atomically. Each column family the batch names is checked
  // first: on any error nothing is applied. An empty batch is OK and writes nothing.
  absl::Status Write(const KvWriteBatch& batch, const KvWriteOptions& write_options = {});

  // Calls fn(key, value) for each key that starts with "prefix" (all keys when empty), in
  // bytewise key order, over a point-in-time view. Stops at the first non-OK status from fn and
  // returns it. The views passed to fn are valid only during that call.
  absl::Status ForEach(
      absl::string_view column_family, absl::string_view prefix,
      absl::FunctionRef<absl::Status(absl::string_view key, absl::string_view value)> fn) const;

  // An iterator over "column_family" (see kv_iterator.h). It must not outlive the store.
  absl::StatusOr<std::unique_ptr<KvIterator>> NewIterator(absl::string_view column_family) const;

  // Writes a consistent snapshot of the whole store (every column family) into "dir", which
  // must not exist yet; its parent must. Files are hard-linked when "dir" is on the same
  // filesystem, so it is cheap. The result opens with KvStore::Open like any store.
  absl::Status Checkpoint(const std::string& dir) const;

  // Moves every column family's in-memory writes into table files and waits. Not needed for
  // durability (the log has them); it shortens recovery and makes a later Checkpoint cheaper.
  absl::Status Flush();

  // Bytes the memtables of every column family hold now (flushed or not yet), for the
  // memory they cost (see write_buffer_bytes).
  uint64_t MemtableBytes() const;

  const std::string& path() const;
  // Names of the open column families, "default" first, then in the order they were opened.
  std::vector<std::string> ColumnFamilies() const;

 private:
  struct Impl;
  explicit KvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil

#endif  // VIGIL_STORE_KV_STORE_H_
