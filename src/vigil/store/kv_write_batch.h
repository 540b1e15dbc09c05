// KvWriteBatch: a group of Put/Delete operations, possibly across column families, that
// KvStore::Write applies atomically: after a crash either every operation is in the store or
// none is, and no reader ever sees part of a batch.
//
//   KvWriteBatch batch;
//   batch.Put("accounts", account_key, state);
//   batch.Put("audit", seq_key, record);
//   batch.Delete("pending", txn_key);
//   VIGIL_RETURN_IF_ERROR(store.Write(batch));
//
// Column families are named, not resolved, while the batch is built, so a batch does not depend
// on a particular KvStore; a name the store has not opened fails the whole Write and nothing is
// applied. Operations apply in the order they were added (a Put then a Delete of one key leaves
// no key). Keys and values are copied into one contiguous buffer.
//
// Thread safety: externally synchronized (a batch is built by one thread at a time); a batch
// may be reused after Clear().
#ifndef VIGIL_STORE_KV_WRITE_BATCH_H_
#define VIGIL_STORE_KV_WRITE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace vigil {

class KvWriteBatch {
 public:
  KvWriteBatch() = default;
  KvWriteBatch(const KvWriteBatch&) = default;
  KvWriteBatch& operator=(const KvWriteBatch&) = default;
  KvWriteBatch(KvWriteBatch&&) = default;
  KvWriteBatch& operator=(KvWriteBatch&&) = default;

  // Keys and values may hold any bytes, including '\0'. A key or value of 4 GiB or more (more
  // than RocksDB can store) makes the batch invalid: Write returns kInvalidArgument.
  void Put(absl::string_view column_family, absl::string_view key, absl::string_view value);
  void Delete(absl::string_view column_family, absl::string_view key);

  // Removes every operation (keeps the buffer's capacity).
  void Clear();

  // Number of Put/Delete operations.
  size_t Count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Bytes of keys, values and framing held: a guide for sizing group commits.
  size_t ApproximateSize() const { return rep_.size(); }

 private:
  friend class KvStore;

  enum class Op : char { kPut = 'P', kDelete = 'D' };

  uint32_t FamilyIndex(absl::string_view column_family);
  void AppendField(absl::string_view field);

  // Operations, each: Op byte, uint32 family index, uint32 key size, key bytes, and for kPut
  // uint32 value size, value bytes (native byte order: never persisted).
  std::string rep_;
  std::vector<std::string> families_;  // distinct column family names, in first-use order
  size_t count_ = 0;
  bool too_large_ = false;  // a key or value did not fit a uint32 size
};

}  // namespace vigil

#endif  // VIGIL_STORE_KV_WRITE_BATCH_H_
