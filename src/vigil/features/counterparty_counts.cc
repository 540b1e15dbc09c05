#include "vigil/features/counterparty_counts.h"

#include <algorithm>

#include "vigil/common/check.h"

namespace vigil {

bool CounterpartyCounts::Update(uint32_t account, Counts& c, Slot slot, int delta) {
  const bool any24_before = c.n[kIn24h] + c.n[kOut24h] > 0;
  const bool any7_before = c.n[kIn7d] + c.n[kOut7d] > 0;
  const bool dir_before = c.n[slot] > 0;
  VIGIL_DCHECK(delta > 0 || c.n[slot] > 0);
  if (c.n[slot] == kCountCap) {
    // Beyond 16 bits: the excess lives in overflow_ (see kCountCap).
    const uint64_t key = uint64_t{account} << 2 | static_cast<uint64_t>(slot);
    if (delta > 0) {
      if (overflow_ == nullptr) overflow_ = std::make_unique<absl::flat_hash_map<uint64_t, uint32_t>>();
      ++(*overflow_)[key];
      return false;
    }
    if (overflow_ != nullptr) {
      auto it = overflow_->find(key);
      if (it != overflow_->end()) {
        if (--it->second == 0) overflow_->erase(it);
        return false;
      }
    }
  }
  c.n[slot] = static_cast<uint16_t>(static_cast<int>(c.n[slot]) + delta);
  const int dir_change = static_cast<int>(c.n[slot] > 0) - static_cast<int>(dir_before);
  if (slot == kIn7d) fan_in_7d_ += dir_change;
  if (slot == kOut7d) fan_out_7d_ += dir_change;
  distinct_24h_ += static_cast<int>(c.n[kIn24h] + c.n[kOut24h] > 0) - static_cast<int>(any24_before);
  distinct_7d_ += static_cast<int>(c.n[kIn7d] + c.n[kOut7d] > 0) - static_cast<int>(any7_before);
  return c.empty();
}

void CounterpartyCounts::Add(uint32_t account, Slot slot, int delta) {
  if (large_ != nullptr) {
    auto [it, inserted] = large_->try_emplace(account);
    if (Update(account, it->second, slot, delta)) large_->erase(it);
    return;
  }
  auto it = std::lower_bound(small_.begin(), small_.end(), account,
                             [](const Entry& e, uint32_t a) { return e.account < a; });
  if (it == small_.end() || it->account != account) {
    VIGIL_DCHECK(delta > 0);
    if (small_.size() >= kSmallLimit) {
      large_ = std::make_unique<LargeMap>();
      large_->reserve(small_.size() * 2);
      for (const Entry& e : small_) large_->emplace(e.account, e.counts);
      std::vector<Entry>().swap(small_);
      Add(account, slot, delta);
      return;
    }
    if (small_.size() == small_.capacity()) {
      // Grow by a quarter, not double: the busiest accounts hold many of these.
      const auto offset = it - small_.begin();
      small_.reserve(small_.size() + small_.size() / 4 + 4);
      it = small_.begin() + offset;
    }
    it = small_.insert(it, Entry{account, Counts{}});
  }
  if (Update(account, it->counts, slot, delta)) small_.erase(it);
}

bool CounterpartyCounts::Has(uint32_t account, Slot slot) const {
  if (large_ != nullptr) {
    auto it = large_->find(account);
    return it != large_->end() && it->second.n[slot] > 0;
  }
  auto it = std::lower_bound(small_.begin(), small_.end(), account,
                             [](const Entry& e, uint32_t a) { return e.account < a; });
  return it != small_.end() && it->account == account && it->counts.n[slot] > 0;
}

int CounterpartyCounts::CollectIfFew(Slot slot, uint32_t* out, int cap) const {
  const uint32_t total = slot == kIn7d ? fan_in_7d_ : slot == kOut7d ? fan_out_7d_ : UINT32_MAX;
  if (large_ != nullptr || total > static_cast<uint32_t>(cap)) return -1;
  int n = 0;
  for (const Entry& e : small_) {
    if (e.counts.n[slot] > 0) {
      if (n == cap) return -1;
      out[n++] = e.account;
    }
  }
  return n;
}

void CounterpartyCounts::Clear() {
  small_.clear();
  large_.reset();
  overflow_.reset();
  distinct_24h_ = distinct_7d_ = fan_in_7d_ = fan_out_7d_ = 0;
}

size_t CounterpartyCounts::MemoryBytes() const {
  size_t bytes = small_.capacity() * sizeof(Entry);
  if (large_ != nullptr) {
    bytes += sizeof(LargeMap) + large_->capacity() * (sizeof(std::pair<const uint32_t, Counts>) + 1);
  }
  if (overflow_ != nullptr) {
    bytes += sizeof(*overflow_) + overflow_->capacity() * (sizeof(std::pair<const uint64_t, uint32_t>) + 1);
  }
  return bytes;
}

}  // namespace vigil
