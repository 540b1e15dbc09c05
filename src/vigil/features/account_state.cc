#include "vigil/features/account_state.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/features/internal/fixed_encoding.h"

namespace vigil {
namespace {

constexpr int k24h = static_cast<int>(Window::k24h);
constexpr int k7d = static_cast<int>(Window::k7d);
constexpr uint8_t kEncodingVersion = 4;  // 2: float EWMA statistics; 3: the long memory;
                                          // 4: the account risk

using features_internal::GetFixed;
using features_internal::PutFixed;

// Number of distinct values in v[0..n); reorders v.
int64_t CountDistinct(uint32_t* v, int n) {
  std::sort(v, v + n);
  return std::unique(v, v + n) - v;
}

}  // namespace

AccountState::PackedEvent AccountState::PackedEvent::From(const AccountEvent& e) {
  VIGIL_DCHECK(e.time_us >= kMinEventTimeUs && e.time_us <= kMaxEventTimeUs);
  VIGIL_DCHECK(e.amount_cents >= 0 && e.amount_cents <= kMaxEventAmountCents);
  const auto amount = static_cast<uint64_t>(e.amount_cents);
  PackedEvent p;
  p.hi = static_cast<uint64_t>(e.time_us - kMinEventTimeUs) << 12 |
         static_cast<uint64_t>(e.direction) << 11 | static_cast<uint64_t>(e.near_threshold) << 10 |
         (amount >> 32);
  p.lo = (amount & 0xffffffffULL) | static_cast<uint64_t>(e.counterparty) << 32;
  return p;
}

void AccountState::AddToWindow(int w, const PackedEvent& e) {
  WindowTotals& t = totals_[w];
  if (e.direction() == Direction::kIn) {
    ++t.in_count;
    t.in_sum_cents += e.amount_cents();
  } else {
    ++t.out_count;
    t.out_sum_cents += e.amount_cents();
  }
  t.near_threshold_count += e.near_threshold() ? 1 : 0;
  if (w != 0 && index_ != nullptr) AdjustCounterparty(w, e, +1);
}

void AccountState::RemoveFromWindow(int w, const PackedEvent& e) {
  WindowTotals& t = totals_[w];
  if (e.direction() == Direction::kIn) {
    --t.in_count;
    t.in_sum_cents -= e.amount_cents();
  } else {
    --t.out_count;
    t.out_sum_cents -= e.amount_cents();
  }
  t.near_threshold_count -= e.near_threshold() ? 1 : 0;
  if (w != 0 && index_ != nullptr) AdjustCounterparty(w, e, -1);
}

void AccountState::AdjustCounterparty(int w, const PackedEvent& e, int delta) {
  const bool in = e.direction() == Direction::kIn;
  const auto slot = w == k24h ? (in ? CounterpartyCounts::kIn24h : CounterpartyCounts::kOut24h)
                              : (in ? CounterpartyCounts::kIn7d : CounterpartyCounts::kOut7d);
  index_->counts.Add(e.counterparty(), slot, delta);
}

// Keeps the index's recent receivers sorted by time (oldest first), one entry per receiver with
// its latest payment time, at most index_->cap entries (the oldest is forgotten).
void AccountState::RememberReceiver(const PackedEvent& e) {
  auto& r = index_->recent_receivers;
  if (index_->cap <= 0) return;
  int64_t time = e.time_us();
  const uint32_t account = e.counterparty();
  for (size_t i = r.size(); i-- > 0;) {
    if (r[i].account == account) {
      time = std::max(time, r[i].time_us);
      r.erase(r.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
  }
  auto pos = r.end();
  while (pos != r.begin() && std::prev(pos)->time_us > time) --pos;
  r.insert(pos, RecentReceiver{time, account});
  if (r.size() > static_cast<size_t>(index_->cap)) r.erase(r.begin());
}

// Builds the counterparty index when the 7-day window grows past kIndexAbove events and drops it
// when it falls below kIndexBelow (hysteresis, so an account at the boundary does not rebuild it
// on every event). Both representations give the same answers.
void AccountState::UpdateIndexMode(int recent_receivers) {
  const size_t in_window = events_.size() - cursor_[k7d];
  if (index_ == nullptr && in_window > kIndexAbove) {
    index_ = std::make_unique<CounterpartyIndex>();
    index_->cap = recent_receivers;
    index_->recent_receivers.reserve(static_cast<size_t>(std::max(recent_receivers, 0)) + 1);
    for (int w = k24h; w <= k7d; ++w) {
      for (size_t i = cursor_[w]; i < events_.size(); ++i) AdjustCounterparty(w, events_[i], +1);
    }
    for (const PackedEvent& e : events_) {
      if (e.direction() == Direction::kOut) RememberReceiver(e);
    }
  } else if (index_ != nullptr && in_window < kIndexBelow) {
    index_.reset();
  }
}

void AccountState::SlideTo(int64_t t) {
  for (int w = 0; w < kNumWindows; ++w) {
    const int64_t start = t - kWindowMicros[w];
    uint32_t& c = cursor_[w];
    while (c < events_.size() && events_[c].time_us() <= start) RemoveFromWindow(w, events_[c++]);
  }
  frontier_ = t;
}

void AccountState::Append(const PackedEvent& e) {
  // Grow by two events while small, then by a quarter: most accounts hold a handful of events,
  // and doubling would leave a quarter to a half of all event memory unused.
  if (events_.size() == events_.capacity()) {
    const size_t n = events_.size();
    events_.reserve(n < 8 ? n + 2 : n + n / 4 + 2);
  }
  events_.push_back(e);
}

void AccountState::DropExpired(int64_t lateness_us) {
  // Events at or before frontier - 7d - lateness are outside every window a future event (which
  // is at least frontier - lateness) can ask about.
  const int64_t keep_after = frontier_ - kWindowMicros[k7d] - lateness_us;
  size_t n = 0;
  while (n < events_.size() && events_[n].time_us() <= keep_after) ++n;
  // Erase in bulk only when a good share of the vector is dead, so the amortized cost stays O(1).
  if (n == 0 || (n < 16 && n * 4 < events_.size())) return;
  last_dropped_ = events_[n - 1].time_us();
  events_.erase(events_.begin(), events_.begin() + static_cast<ptrdiff_t>(n));
  for (uint32_t& c : cursor_) c -= static_cast<uint32_t>(n);
  if (events_.capacity() > events_.size() + 4 + events_.size() / 4) events_.shrink_to_fit();
}

void AccountState::Apply(const AccountEvent& event, const ApplyOptions& options,
                         AccountSnapshot* snapshot) {
  const PackedEvent packed = PackedEvent::From(event);
  if (event.time_us >= frontier_) {
    const int64_t previous = frontier_;
    SlideTo(event.time_us);
    Append(packed);
    for (int w = 0; w < kNumWindows; ++w) AddToWindow(w, packed);
    if (index_ != nullptr && event.direction == Direction::kOut) RememberReceiver(packed);
    DropExpired(options.lateness_us);
    UpdateIndexMode(options.recent_receivers);
    SnapshotFromTotals(snapshot);
    snapshot->previous_activity_us = previous;
    return;
  }
  // Late event: insert after every event at or before its time (ties keep arrival order).
  auto pos = std::upper_bound(events_.begin(), events_.end(), event.time_us,
                              [](int64_t t, const PackedEvent& e) { return t < e.time_us(); });
  const int64_t previous = pos == events_.begin() ? last_dropped_ : std::prev(pos)->time_us();
  const auto index = static_cast<uint32_t>(pos - events_.begin());
  events_.insert(pos, packed);
  for (int w = 0; w < kNumWindows; ++w) {
    if (event.time_us > frontier_ - kWindowMicros[w]) {
      VIGIL_DCHECK(index >= cursor_[w]);
      AddToWindow(w, packed);
    } else {
      VIGIL_DCHECK(index <= cursor_[w]);
      ++cursor_[w];  // inserted before the window's first event
    }
  }
  if (index_ != nullptr && event.direction == Direction::kOut) RememberReceiver(packed);
  UpdateIndexMode(options.recent_receivers);
  SnapshotByScan(event.time_us, snapshot);
  snapshot->previous_activity_us = previous;
}

void AccountState::SnapshotFromTotals(AccountSnapshot* s) const {
  s->windows = totals_;
  if (index_ != nullptr) {
    const CounterpartyCounts& c = index_->counts;
    s->distinct_counterparties_24h = c.distinct_24h();
    s->distinct_counterparties_7d = c.distinct_7d();
    s->fan_in_7d = c.fan_in_7d();
    s->fan_out_7d = c.fan_out_7d();
    return;
  }
  // At most kIndexAbove events in the 7d window (24h is a suffix of it). One sort of
  // (counterparty, direction, in 24h) keys, then one pass over the groups of equal counterparty.
  uint64_t keys[kIndexAbove + 1];
  int n = 0;
  for (size_t i = cursor_[k7d]; i < events_.size(); ++i) {
    const PackedEvent& e = events_[i];
    keys[n++] = uint64_t{e.counterparty()} << 2 | uint64_t{e.direction() == Direction::kIn} << 1 |
                uint64_t{i >= cursor_[k24h]};
  }
  for (int i = 1; i < n; ++i) {  // insertion sort: n is tiny
    const uint64_t k = keys[i];
    int j = i;
    for (; j > 0 && keys[j - 1] > k; --j) keys[j] = keys[j - 1];
    keys[j] = k;
  }
  int64_t any24 = 0, any7 = 0, in7 = 0, out7 = 0;
  for (int i = 0; i < n;) {
    const uint64_t cp = keys[i] >> 2;
    bool seen24 = false, seen_in = false, seen_out = false;
    for (; i < n && keys[i] >> 2 == cp; ++i) {
      seen24 |= (keys[i] & 1) != 0;
      ((keys[i] & 2) != 0 ? seen_in : seen_out) = true;
    }
    ++any7;
    any24 += seen24;
    in7 += seen_in;
    out7 += seen_out;
  }
  s->distinct_counterparties_24h = any24;
  s->distinct_counterparties_7d = any7;
  s->fan_in_7d = in7;
  s->fan_out_7d = out7;
}

void AccountState::SnapshotByScan(int64_t t, AccountSnapshot* s) const {
  *s = AccountSnapshot{};
  std::vector<uint32_t> any24, any7, in7, out7;
  const int64_t start_7d = t - kWindowMicros[k7d];
  for (const PackedEvent& e : events_) {
    const int64_t et = e.time_us();
    if (et > t) break;
    if (et <= start_7d) continue;
    for (int w = 0; w < kNumWindows; ++w) {
      if (et <= t - kWindowMicros[w]) continue;
      WindowTotals& wt = s->windows[w];
      if (e.direction() == Direction::kIn) {
        ++wt.in_count;
        wt.in_sum_cents += e.amount_cents();
      } else {
        ++wt.out_count;
        wt.out_sum_cents += e.amount_cents();
      }
      wt.near_threshold_count += e.near_threshold() ? 1 : 0;
    }
    if (et > t - kWindowMicros[k24h]) any24.push_back(e.counterparty());
    any7.push_back(e.counterparty());
    (e.direction() == Direction::kIn ? in7 : out7).push_back(e.counterparty());
  }
  const auto distinct = [](std::vector<uint32_t>& v) {
    return CountDistinct(v.data(), static_cast<int>(v.size()));
  };
  s->distinct_counterparties_24h = distinct(any24);
  s->distinct_counterparties_7d = distinct(any7);
  s->fan_in_7d = distinct(in7);
  s->fan_out_7d = distinct(out7);
}

double AccountState::UpdateAmountStats(double amount, double alpha) {
  double z = std::numeric_limits<double>::quiet_NaN();
  double mean = ewma_mean_;
  double var = ewma_var_;
  if (n_amounts_ >= 2) {
    const double sd = ewma_std();
    if (sd > 0) z = (amount - mean) / sd;
  }
  if (n_amounts_ == 0) {
    mean = amount;
    var = 0;
  } else {
    // West's incremental exponentially weighted mean and variance.
    const double diff = amount - mean;
    const double incr = alpha * diff;
    mean += incr;
    var = (1 - alpha) * (var + diff * incr);
  }
  ewma_mean_ = static_cast<float>(mean);
  ewma_var_ = static_cast<float>(var);
  if (n_amounts_ < std::numeric_limits<uint32_t>::max()) ++n_amounts_;
  return z;
}

double AccountState::ewma_std() const {
  return std::sqrt(std::max(0.0, static_cast<double>(ewma_var_)));
}

bool AccountState::ReceivedFrom(uint32_t account, int64_t t) const {
  if (index_ != nullptr && t >= frontier_) {
    // Stored events in (t - 7d, t] are a subset of those in (frontier - 7d, frontier]: no count
    // there means none here, and at the frontier itself the count is the answer.
    const bool any = index_->counts.Has(account, CounterpartyCounts::kIn7d);
    if (!any || t == frontier_) return any;
  }
  const int64_t start = t - kWindowMicros[k7d];
  for (size_t i = events_.size(); i-- > 0;) {
    const PackedEvent& e = events_[i];
    const int64_t et = e.time_us();
    if (et > t) continue;
    if (et <= start) break;
    if (e.direction() == Direction::kIn && e.counterparty() == account) return true;
  }
  return false;
}

int AccountState::SendersIfFew(int64_t t, uint32_t* out, int cap) const {
  if (t != frontier_) return -1;
  if (index_ != nullptr) return index_->counts.CollectIfFew(CounterpartyCounts::kIn7d, out, cap);
  int n = 0;
  for (size_t i = cursor_[k7d]; i < events_.size(); ++i) {
    const PackedEvent& e = events_[i];
    if (e.direction() != Direction::kIn) continue;
    const uint32_t cp = e.counterparty();
    if (std::find(out, out + n, cp) != out + n) continue;
    if (n == cap) return -1;
    out[n++] = cp;
  }
  return n;
}

void AccountState::PrefetchForApply() const {
  const size_t n = events_.size();
  if (index_ != nullptr) __builtin_prefetch(index_.get(), 1);
  history_.PrefetchPairs();  // the long-memory columns scan them, Observe writes one
  if (n == 0) return;
  const char* data = reinterpret_cast<const char*>(events_.data());
  constexpr size_t kLine = 64;
  // DropExpired reads the oldest event; SlideTo each window's first; the snapshot of an account
  // without a counterparty index scans the 7-day window (at most kIndexAbove + 1 events, a few
  // lines); Append writes after the newest.
  __builtin_prefetch(data);
  const size_t first = index_ != nullptr ? n - 1 : cursor_[k7d];
  for (size_t off = first * sizeof(PackedEvent); off < n * sizeof(PackedEvent); off += kLine) {
    __builtin_prefetch(data + off, 1);
  }
  if (index_ != nullptr) {
    for (int w = 0; w < kNumWindows; ++w) {
      if (cursor_[w] < n) __builtin_prefetch(data + cursor_[w] * sizeof(PackedEvent));
    }
  }
  if (n < events_.capacity()) __builtin_prefetch(data + n * sizeof(PackedEvent), 1);
}

void AccountState::PrefetchRecentReceivers() const {
  if (index_ != nullptr) {
    __builtin_prefetch(index_.get());
    return;
  }
  const size_t n = events_.size();
  if (n == 0) return;
  // The newest events, walked backwards: the last two lines hold the last 4 to 8 of them.
  const PackedEvent* last = events_.data() + n - 1;
  __builtin_prefetch(last);
  if (n > 4) __builtin_prefetch(last - 4);
}

size_t AccountState::MemoryBytes() const {
  size_t bytes = sizeof(*this) + events_.capacity() * sizeof(PackedEvent) + history_.MemoryBytes();
  if (index_ != nullptr) {
    bytes += sizeof(CounterpartyIndex) + index_->counts.MemoryBytes() +
             index_->recent_receivers.capacity() * sizeof(RecentReceiver);
  }
  return bytes;
}

void AccountState::EncodeTo(std::string* out) const {
  PutFixed(out, kEncodingVersion);
  PutFixed(out, frontier_);
  PutFixed(out, last_dropped_);
  PutFixed(out, ewma_mean_);
  PutFixed(out, ewma_var_);
  PutFixed(out, n_amounts_);
  PutFixed(out, static_cast<int32_t>(index_ != nullptr ? index_->cap : 0));
  PutFixed(out, static_cast<uint32_t>(events_.size()));
  for (const PackedEvent& e : events_) {
    PutFixed(out, e.hi);
    PutFixed(out, e.lo);
  }
  history_.EncodeTo(out);
  risk_.EncodeTo(out);
}

absl::StatusOr<AccountState> AccountState::Decode(std::string_view in) {
  AccountState s;
  uint8_t version = 0;
  int32_t cap = 0;
  uint32_t n = 0;
  // Version 2 (before the long memory) decodes with an empty one, 3 (before the account risk)
  // with no risk.
  if (!GetFixed(&in, &version) || version < 2 || version > kEncodingVersion) {
    return absl::DataLossError(
        absl::StrCat("account state: unsupported encoding version ", static_cast<int>(version)));
  }
  if (!GetFixed(&in, &s.frontier_) || !GetFixed(&in, &s.last_dropped_) || !GetFixed(&in, &s.ewma_mean_) ||
      !GetFixed(&in, &s.ewma_var_) || !GetFixed(&in, &s.n_amounts_) || !GetFixed(&in, &cap) || !GetFixed(&in, &n)) {
    return absl::DataLossError("account state: truncated header");
  }
  if (in.size() < static_cast<size_t>(n) * sizeof(PackedEvent) ||
      (version == 2 && in.size() != static_cast<size_t>(n) * sizeof(PackedEvent))) {
    return absl::DataLossError(
        absl::StrCat("account state: expected ", n, " events, got ", in.size(), " bytes"));
  }
  s.events_.resize(n);
  int64_t previous = INT64_MIN;
  for (PackedEvent& e : s.events_) {
    GetFixed(&in, &e.hi);
    GetFixed(&in, &e.lo);
    if (e.time_us() > s.frontier_ || e.time_us() < previous) {
      return absl::DataLossError("account state: events out of order or after the frontier");
    }
    previous = e.time_us();
  }
  if (version >= 3 && !s.history_.DecodeFrom(&in)) {
    return absl::DataLossError("account state: malformed long memory");
  }
  if (version >= 4 && !s.risk_.DecodeFrom(&in)) {
    return absl::DataLossError("account state: malformed account risk");
  }
  if (!in.empty()) {
    return absl::DataLossError(
        absl::StrCat("account state: ", in.size(), " bytes after the end of the state"));
  }
  s.RebuildDerived();
  s.UpdateIndexMode(cap > 0 ? cap : ApplyOptions{}.recent_receivers);
  return s;
}

size_t AccountState::DropEventsAfter(int64_t limit_us) {
  if (history_.newest() > HistorySeconds(limit_us)) history_.Clear();
  if (frontier_ <= limit_us) return 0;
  auto keep_end = std::upper_bound(events_.begin(), events_.end(), limit_us,
                                   [](int64_t t, const PackedEvent& e) { return t < e.time_us(); });
  const auto dropped = static_cast<size_t>(events_.end() - keep_end);
  events_.erase(keep_end, events_.end());
  if (last_dropped_ > limit_us) last_dropped_ = INT64_MIN;
  frontier_ = events_.empty() ? last_dropped_ : std::max(events_.back().time_us(), last_dropped_);
  const int cap = index_ != nullptr ? index_->cap : ApplyOptions{}.recent_receivers;
  if (frontier_ == INT64_MIN) {  // nothing left: a new account's state, its amounts kept
    totals_ = {};
    cursor_ = {};
    index_.reset();
    return dropped;
  }
  RebuildDerived();
  UpdateIndexMode(cap);
  return dropped;
}

void AccountState::RebuildDerived() {
  totals_ = {};
  index_.reset();
  for (int w = 0; w < kNumWindows; ++w) {
    const int64_t start = frontier_ - kWindowMicros[w];
    uint32_t c = 0;
    while (c < events_.size() && events_[c].time_us() <= start) ++c;
    cursor_[w] = c;
    for (size_t i = c; i < events_.size(); ++i) AddToWindow(w, events_[i]);
  }
}

}  // namespace vigil
