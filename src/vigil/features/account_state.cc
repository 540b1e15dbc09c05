#include "vigil/features/account_state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil {
namespace {

constexpr int k24h = static_cast<int>(Window::k24h);
constexpr int k7d = static_cast<int>(Window::k7d);
constexpr uint8_t kEncodingVersion = 1;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
bool Get(std::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace

void AccountState::AddToWindow(int w, const AccountEvent& e) {
  WindowTotals& t = totals_[w];
  if (e.direction == Direction::kIn) {
    ++t.in_count;
    t.in_sum_micros += e.amount_micros;
  } else {
    ++t.out_count;
    t.out_sum_micros += e.amount_micros;
  }
  t.near_threshold_count += e.near_threshold ? 1 : 0;
  if (w != 0) AdjustCounterparty(w, e, +1);
}

void AccountState::RemoveFromWindow(int w, const AccountEvent& e) {
  WindowTotals& t = totals_[w];
  if (e.direction == Direction::kIn) {
    --t.in_count;
    t.in_sum_micros -= e.amount_micros;
  } else {
    --t.out_count;
    t.out_sum_micros -= e.amount_micros;
  }
  t.near_threshold_count -= e.near_threshold ? 1 : 0;
  if (w != 0) AdjustCounterparty(w, e, -1);
}

void AccountState::AdjustCounterparty(int w, const AccountEvent& e, int delta) {
  const bool in = e.direction == Direction::kIn;
  const auto slot = w == k24h ? (in ? CounterpartyCounts::kIn24h : CounterpartyCounts::kOut24h)
                              : (in ? CounterpartyCounts::kIn7d : CounterpartyCounts::kOut7d);
  counterparties_.Add(e.counterparty, slot, delta);
}

// Keeps recent_receivers_ sorted by time (oldest first) with one entry per receiver holding its
// latest payment time, and at most "cap" entries (the oldest is forgotten).
void AccountState::RememberReceiver(const AccountEvent& e, int cap) {
  recent_receivers_cap_ = cap;
  if (cap <= 0) return;
  int64_t time = e.time_us;
  for (size_t i = recent_receivers_.size(); i-- > 0;) {
    if (recent_receivers_[i].account == e.counterparty) {
      time = std::max(time, recent_receivers_[i].time_us);
      recent_receivers_.erase(recent_receivers_.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
  }
  auto pos = recent_receivers_.end();
  while (pos != recent_receivers_.begin() && std::prev(pos)->time_us > time) --pos;
  recent_receivers_.insert(pos, RecentReceiver{time, e.counterparty});
  if (recent_receivers_.size() > static_cast<size_t>(cap)) {
    recent_receivers_.erase(recent_receivers_.begin());
  }
}

void AccountState::SlideTo(int64_t t) {
  for (int w = 0; w < kNumWindows; ++w) {
    const int64_t start = t - kWindowMicros[w];
    uint32_t& c = cursor_[w];
    while (c < events_.size() && events_[c].time_us <= start) RemoveFromWindow(w, events_[c++]);
  }
  frontier_ = t;
}

void AccountState::DropExpired(int64_t lateness_us) {
  // Events at or before frontier - 7d - lateness are outside every window a future event (which
  // is at least frontier - lateness) can ask about.
  const int64_t keep_after = frontier_ - kWindowMicros[k7d] - lateness_us;
  size_t n = 0;
  while (n < events_.size() && events_[n].time_us <= keep_after) ++n;
  // Erase in bulk only when a good share of the vector is dead, so the amortized cost stays O(1).
  if (n == 0 || (n < 16 && n * 4 < events_.size())) return;
  last_dropped_ = events_[n - 1].time_us;
  events_.erase(events_.begin(), events_.begin() + static_cast<ptrdiff_t>(n));
  for (uint32_t& c : cursor_) c -= static_cast<uint32_t>(n);
  if (events_.capacity() > 32 && events_.size() * 4 < events_.capacity()) events_.shrink_to_fit();
}

void AccountState::Apply(const AccountEvent& event, const ApplyOptions& options,
                         AccountSnapshot* snapshot) {
  if (event.direction == Direction::kOut) RememberReceiver(event, options.recent_receivers);
  if (event.time_us >= frontier_) {
    previous_activity_ = frontier_;
    SlideTo(event.time_us);
    events_.push_back(event);
    for (int w = 0; w < kNumWindows; ++w) AddToWindow(w, event);
    DropExpired(options.lateness_us);
    SnapshotFromTotals(snapshot);
    return;
  }
  // Late event: insert after every event at or before its time (ties keep arrival order).
  auto pos = std::upper_bound(events_.begin(), events_.end(), event.time_us,
                              [](int64_t t, const AccountEvent& e) { return t < e.time_us; });
  previous_activity_ = pos == events_.begin() ? last_dropped_ : std::prev(pos)->time_us;
  const auto index = static_cast<uint32_t>(pos - events_.begin());
  events_.insert(pos, event);
  for (int w = 0; w < kNumWindows; ++w) {
    if (event.time_us > frontier_ - kWindowMicros[w]) {
      VIGIL_DCHECK(index >= cursor_[w]);
      AddToWindow(w, event);
    } else {
      VIGIL_DCHECK(index <= cursor_[w]);
      ++cursor_[w];  // inserted before the window's first event
    }
  }
  SnapshotByScan(event.time_us, snapshot);
}

void AccountState::SnapshotFromTotals(AccountSnapshot* s) const {
  s->windows = totals_;
  s->distinct_counterparties_24h = counterparties_.distinct_24h();
  s->distinct_counterparties_7d = counterparties_.distinct_7d();
  s->fan_in_7d = counterparties_.fan_in_7d();
  s->fan_out_7d = counterparties_.fan_out_7d();
}

void AccountState::SnapshotByScan(int64_t t, AccountSnapshot* s) const {
  *s = AccountSnapshot{};
  absl::flat_hash_set<uint32_t> any_24h, any_7d, in_7d, out_7d;
  const int64_t start_7d = t - kWindowMicros[k7d];
  for (const AccountEvent& e : events_) {
    if (e.time_us > t) break;
    if (e.time_us <= start_7d) continue;
    for (int w = 0; w < kNumWindows; ++w) {
      if (e.time_us <= t - kWindowMicros[w]) continue;
      WindowTotals& wt = s->windows[w];
      if (e.direction == Direction::kIn) {
        ++wt.in_count;
        wt.in_sum_micros += e.amount_micros;
      } else {
        ++wt.out_count;
        wt.out_sum_micros += e.amount_micros;
      }
      wt.near_threshold_count += e.near_threshold ? 1 : 0;
    }
    if (e.time_us > t - kWindowMicros[k24h]) any_24h.insert(e.counterparty);
    any_7d.insert(e.counterparty);
    (e.direction == Direction::kIn ? in_7d : out_7d).insert(e.counterparty);
  }
  s->distinct_counterparties_24h = static_cast<int64_t>(any_24h.size());
  s->distinct_counterparties_7d = static_cast<int64_t>(any_7d.size());
  s->fan_in_7d = static_cast<int64_t>(in_7d.size());
  s->fan_out_7d = static_cast<int64_t>(out_7d.size());
}

double AccountState::UpdateAmountStats(double amount, double alpha) {
  double z = std::numeric_limits<double>::quiet_NaN();
  if (n_amounts_ >= 2) {
    const double sd = ewma_std();
    if (sd > 0) z = (amount - ewma_mean_) / sd;
  }
  if (n_amounts_ == 0) {
    ewma_mean_ = amount;
    ewma_var_ = 0;
  } else {
    // West's incremental exponentially weighted mean and variance.
    const double diff = amount - ewma_mean_;
    const double incr = alpha * diff;
    ewma_mean_ += incr;
    ewma_var_ = (1 - alpha) * (ewma_var_ + diff * incr);
  }
  if (n_amounts_ < std::numeric_limits<uint32_t>::max()) ++n_amounts_;
  return z;
}

double AccountState::ewma_std() const { return std::sqrt(std::max(0.0, ewma_var_)); }

bool AccountState::ReceivedFrom(uint32_t account, int64_t t) const {
  if (t == frontier_) return counterparties_.Has(account, CounterpartyCounts::kIn7d);
  const int64_t start = t - kWindowMicros[k7d];
  for (size_t i = events_.size(); i-- > 0;) {
    const AccountEvent& e = events_[i];
    if (e.time_us > t) continue;
    if (e.time_us <= start) break;
    if (e.direction == Direction::kIn && e.counterparty == account) return true;
  }
  return false;
}

size_t AccountState::MemoryBytes() const {
  return sizeof(*this) + events_.capacity() * sizeof(AccountEvent) +
         counterparties_.MemoryBytes() + recent_receivers_.capacity() * sizeof(RecentReceiver);
}

void AccountState::EncodeTo(std::string* out) const {
  Put(out, kEncodingVersion);
  Put(out, frontier_);
  Put(out, last_dropped_);
  Put(out, ewma_mean_);
  Put(out, ewma_var_);
  Put(out, n_amounts_);
  Put(out, static_cast<int32_t>(recent_receivers_cap_));
  Put(out, static_cast<uint32_t>(events_.size()));
  for (const AccountEvent& e : events_) {
    Put(out, e.time_us);
    Put(out, e.amount_micros);
    Put(out, e.counterparty);
    Put(out, static_cast<uint8_t>(static_cast<uint8_t>(e.direction) | (e.near_threshold << 1)));
  }
}

absl::StatusOr<AccountState> AccountState::Decode(std::string_view in) {
  AccountState s;
  uint8_t version = 0;
  uint32_t n = 0;
  if (!Get(&in, &version) || version != kEncodingVersion) {
    return absl::DataLossError(absl::StrCat("account state: unsupported encoding version ",
                                            static_cast<int>(version)));
  }
  if (!Get(&in, &s.frontier_) || !Get(&in, &s.last_dropped_) || !Get(&in, &s.ewma_mean_) || !Get(&in, &s.ewma_var_) ||
      !Get(&in, &s.n_amounts_) || !Get(&in, &s.recent_receivers_cap_) || !Get(&in, &n)) {
    return absl::DataLossError("account state: truncated header");
  }
  constexpr size_t kEventBytes = 8 + 8 + 4 + 1;
  if (in.size() != static_cast<size_t>(n) * kEventBytes) {
    return absl::DataLossError(
        absl::StrCat("account state: expected ", n, " events, got ", in.size(), " bytes"));
  }
  s.events_.resize(n);
  for (AccountEvent& e : s.events_) {
    uint8_t flags = 0;
    Get(&in, &e.time_us);
    Get(&in, &e.amount_micros);
    Get(&in, &e.counterparty);
    Get(&in, &flags);
    e.direction = static_cast<Direction>(flags & 1);
    e.near_threshold = (flags >> 1) & 1;
    if (e.time_us > s.frontier_) return absl::DataLossError("account state: event after frontier");
  }
  s.RebuildDerived();
  return s;
}

void AccountState::RebuildDerived() {
  totals_ = {};
  counterparties_.Clear();
  recent_receivers_.clear();
  for (const AccountEvent& e : events_) {
    if (e.direction == Direction::kOut) RememberReceiver(e, recent_receivers_cap_);
  }
  for (int w = 0; w < kNumWindows; ++w) {
    const int64_t start = frontier_ - kWindowMicros[w];
    uint32_t c = 0;
    while (c < events_.size() && events_[c].time_us <= start) ++c;
    cursor_[w] = c;
    for (size_t i = c; i < events_.size(); ++i) AddToWindow(w, events_[i]);
  }
}

}  // namespace vigil
