// AccountState: the behavioural history of one account, enough to answer every per-account
// feature for a new payment in O(1) amortized time on the in-order path.
//
// Windows are event-time sliding windows: an event at time e is in the window of length W at
// time t when t - W < e <= t. The state keeps the account's recent events sorted by event time
// (ties in arrival order) plus, for the latest time applied (the frontier), running totals per
// window and per-counterparty counts. Three paths:
//  - in order (t >= frontier): windows slide forward, expired events leave the running totals;
//    the snapshot for t comes from the totals.
//  - late (t < frontier, within the lateness bound): the event is inserted in time order and
//    added to the totals of the windows it falls in at the frontier; the snapshot for t is
//    computed by scanning the stored events in (t - 7d, t].
//  - events older than frontier - 7d - lateness can no longer be in any window a future event
//    asks about, so they are dropped: memory is bounded by the account's 7-day activity.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_STATE_H_
#define VIGIL_FEATURES_ACCOUNT_STATE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/features/counterparty_counts.h"

namespace vigil {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerHour = 3600 * kMicrosPerSecond;

enum class Window : int { k1h = 0, k24h = 1, k7d = 2 };
inline constexpr int kNumWindows = 3;
inline constexpr std::array<int64_t, kNumWindows> kWindowMicros = {
    kMicrosPerHour, 24 * kMicrosPerHour, 7 * 24 * kMicrosPerHour};

enum class Direction : uint8_t { kIn = 0, kOut = 1 };

struct AccountEvent {
  int64_t time_us = 0;
  int64_t amount_micros = 0;  // reporting currency, >= 0
  uint32_t counterparty = 0;  // AccountIndex number
  Direction direction = Direction::kIn;
  bool near_threshold = false;
};

struct WindowTotals {
  int64_t in_sum_micros = 0;
  int64_t out_sum_micros = 0;
  uint32_t in_count = 0;
  uint32_t out_count = 0;
  uint32_t near_threshold_count = 0;
};

struct ApplyOptions {
  // The caller's lateness bound: no later event will be older than frontier - lateness_us.
  int64_t lateness_us = 0;
  // How many most recent distinct receivers to remember for the cycle check.
  int recent_receivers = 32;
};

// Per-account features as of one event time (after the event at that time was applied).
struct AccountSnapshot {
  std::array<WindowTotals, kNumWindows> windows;
  int64_t distinct_counterparties_24h = 0;
  int64_t distinct_counterparties_7d = 0;
  int64_t fan_in_7d = 0;   // distinct senders to this account
  int64_t fan_out_7d = 0;  // distinct receivers from this account
};

class AccountState {
 public:
  // Applies one event. REQUIRES: event.time_us >= frontier() - options.lateness_us (the caller
  // enforces the lateness bound). Fills *snapshot with the features as of event.time_us, this
  // event included.
  void Apply(const AccountEvent& event, const ApplyOptions& options, AccountSnapshot* snapshot);

  // The latest event time applied; INT64_MIN before the first event.
  int64_t frontier() const { return frontier_; }
  bool empty() const { return events_.empty() && n_amounts_ == 0; }

  // Latest event time <= t other than the event just applied, for dormancy; INT64_MIN if none.
  // Valid right after Apply(event) with t == event.time_us.
  int64_t previous_activity_us() const { return previous_activity_; }

  // EWMA of reporting amounts in arrival order (count-based, weight alpha for the newest).
  // UpdateAmountStats returns the z-score of "amount" against the statistics before the update
  // (NaN with fewer than 2 earlier amounts or zero deviation) and then folds it in.
  double UpdateAmountStats(double amount, double alpha);
  double ewma_mean() const { return ewma_mean_; }
  double ewma_std() const;
  uint32_t amount_count() const { return n_amounts_; }

  // Calls fn(counterparty) for the distinct receivers of this account's payments with event
  // time in (t - 7d, t], most recent first, at most "limit" of them and at most the
  // ApplyOptions::recent_receivers most recent ones. O(limit) when t >= frontier(); a scan of
  // the stored events for an earlier t.
  template <typename Fn>
  void ForEachRecentReceiver(int64_t t, int limit, Fn fn) const;
  // Whether "account" paid this account with event time in (t - 7d, t].
  bool ReceivedFrom(uint32_t account, int64_t t) const;
  // The distinct senders in (t - 7d, t] copied to out[0..cap) when t == frontier() and there are
  // at most "cap" of them; returns their number, or -1 (use ReceivedFrom instead).
  int SendersIfFew(int64_t t, uint32_t* out, int cap) const {
    return t == frontier_ ? counterparties_.CollectIfFew(CounterpartyCounts::kIn7d, out, cap) : -1;
  }

  const std::vector<AccountEvent>& events() const { return events_; }

  // Heap and inline bytes used by this state.
  size_t MemoryBytes() const;

  // Versioned binary encoding for checkpoints. Decode rebuilds the derived totals.
  void EncodeTo(std::string* out) const;
  static absl::StatusOr<AccountState> Decode(std::string_view bytes);

 private:
  struct RecentReceiver {
    int64_t time_us;  // latest payment to this receiver
    uint32_t account;
  };

  void AddToWindow(int w, const AccountEvent& e);
  void RemoveFromWindow(int w, const AccountEvent& e);
  void AdjustCounterparty(int w, const AccountEvent& e, int delta);
  void RememberReceiver(const AccountEvent& e, int cap);
  void SlideTo(int64_t t);
  void DropExpired(int64_t lateness_us);
  void SnapshotFromTotals(AccountSnapshot* s) const;
  void SnapshotByScan(int64_t t, AccountSnapshot* s) const;
  void RebuildDerived();

  std::vector<AccountEvent> events_;  // sorted by time_us, ties in arrival order
  int64_t frontier_ = INT64_MIN;
  int64_t previous_activity_ = INT64_MIN;
  int64_t last_dropped_ = INT64_MIN;  // time of the newest event dropped from events_
  // cursor_[w]: index of the first event inside window w at the frontier.
  std::array<uint32_t, kNumWindows> cursor_{};
  std::array<WindowTotals, kNumWindows> totals_{};
  CounterpartyCounts counterparties_;  // 24h and 7d windows at the frontier
  // Most recent distinct receivers, oldest first; at most ApplyOptions::recent_receivers.
  std::vector<RecentReceiver> recent_receivers_;
  int recent_receivers_cap_ = 0;
  double ewma_mean_ = 0;
  double ewma_var_ = 0;
  uint32_t n_amounts_ = 0;
};

template <typename Fn>
void AccountState::ForEachRecentReceiver(int64_t t, int limit, Fn fn) const {
  const int64_t start = t - kWindowMicros[2];
  if (t >= frontier_) {
    // Every remembered time is <= frontier <= t, so the window test is one comparison.
    for (size_t i = recent_receivers_.size(); i-- > 0 && limit > 0; --limit) {
      if (recent_receivers_[i].time_us <= start) break;
      fn(recent_receivers_[i].account);
    }
    return;
  }
  // Late event: walk back from the newest stored event at or before t, reporting each receiver
  // once (a small fixed buffer remembers those seen).
  constexpr int kMaxLimit = 256;
  uint32_t seen[kMaxLimit];
  int n_seen = 0;
  limit = std::min({limit, kMaxLimit, recent_receivers_cap_ > 0 ? recent_receivers_cap_ : kMaxLimit});
  for (size_t i = events_.size(); i-- > 0 && n_seen < limit;) {
    const AccountEvent& e = events_[i];
    if (e.time_us > t) continue;
    if (e.time_us <= start) break;
    if (e.direction != Direction::kOut) continue;
    bool dup = false;
    for (int k = 0; k < n_seen; ++k) dup |= seen[k] == e.counterparty;
    if (dup) continue;
    seen[n_seen++] = e.counterparty;
    fn(e.counterparty);
  }
}

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_STATE_H_
