// AccountIndex: maps account keys (bank id + account id) to dense 32-bit account numbers.
//
// Dense numbers keep per-account state in one vector and counterparty references at 4 bytes.
// Keys are stored once, in an append-only arena; numbers are assigned in first-seen order and
// never reused, so they are stable across checkpoint/restore.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_INDEX_H_
#define VIGIL_FEATURES_ACCOUNT_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace vigil {

class AccountIndex {
 public:
  // Returns the number for "key", assigning the next one if the key is new.
  uint32_t FindOrAdd(std::string_view key);
  // Returns the number for "key", or -1 when unknown.
  int64_t Find(std::string_view key) const;
  std::string_view key(uint32_t account) const { return keys_[account]; }
  size_t size() const { return keys_.size(); }
  // Heap bytes used by the index (map slots, key arena, key table), for memory reports.
  size_t MemoryBytes() const;

 private:
  std::string_view Intern(std::string_view key);

  static constexpr size_t kChunkBytes = 1 << 20;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_size_ = 0;
  size_t chunk_used_ = 0;
  size_t arena_bytes_ = 0;
  std::vector<std::string_view> keys_;
  absl::flat_hash_map<std::string_view, uint32_t> map_;
};

// The account key of a party: "<bank_id>\x1f<account_id>". The unit separator cannot occur in
// either id (ingest rejects control characters), so distinct parties never share a key.
std::string AccountKey(std::string_view bank_id, std::string_view account_id);

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_INDEX_H_
