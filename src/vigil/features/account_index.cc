#include "vigil/features/account_index.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "vigil/common/check.h"

namespace vigil {
namespace {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint64_t Mix(uint64_t x) {  // murmur3 finalizer
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

std::string AccountKey(std::string_view bank_id, std::string_view account_id) {
  std::string key;
  key.reserve(bank_id.size() + 1 + account_id.size());
  AssignAccountKey(bank_id, account_id, &key);
  return key;
}

void AssignAccountKey(std::string_view bank_id, std::string_view account_id, std::string* key) {
  key->assign(bank_id);
  key->push_back('\x1f');
  key->append(account_id);
}

// A per-process random seed: account ids come from outside, and a fixed hash would let a
// sender craft ids that all collide.
AccountIndex::AccountIndex()
    : seed_(std::random_device{}() | uint64_t{std::random_device{}()} << 32) {
  slots_ = LargeArray<Slot>(1024);
  mask_ = slots_.size() - 1;
  offsets_.push_back(0);
}

uint64_t AccountIndex::Hash(std::string_view key) const {
  uint64_t h = seed_ ^ (key.size() * 0x9e3779b97f4a7c15ULL);
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) h = Mix(h ^ Load64(key.data() + i));
  uint64_t tail = 0;
  std::memcpy(&tail, key.data() + i, key.size() - i);
  return Mix(h ^ tail ^ 0x5bd1e995ULL);
}

bool AccountIndex::SlotHolds(const Slot& slot, std::string_view key) const {
  const size_t inline_bytes = std::min(key.size(), kInlineKeyBytes);
  if (slot.length != std::min<size_t>(key.size(), 255) ||
      std::memcmp(slot.prefix, key.data(), inline_bytes) != 0) {
    return false;
  }
  return key.size() <= kInlineKeyBytes || this->key(slot.number) == key;
}

size_t AccountIndex::Probe(std::string_view key, uint64_t hash) const {
  const uint32_t tag = static_cast<uint32_t>(hash >> 32) | 1;
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.tag == 0 || (s.tag == tag && SlotHolds(s, key))) return i;
  }
}

int64_t AccountIndex::Find(std::string_view key) const { return Find(key, Hash(key)); }

int64_t AccountIndex::Find(std::string_view key, uint64_t hash) const {
  const Slot& s = slots_[Probe(key, hash)];
  return s.tag == 0 ? -1 : static_cast<int64_t>(s.number);
}

uint32_t AccountIndex::FindOrAdd(std::string_view key) { return FindOrAdd(key, Hash(key)); }

uint32_t AccountIndex::FindOrAdd(std::string_view key, uint64_t hash) {
  VIGIL_DCHECK(hash == Hash(key));
  size_t i = Probe(key, hash);
  if (slots_[i].tag != 0) return slots_[i].number;
  if ((size() + 1) * 4 > slots_.size() * 3) {
    Grow();
    i = Probe(key, hash);
  }
  const auto number = static_cast<uint32_t>(size());
  VIGIL_CHECK(number != UINT32_MAX && arena_.size() + key.size() <= UINT32_MAX);
  Slot& s = slots_[i];
  s.tag = static_cast<uint32_t>(hash >> 32) | 1;
  s.number = number;
  s.length = static_cast<uint8_t>(std::min<size_t>(key.size(), 255));
  std::memcpy(s.prefix, key.data(), std::min(key.size(), kInlineKeyBytes));
  // Grow by a quarter rather than letting the string double: this arena holds every key.
  if (arena_.size() + key.size() > arena_.capacity()) {
    arena_.reserve(arena_.size() + arena_.size() / 4 + key.size() + 4096);
  }
  if (offsets_.size() == offsets_.capacity()) {
    offsets_.reserve(offsets_.size() + offsets_.size() / 4 + 1024);
  }
  arena_.append(key);
  offsets_.push_back(static_cast<uint32_t>(arena_.size()));
  return number;
}

void AccountIndex::Grow() {
  LargeArray<Slot> old = std::move(slots_);
  slots_ = LargeArray<Slot>(old.size() * 2);
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.tag == 0) continue;
    const std::string_view k = key(s.number);
    slots_[Probe(k, Hash(k))] = s;
  }
}

size_t AccountIndex::MemoryBytes() const {
  return slots_.MemoryBytes() + arena_.capacity() + offsets_.capacity() * sizeof(uint32_t);
}

}  // namespace vigil
