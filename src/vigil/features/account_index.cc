#include "vigil/features/account_index.h"

#include <algorithm>
#include <cstring>

namespace vigil {

std::string AccountKey(std::string_view bank_id, std::string_view account_id) {
  std::string key;
  key.reserve(bank_id.size() + 1 + account_id.size());
  key.append(bank_id);
  key.push_back('\x1f');
  key.append(account_id);
  return key;
}

std::string_view AccountIndex::Intern(std::string_view key) {
  if (key.size() > chunk_size_ - chunk_used_) {
    chunk_size_ = std::max(kChunkBytes, key.size());  // an oversized key gets a chunk of its own
    chunks_.push_back(std::make_unique<char[]>(chunk_size_));
    chunk_used_ = 0;
    arena_bytes_ += chunk_size_;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  std::memcpy(dst, key.data(), key.size());
  chunk_used_ += key.size();
  return {dst, key.size()};
}

uint32_t AccountIndex::FindOrAdd(std::string_view key) {
  auto it = map_.find(key);
  if (it != map_.end()) return it->second;
  const auto number = static_cast<uint32_t>(keys_.size());
  const std::string_view stored = Intern(key);
  keys_.push_back(stored);
  map_.emplace(stored, number);
  return number;
}

int64_t AccountIndex::Find(std::string_view key) const {
  auto it = map_.find(key);
  return it == map_.end() ? -1 : static_cast<int64_t>(it->second);
}

size_t AccountIndex::MemoryBytes() const {
  const size_t slot = sizeof(std::pair<std::string_view, uint32_t>) + 1;  // + control byte
  return map_.capacity() * slot + arena_bytes_ +
         keys_.capacity() * sizeof(std::string_view);
}

}  // namespace vigil
