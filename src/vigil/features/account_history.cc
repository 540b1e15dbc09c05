#include "vigil/features/account_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vigil/features/account_state.h"
#include "vigil/features/internal/fixed_encoding.h"

namespace vigil {
namespace {

constexpr uint8_t kEncodingVersion = 1;

using features_internal::GetFixed;
using features_internal::PutFixed;

uint16_t Increment(uint16_t n) { return n == UINT16_MAX ? n : static_cast<uint16_t>(n + 1); }

}  // namespace

uint32_t HistoryWindowStart(int64_t t, int64_t window_us) {
  const int64_t start = t - window_us;
  return start < kMinEventTimeUs ? 0 : HistorySeconds(start);
}

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
  PairSummary& mine = pairs_.front();
  uint32_t& first = out ? mine.first_out : mine.first_in;
  uint32_t& last = out ? mine.last_out : mine.last_in;
  uint16_t& count = out ? mine.out_count : mine.in_count;
  if (first == 0 || s < first) first = s;
  last = std::max(last, s);
  count = Increment(count);
  std::array<float, kAmountRing>& ring = out ? out_amounts_ : in_amounts_;
  uint8_t& next = out ? next_out_ : next_in_;
  uint8_t& filled = out ? n_out_ : n_in_;
  ring[next] = static_cast<float>(amount);
  next = static_cast<uint8_t>((next + 1) % kAmountRing);
  if (filled < kAmountRing) ++filled;
  if (!out) last_in_seconds_ = std::max(last_in_seconds_, s);
}

const PairSummary* AccountHistory::Find(uint32_t counterparty, int64_t t) const {
  const uint32_t horizon = HistoryWindowStart(t, kHistoryRetentionUs);
  for (const PairSummary& p : pairs_) {
    if (p.counterparty == counterparty) return p.last_active() > horizon ? &p : nullptr;
  }
  return nullptr;
}

AccountHistory::Degrees AccountHistory::DegreesAt(int64_t t) const {
  const uint32_t end = HistorySeconds(t);
  const uint32_t short_start = HistoryWindowStart(t, kHistoryShortWindowUs);
  const uint32_t long_start = HistoryWindowStart(t, kHistoryRetentionUs);
  // A payment known in (start, end]: the last, or with a late query (t before the newest
  // observed, so the last may be after t) the first. One between them is not known.
  const auto in_window = [end](uint32_t first, uint32_t last, uint32_t start) {
    return (last > start && last <= end) || (first > start && first <= end);
  };
  Degrees d;
  for (const PairSummary& p : pairs_) {
    d.out_30d += in_window(p.first_out, p.last_out, short_start) ? 1 : 0;
    d.in_30d += in_window(p.first_in, p.last_in, short_start) ? 1 : 0;
    d.out_90d += in_window(p.first_out, p.last_out, long_start) ? 1 : 0;
    d.in_90d += in_window(p.first_in, p.last_in, long_start) ? 1 : 0;
  }
  return d;
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
  PutFixed(out, kEncodingVersion);
  PutFixed(out, last_in_seconds_);
  PutFixed(out, newest_);
  PutFixed(out, n_out_);
  PutFixed(out, n_in_);
  PutFixed(out, next_out_);
  PutFixed(out, next_in_);
  for (float a : out_amounts_) PutFixed(out, a);
  for (float a : in_amounts_) PutFixed(out, a);
  PutFixed(out, static_cast<uint32_t>(pairs_.size()));
  for (const PairSummary& p : pairs_) PutFixed(out, p);
}

bool AccountHistory::DecodeFrom(std::string_view* in) {
  uint8_t version = 0;
  uint32_t n = 0;
  if (!GetFixed(in, &version) || version != kEncodingVersion || !GetFixed(in, &last_in_seconds_) ||
      !GetFixed(in, &newest_) || !GetFixed(in, &n_out_) || !GetFixed(in, &n_in_) || !GetFixed(in, &next_out_) ||
      !GetFixed(in, &next_in_)) {
    return false;
  }
  if (n_out_ > kAmountRing || n_in_ > kAmountRing || next_out_ >= kAmountRing ||
      next_in_ >= kAmountRing) {
    return false;
  }
  for (float& a : out_amounts_) {
    if (!GetFixed(in, &a)) return false;
  }
  for (float& a : in_amounts_) {
    if (!GetFixed(in, &a)) return false;
  }
  if (!GetFixed(in, &n) || in->size() < static_cast<size_t>(n) * sizeof(PairSummary)) return false;
  pairs_.clear();
  pairs_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    PairSummary p;
    GetFixed(in, &p);  // the size was checked above
    pairs_.push_back(p);
  }
  return true;
}

}  // namespace vigil
