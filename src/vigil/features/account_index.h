// AccountIndex: maps account keys (bank id + account id) to dense 32-bit account numbers.
//
// Dense numbers keep per-account state in one vector and counterparty references at 4 bytes.
// Numbers are assigned in first-seen order and never reused, so they are stable across
// checkpoint/restore.
//
// The table is built for lookups that miss the CPU caches (a million accounts and more): one
// open-addressing array of 32-byte slots holding a hash tag, the number and the first 22 bytes
// of the key, so a lookup of a key of up to 22 bytes (every AMLworld and generator key) touches
// one cache line (a node-based or control-byte map touches two or three). Keys are also kept
// once in an arena (key()), for checkpoints.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_INDEX_H_
#define VIGIL_FEATURES_ACCOUNT_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/common/large_array.h"

namespace vigil {

class AccountIndex {
 public:
  AccountIndex();

  // Returns the number for "key", assigning the next one if the key is new.
  // REQUIRES: fewer than 2^32 - 1 accounts and 4 GiB of keys in total.
  uint32_t FindOrAdd(std::string_view key);
  // Returns the number for "key", or -1 when unknown.
  int64_t Find(std::string_view key) const;

  // For callers that look keys up ahead of use (FeatureExtractor::ProcessBatch): the hash of a
  // key, a cache hint for the slot where its lookup starts, and the lookups given that hash.
  // REQUIRES for the last two: hash == Hash(key).
  uint64_t Hash(std::string_view key) const;
  void PrefetchSlot(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  int64_t Find(std::string_view key, uint64_t hash) const;
  uint32_t FindOrAdd(std::string_view key, uint64_t hash);

  // The key of "account". The view is valid until the next FindOrAdd.
  std::string_view key(uint32_t account) const {
    return std::string_view(arena_).substr(offsets_[account],
                                           offsets_[account + 1] - offsets_[account]);
  }
  size_t size() const { return offsets_.size() - 1; }
  // Heap bytes used by the index (slots, key arena, offsets), for memory reports.
  size_t MemoryBytes() const;

 private:
  static constexpr size_t kInlineKeyBytes = 22;
  struct Slot {
    uint32_t tag = 0;  // high bits of the hash, never 0 in a used slot; 0 = empty
    uint32_t number = 0;
    uint8_t length = 0;  // key length, saturated at 255
    char prefix[kInlineKeyBytes + 1] = {};
  };
  static_assert(sizeof(Slot) == 32);

  // The slot holding "key", or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const;
  bool SlotHolds(const Slot& slot, std::string_view key) const;
  void Grow();

  uint64_t seed_;
  LargeArray<Slot> slots_;  // power-of-two size; at most 3/4 used
  size_t mask_ = 0;
  std::string arena_;              // every key, back to back
  std::vector<uint32_t> offsets_;  // key n is arena_[offsets_[n], offsets_[n + 1])
};

// The account key of a party: "<bank_id>\x1f<account_id>". The unit separator cannot occur in
// either id (ingest rejects control characters), so distinct parties never share a key.
std::string AccountKey(std::string_view bank_id, std::string_view account_id);
// The same, written into *key (replacing its contents, reusing its capacity).
void AssignAccountKey(std::string_view bank_id, std::string_view account_id, std::string* key);

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_INDEX_H_
