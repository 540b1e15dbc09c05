// RecentMemory: the latest `capacity` entries by key, in the order they were first inserted,
// the oldest forgotten first; saved incrementally into a column family of a KvStore, so that a
// cluster node's idempotency memory and its answers survive a restart without being written
// whole at every checkpoint (docs/cluster.md, "Checkpoints").
//
// Each entry has an ordinal: how many entries were inserted before it. Saved layout, under a
// caller's key prefix: key = prefix + 8-byte big-endian ordinal (so the store's order is the
// insertion order), value = varint key length, key, value. SaveInto puts the entries inserted
// since the last save and deletes the saved ones forgotten since; the saved ordinals are
// always one contiguous range.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_CLUSTER_RECENT_MEMORY_H_
#define VIGIL_CLUSTER_RECENT_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "vigil/store/kv_store.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil::cluster {

class RecentMemory {
 public:
  // REQUIRES: capacity > 0.
  explicit RecentMemory(size_t capacity);

  // Inserts key → value unless the key is held (then nothing changes: false). Forgets the
  // oldest entry when the memory holds more than its capacity.
  bool Insert(std::string key, std::string value);
  // The value held under "key", or null. Valid until the next Insert or Restore.
  const std::string* Find(std::string_view key) const;
  size_t size() const { return order_.size(); }

  // Puts what changed since the last save (or Restore) into "batch": the entries inserted, and
  // deletes of the saved entries forgotten. The batch must be written before the next
  // SaveInto's, in order (the caller's checkpoints do so).
  void SaveInto(KvWriteBatch& batch, std::string_view column_family, std::string_view prefix);
  // Replaces the memory by what "store" holds under "prefix" (as SaveInto wrote it): the
  // entries, their order and ordinals. Entries beyond the capacity (a smaller capacity than
  // the one that saved them) are forgotten, oldest first, and deleted by the next save.
  // kDataLoss naming the key when an entry cannot be read or the ordinals are not contiguous.
  absl::Status Restore(const KvStore& store, std::string_view column_family,
                       std::string_view prefix);

 private:
  uint64_t first_ordinal() const { return next_ordinal_ - order_.size(); }
  void ForgetBeyondCapacity();

  size_t capacity_;
  absl::flat_hash_map<std::string, std::string> entries_;
  std::deque<std::string> order_;  // keys, oldest first: order_[i] has ordinal first_ordinal() + i
  uint64_t next_ordinal_ = 0;
  // The store holds exactly the entries with ordinals in [saved_first_, saved_next_).
  uint64_t saved_first_ = 0;
  uint64_t saved_next_ = 0;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_RECENT_MEMORY_H_
