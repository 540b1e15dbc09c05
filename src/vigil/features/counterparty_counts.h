// CounterpartyCounts: for one account, how many of its events in the 24h and 7d windows involve
// each counterparty, by direction, plus the distinct counts derived from them.
//
// Most accounts deal with a handful of counterparties, a few (merchants, payroll, exchanges)
// with thousands. Small sets live in a sorted vector (20 bytes per counterparty, no hashing);
// past kSmallLimit entries they move to a hash map so inserts and removals stay O(1).
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_COUNTERPARTY_COUNTS_H_
#define VIGIL_FEATURES_COUNTERPARTY_COUNTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace vigil {

class CounterpartyCounts {
 public:
  enum Slot : int { kIn24h = 0, kOut24h = 1, kIn7d = 2, kOut7d = 3 };
  static constexpr size_t kSmallLimit = 128;

  CounterpartyCounts() = default;
  CounterpartyCounts(CounterpartyCounts&&) = default;
  CounterpartyCounts& operator=(CounterpartyCounts&&) = default;

  // Adds delta (+1 or -1) to the count of "account" in "slot". REQUIRES: the count stays >= 0.
  void Add(uint32_t account, Slot slot, int delta);
  // Whether "account" has a non-zero count in "slot".
  bool Has(uint32_t account, Slot slot) const;

  // Copies the accounts with a non-zero count in "slot" into out[0..cap) and returns how many,
  // or -1 when there are more than "cap" (callers then fall back to Has()).
  int CollectIfFew(Slot slot, uint32_t* out, int cap) const;

  uint32_t distinct_24h() const { return distinct_24h_; }
  uint32_t distinct_7d() const { return distinct_7d_; }
  uint32_t fan_in_7d() const { return fan_in_7d_; }
  uint32_t fan_out_7d() const { return fan_out_7d_; }

  void Clear();
  size_t MemoryBytes() const;

 private:
  // 16-bit counts keep an entry at 12 bytes (most of a busy account's index). A count that
  // reaches kCountCap stays there and the excess is kept in overflow_, which exists only for an
  // account with at least 65,535 events with one counterparty in a window.
  static constexpr uint16_t kCountCap = UINT16_MAX;
  struct Counts {
    uint16_t n[4] = {0, 0, 0, 0};
    bool empty() const { return (n[0] | n[1] | n[2] | n[3]) == 0; }
  };
  struct Entry {
    uint32_t account;
    Counts counts;
  };
  using LargeMap = absl::flat_hash_map<uint32_t, Counts>;

  // Applies the change to one entry and keeps the distinct counters; returns true when every
  // count of the entry is zero (it can then be removed).
  bool Update(uint32_t account, Counts& c, Slot slot, int delta);

  std::vector<Entry> small_;  // sorted by account; used while large_ is null
  std::unique_ptr<LargeMap> large_;
  // (account << 2 | slot) -> count above kCountCap.
  std::unique_ptr<absl::flat_hash_map<uint64_t, uint32_t>> overflow_;
  uint32_t distinct_24h_ = 0, distinct_7d_ = 0, fan_in_7d_ = 0, fan_out_7d_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_COUNTERPARTY_COUNTS_H_
