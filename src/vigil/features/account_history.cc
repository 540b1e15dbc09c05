#include "vigil/features/account_history.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "vigil/features/account_state.h"

namespace vigil {
namespace {

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

uint16_t Increment(uint16_t n) { return n == UINT16_MAX ? n : static_cast<uint16_t>(n + 1); }

// The HistorySeconds before which a summary is out of a window of "window_us" ending at t:
// summaries with a time <= the returned value are outside (t - window, t].
uint32_t WindowStart(int64_t t, int64_t window_us) {
  const int64_t start = t - window_us;
  return start < kMinEventTimeUs ? 0 : HistorySeconds(start);
}

}  // namespace

uint32_t HistorySeconds(int64_t time_us) {
  const int64_t s = (time_us - kMinEventTimeUs) / kMicrosPerSecond + 1;
  if (s < 1) return 1;
  return s >= int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<uint32_t>(s);
}

void AccountHistory::Observe(uint32_t counterparty, bool out, int64_t time_us, double amount,
                             int max_pairs) {
  const uint32_t s = HistorySeconds(time_us);
  newest_ = std::max(newest_, s);
  // The summaries are in the order of their last update, most recent first: the expired ones
  // (last activity 90 days or more before the newest time) are at the back, and so is the one
  // a full history forgets.
  constexpr uint32_t kRetentionSeconds = kHistoryRetentionUs / kMicrosPerSecond;
  const uint32_t horizon = newest_ > kRetentionSeconds ? newest_ - kRetentionSeconds : 0;
  while (!pairs_.empty() && pairs_.back().last_active() <= horizon) pairs_.pop_back();
  size_t i = 0;
  while (i < pairs_.size() && pairs_[i].counterparty != counterparty) ++i;
  if (i < pairs_.size()) {
    // A late event may leave an expired summary short of the back: it starts again.
    if (pairs_[i].last_active() <= horizon) pairs_[i] = PairSummary{counterparty};
    std::rotate(pairs_.begin(), pairs_.begin() + static_cast<ptrdiff_t>(i),
                pairs_.begin() + static_cast<ptrdiff_t>(i) + 1);
  } else {
    if (pairs_.size() >= static_cast<size_t>(std::max(max_pairs, 1))) pairs_.pop_back();
    if (pairs_.size() == pairs_.capacity()) {
      // Grow by two while small, then by a quarter: a few bytes wasted per account, not half.
      const size_t n = pairs_.size();
      pairs_.reserve(n < 8 ? n + 2 : n + n / 4 + 2);
    }
    pairs_.insert(pairs_.begin(), PairSummary{counterparty});
  }
  PairSummary* mine = &pairs_.front();
  if (out) {
    if (mine->first_out == 0 || s < mine->first_out) mine->first_out = s;
    mine->last_out = std::max(mine->last_out, s);
    mine->out_count = Increment(mine->out_count);
  } else {
    if (mine->first_in == 0 || s < mine->first_in) mine->first_in = s;
    mine->last_in = std::max(mine->last_in, s);
    mine->in_count = Increment(mine->in_count);
  }
  const auto a = static_cast<float>(amount);
  if (out) {
    out_amounts_[next_out_] = a;
    next_out_ = static_cast<uint8_t>((next_out_ + 1) % kAmountRing);
    if (n_out_ < kAmountRing) ++n_out_;
  } else {
    in_amounts_[next_in_] = a;
    next_in_ = static_cast<uint8_t>((next_in_ + 1) % kAmountRing);
    if (n_in_ < kAmountRing) ++n_in_;
    last_in_seconds_ = std::max(last_in_seconds_, s);
  }
}

const PairSummary* AccountHistory::Find(uint32_t counterparty, int64_t t) const {
  const uint32_t horizon = WindowStart(t, kHistoryRetentionUs);
  for (const PairSummary& p : pairs_) {
    if (p.counterparty == counterparty) return p.last_active() > horizon ? &p : nullptr;
  }
  return nullptr;
}

int AccountHistory::Degree(bool out, int64_t t, int64_t window_us) const {
  const uint32_t start = WindowStart(t, window_us);
  const uint32_t end = HistorySeconds(t);
  int n = 0;
  for (const PairSummary& p : pairs_) {
    const uint32_t last = out ? p.last_out : p.last_in;
    const uint32_t first = out ? p.first_out : p.first_in;
    // Active in the window: a payment in (start, end]. With a late query (t before the newest
    // observed) the last payment may be after t: then the first tells whether one was before.
    n += last > start && (last <= end || (first != 0 && first <= end)) ? 1 : 0;
  }
  return n;
}

double AccountHistory::Median(bool out) const {
  const int n = NumAmounts(out);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  // Insertion sort of at most kAmountRing values.
  float v[kAmountRing];
  for (int i = 0; i < n; ++i) {
    const float a = Amounts(out)[i];
    int j = i;
    for (; j > 0 && v[j - 1] > a; --j) v[j] = v[j - 1];
    v[j] = a;
  }
  return n % 2 == 1 ? v[n / 2] : (static_cast<double>(v[n / 2 - 1]) + v[n / 2]) / 2;
}

double AccountHistory::Quantile(bool out, double amount) const {
  const int n = NumAmounts(out);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto a = static_cast<float>(amount);
  double below = 0;
  for (int i = 0; i < n; ++i) below += Amounts(out)[i] < a ? 1 : (Amounts(out)[i] == a ? 0.5 : 0);
  return below / n;
}

double AccountHistory::last_in_amount() const {
  if (n_in_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return in_amounts_[(next_in_ + kAmountRing - 1) % kAmountRing];
}

void AccountHistory::PrefetchPairs(size_t max_pairs) const {
  const char* p = reinterpret_cast<const char*>(pairs_.data());
  const size_t bytes = std::min(pairs_.size(), max_pairs) * sizeof(PairSummary);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

void AccountHistory::EncodeTo(std::string* out) const {
  Put(out, kEncodingVersion);
  Put(out, last_in_seconds_);
  Put(out, newest_);
  Put(out, n_out_);
  Put(out, n_in_);
  Put(out, next_out_);
  Put(out, next_in_);
  for (float a : out_amounts_) Put(out, a);
  for (float a : in_amounts_) Put(out, a);
  Put(out, static_cast<uint32_t>(pairs_.size()));
  for (const PairSummary& p : pairs_) {
    Put(out, p.counterparty);
    Put(out, p.first_out);
    Put(out, p.last_out);
    Put(out, p.first_in);
    Put(out, p.last_in);
    Put(out, p.out_count);
    Put(out, p.in_count);
  }
}

bool AccountHistory::DecodeFrom(std::string_view* in) {
  uint8_t version = 0;
  uint32_t n = 0;
  if (!Get(in, &version) || version != kEncodingVersion || !Get(in, &last_in_seconds_) ||
      !Get(in, &newest_) || !Get(in, &n_out_) || !Get(in, &n_in_) || !Get(in, &next_out_) ||
      !Get(in, &next_in_)) {
    return false;
  }
  if (n_out_ > kAmountRing || n_in_ > kAmountRing || next_out_ >= kAmountRing ||
      next_in_ >= kAmountRing) {
    return false;
  }
  for (float& a : out_amounts_) {
    if (!Get(in, &a)) return false;
  }
  for (float& a : in_amounts_) {
    if (!Get(in, &a)) return false;
  }
  if (!Get(in, &n) || in->size() < static_cast<size_t>(n) * sizeof(PairSummary)) return false;
  pairs_.clear();
  pairs_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    PairSummary p;
    Get(in, &p.counterparty);
    Get(in, &p.first_out);
    Get(in, &p.last_out);
    Get(in, &p.first_in);
    Get(in, &p.last_in);
    Get(in, &p.out_count);
    Get(in, &p.in_count);
    pairs_.push_back(p);
  }
  return true;
}

}  // namespace vigil
