// AccountState: the behavioural history of one account, enough to answer every per-account
// feature for a new payment in O(1) amortized time on the in-order path.
//
// Windows are event-time sliding windows: an event at time e is in the window of length W at
// time t when t - W < e <= t. The state keeps the account's recent events sorted by event time
// (ties in arrival order) plus, for the latest time applied (the frontier), running totals per
// window. Three paths:
//  - in order (t >= frontier): windows slide forward, expired events leave the running totals;
//    the snapshot for t comes from the totals.
//  - late (t < frontier, within the lateness bound): the event is inserted in time order and
//    added to the totals of the windows it falls in at the frontier; the snapshot for t is
//    computed by scanning the stored events in (t - 7d, t].
//  - events older than frontier - 7d - lateness can no longer be in any window a future event
//    asks about, so they are dropped: memory is bounded by the account's 7-day activity.
//
// Memory: an event takes 16 bytes. Most accounts have a few events a week; their distinct
// counterparties and recent receivers are found by scanning those few events. An account with
// more than kIndexAbove events in its 7-day window (a merchant, a payroll account) gets a
// counterparty index instead (per-counterparty counts and its most recent receivers), kept
// incrementally and dropped again when the account quietens below kIndexBelow.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_STATE_H_
#define VIGIL_FEATURES_ACCOUNT_STATE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/common/huge_page_pool.h"
#include "vigil/features/account_history.h"
#include "vigil/features/account_risk.h"
#include "vigil/features/counterparty_counts.h"

namespace vigil {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerHour = 3600 * kMicrosPerSecond;

enum class Window : int { k1h = 0, k24h = 1, k7d = 2 };
inline constexpr int kNumWindows = 3;
inline constexpr std::array<int64_t, kNumWindows> kWindowMicros = {
    kMicrosPerHour, 24 * kMicrosPerHour, 7 * 24 * kMicrosPerHour};

// Event times the state can hold: [2000-01-01, 2000-01-01 + 2^52 µs ≈ year 2142).
inline constexpr int64_t kMinEventTimeUs = 946'684'800'000'000;
inline constexpr int64_t kMaxEventTimeUs = kMinEventTimeUs + (int64_t{1} << 52) - 1;
// Largest amount one event can hold, in cents of the reporting currency (2^42 - 1, about
// 44 billion).
inline constexpr int64_t kMaxEventAmountCents = (int64_t{1} << 42) - 1;

enum class Direction : uint8_t { kIn = 0, kOut = 1 };

struct AccountEvent {
  int64_t time_us = 0;        // REQUIRES: in [kMinEventTimeUs, kMaxEventTimeUs]
  int64_t amount_cents = 0;   // reporting currency; REQUIRES: in [0, kMaxEventAmountCents]
  uint32_t counterparty = 0;  // AccountIndex number
  Direction direction = Direction::kIn;
  bool near_threshold = false;
};

// Packed to 28 bytes (4-byte aligned): three of these sit in every account's state.
struct __attribute__((packed, aligned(4))) WindowTotals {
  int64_t in_sum_cents = 0;
  int64_t out_sum_cents = 0;
  uint32_t in_count = 0;
  uint32_t out_count = 0;
  uint32_t near_threshold_count = 0;
};

struct ApplyOptions {
  // The caller's lateness bound: no later event will be older than frontier - lateness_us.
  int64_t lateness_us = 0;
  // How many most recent distinct receivers an indexed account remembers for the cycle check.
  int recent_receivers = 8;
};

// Per-account features as of one event time (after the event at that time was applied).
struct AccountSnapshot {
  std::array<WindowTotals, kNumWindows> windows;
  int64_t distinct_counterparties_24h = 0;
  int64_t distinct_counterparties_7d = 0;
  int64_t fan_in_7d = 0;   // distinct senders to this account
  int64_t fan_out_7d = 0;  // distinct receivers from this account
  // Latest event time before this event (<= its time); INT64_MIN if none: for dormancy.
  int64_t previous_activity_us = INT64_MIN;
};

class AccountState {
 public:
  static constexpr size_t kIndexAbove = 24;
  static constexpr size_t kIndexBelow = 12;

  AccountState() = default;
  AccountState(AccountState&&) = default;
  AccountState& operator=(AccountState&&) = default;

  // Applies one event. REQUIRES: event.time_us >= frontier() - options.lateness_us (the caller
  // enforces the lateness bound). Fills *snapshot as of event.time_us, this event included.
  void Apply(const AccountEvent& event, const ApplyOptions& options, AccountSnapshot* snapshot);

  // The latest event time applied; INT64_MIN before the first event.
  int64_t frontier() const { return frontier_; }

  // EWMA of reporting amounts in arrival order (count-based, weight alpha for the newest).
  // UpdateAmountStats returns the z-score of "amount" against the statistics before the update
  // (NaN with fewer than 2 earlier amounts or zero deviation) and then folds it in.
  double UpdateAmountStats(double amount, double alpha);
  double ewma_mean() const { return static_cast<double>(ewma_mean_); }
  double ewma_std() const;

  // Calls fn(counterparty) for the distinct receivers of this account's payments with event
  // time in (t - 7d, t], most recent first, at most "limit" of them (and, for an indexed
  // account, among its remembered most recent receivers).
  template <typename Fn>
  void ForEachRecentReceiver(int64_t t, int limit, Fn fn) const;
  // Whether "account" paid this account with event time in (t - 7d, t].
  bool ReceivedFrom(uint32_t account, int64_t t) const;
  // The distinct senders in (t - 7d, t] copied to out[0..cap) when t == frontier() and there are
  // at most "cap" of them; returns their number, or -1 (then use ReceivedFrom).
  int SendersIfFew(int64_t t, uint32_t* out, int cap) const;

  // Cache hints for a caller that knows which accounts it will touch next
  // (FeatureExtractor::ProcessBatch). They read only this object's own fields and change
  // nothing: the lines Apply will read and write (the 7-day window's events, the append
  // position, the counterparty index), and the lines ForEachRecentReceiver reads first.
  void PrefetchForApply() const;
  void PrefetchRecentReceivers() const;

  // Forgets the events after "limit_us" (an event time no event may have: the clock's bound,
  // see FeatureExtractor::BoundEventTimes) and moves the frontier back to the newest event
  // kept, rebuilding the windows' totals and the counterparty index. Returns how many events
  // were forgotten (0: nothing changed). The amount statistics keep what they learnt; the long
  // memory (history()), which keeps no events to drop, starts again when it saw a later time.
  size_t DropEventsAfter(int64_t limit_us);

  // The account's long memory (schema v2's features), folded in by the extractor.
  const AccountHistory& history() const { return history_; }
  AccountHistory& mutable_history() { return history_; }
  // The account's risk over its window, folded in from decisions (FeatureExtractor::RecordRisk).
  const AccountRisk& risk() const { return risk_; }
  AccountRisk& mutable_risk() { return risk_; }

  size_t num_events() const { return events_.size(); }
  bool indexed() const { return index_ != nullptr; }

  // Heap and inline bytes used by this state.
  size_t MemoryBytes() const;

  // Versioned binary encoding for checkpoints. Decode rebuilds the derived totals.
  void EncodeTo(std::string* out) const;
  static absl::StatusOr<AccountState> Decode(std::string_view bytes);

 private:
  // 16 bytes: hi = time offset (52 bits) | direction (1) | near threshold (1) | amount bits
  // 32..41 (10); lo = amount bits 0..31 | counterparty << 32.
  struct PackedEvent {
    uint64_t hi;
    uint64_t lo;
    int64_t time_us() const { return kMinEventTimeUs + static_cast<int64_t>(hi >> 12); }
    Direction direction() const { return static_cast<Direction>((hi >> 11) & 1); }
    bool near_threshold() const { return (hi >> 10) & 1; }
    int64_t amount_cents() const {
      return static_cast<int64_t>(((hi & 0x3ff) << 32) | (lo & 0xffffffffULL));
    }
    uint32_t counterparty() const { return static_cast<uint32_t>(lo >> 32); }
    static PackedEvent From(const AccountEvent& e);
  };
  struct RecentReceiver {
    int64_t time_us;  // latest payment to this receiver
    uint32_t account;
  };
  // Only for accounts with many events in their 7-day window (see the file comment).
  struct CounterpartyIndex {
    CounterpartyCounts counts;                     // 24h and 7d windows at the frontier
    std::vector<RecentReceiver> recent_receivers;  // oldest first, at most the cap
    int cap = 0;
  };

  void AddToWindow(int w, const PackedEvent& e);
  void RemoveFromWindow(int w, const PackedEvent& e);
  void AdjustCounterparty(int w, const PackedEvent& e, int delta);
  void RememberReceiver(const PackedEvent& e);
  void SlideTo(int64_t t);
  void DropExpired(int64_t lateness_us);
  void UpdateIndexMode(int recent_receivers);
  void Append(const PackedEvent& e);
  void SnapshotFromTotals(AccountSnapshot* s) const;
  void SnapshotByScan(int64_t t, AccountSnapshot* s) const;
  void RebuildDerived();

  // Sorted by time, ties in arrival order. Pooled on huge pages: a million accounts' events
  // are read at random (see HugePagePool).
  std::vector<PackedEvent, HugePageAllocator<PackedEvent>> events_;
  std::unique_ptr<CounterpartyIndex> index_;
  AccountHistory history_;
  AccountRisk risk_;
  int64_t frontier_ = INT64_MIN;
  int64_t last_dropped_ = INT64_MIN;  // time of the newest event dropped from events_
  // float: a feature, not money; 8 bytes fewer in every account's state.
  float ewma_mean_ = 0;
  float ewma_var_ = 0;
  // cursor_[w]: index of the first event inside window w at the frontier.
  std::array<uint32_t, kNumWindows> cursor_{};
  uint32_t n_amounts_ = 0;
  std::array<WindowTotals, kNumWindows> totals_{};
};

template <typename Fn>
void AccountState::ForEachRecentReceiver(int64_t t, int limit, Fn fn) const {
  const int64_t start = t - kWindowMicros[2];
  if (index_ != nullptr && t >= frontier_) {
    // Every remembered time is <= frontier <= t, so the window test is one comparison.
    const auto& r = index_->recent_receivers;
    for (size_t i = r.size(); i-- > 0 && limit > 0; --limit) {
      if (r[i].time_us <= start) break;
      fn(r[i].account);
    }
    return;
  }
  // Walk back from the newest stored event at or before t, reporting each receiver once (a small
  // fixed buffer remembers those seen).
  constexpr int kMaxLimit = 256;
  uint32_t seen[kMaxLimit];
  int n_seen = 0;
  limit = std::min(limit, kMaxLimit);
  if (index_ != nullptr && index_->cap > 0) limit = std::min(limit, index_->cap);
  for (size_t i = events_.size(); i-- > 0 && n_seen < limit;) {
    const PackedEvent& e = events_[i];
    const int64_t et = e.time_us();
    if (et > t) continue;
    if (et <= start) break;
    if (e.direction() != Direction::kOut) continue;
    const uint32_t cp = e.counterparty();
    bool dup = false;
    for (int k = 0; k < n_seen; ++k) dup |= seen[k] == cp;
    if (dup) continue;
    seen[n_seen++] = cp;
    fn(cp);
  }
}

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_STATE_H_
