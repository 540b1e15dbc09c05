// AccountHistory: an account's long memory (up to 90 days), bounded, for the features of schema
// v2 that must see further back than the 7-day event windows of AccountState: whom the account
// has paid and been paid by (one summary per counterparty), and its recent amounts.
//
// Per counterparty it keeps a PairSummary: the first and last payment in each direction and how
// many, within the retention horizon (kHistoryRetentionUs, 90 days). At most "max_pairs"
// counterparties are remembered (FeatureConfig::history_max_counterparties), in the order of
// their last update, most recent first: when a new one arrives at a full history, the least
// recently updated is forgotten, so for an account with more
// counterparties than that in 90 days the distinct counts saturate at the bound (a lower bound,
// exact below it). Amounts: the last kAmountRing outgoing and incoming amounts (their median and
// quantile give the scale-free relative amounts).
//
// Every query describes the history *before* the payment being applied (the caller queries,
// then calls Observe). Times are kept in whole seconds (PairSummary), so "before" and "within a
// window" are decided at one-second resolution; two payments in the same second are in time
// order for the cycle search (non-decreasing times).
//
// Late events (within the extractor's lateness bound) are folded in arrival order: the summary of
// a late payment's time may include payments that arrived before it with later event times, by at
// most the lateness bound (minutes, against windows of 30 and 90 days). Replay orders by event
// time and is exact.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_FEATURES_ACCOUNT_HISTORY_H_
#define VIGIL_FEATURES_ACCOUNT_HISTORY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/common/huge_page_pool.h"

namespace vigil {

inline constexpr int64_t kMicrosPerDay = 86'400'000'000;
inline constexpr int64_t kHistoryRetentionUs = 90 * kMicrosPerDay;
inline constexpr int64_t kHistoryShortWindowUs = 30 * kMicrosPerDay;

// Seconds since 2000-01-01 plus one (0 means "never"), saturating in 2136.
uint32_t HistorySeconds(int64_t time_us);
// The HistorySeconds before which a summary is out of a window of "window_us" ending at t:
// summaries with a time <= the returned value are outside (t - window, t].
uint32_t HistoryWindowStart(int64_t t, int64_t window_us);

struct PairSummary {
  uint32_t counterparty = 0;  // AccountIndex number
  uint32_t first_out = 0;     // HistorySeconds of the first payment to it kept, 0: none
  uint32_t last_out = 0;
  uint32_t first_in = 0;      // and from it
  uint32_t last_in = 0;
  uint16_t out_count = 0;     // payments to it since first_out (saturating)
  uint16_t in_count = 0;
  uint32_t last_active() const { return last_out > last_in ? last_out : last_in; }
};
static_assert(sizeof(PairSummary) == 24);

class AccountHistory {
 public:
  static constexpr int kAmountRing = 8;

  // Folds in one payment: "out" when this account paid "counterparty". "max_pairs" bounds the
  // summaries kept (>= 1). Forgets summaries whose last activity is 90 days or more before the
  // newest time observed.
  void Observe(uint32_t counterparty, bool out, int64_t time_us, double amount, int max_pairs);

  // The summary of "counterparty" as of time t (its last activity within 90 days before t), or
  // nullptr when none is kept.
  const PairSummary* Find(uint32_t counterparty, int64_t t) const;
  // Most recently updated first.
  const std::vector<PairSummary, HugePageAllocator<PairSummary>>& pairs() const { return pairs_; }

  // Distinct counterparties paid ("out") or paying in, among those kept, with a payment known
  // in (t - 30 days, t] and (t - 90 days, t].
  struct Degrees {
    int out_30d = 0, in_30d = 0, out_90d = 0, in_90d = 0;
  };
  Degrees DegreesAt(int64_t t) const;

  // Median and quantile of "amount" among the last kAmountRing amounts of one direction (NaN
  // when there are none): quantile = (number below + half the number equal) / number kept.
  double Median(bool out) const;
  double Quantile(bool out, double amount) const;
  // The last incoming amount and its HistorySeconds (0 when none).
  double last_in_amount() const;
  uint32_t last_in_seconds() const { return last_in_seconds_; }

  // The newest HistorySeconds observed (0 before the first).
  uint32_t newest() const { return newest_; }
  void Clear() { *this = AccountHistory(); }

  // Calls f(const PairSummary&) for each counterparty last active in (t - window_us, t], most
  // recently active first, at most "max_pairs" of them (schema v3's counterparty risk).
  template <typename F>
  void ForEachActiveCounterparty(int64_t t, int64_t window_us, int max_pairs, F&& f) const {
    const uint32_t start = HistoryWindowStart(t, window_us), end = HistorySeconds(t);
    int n = 0;
    for (const PairSummary& p : pairs_) {
      if (n >= max_pairs) return;
      const uint32_t last = p.last_active();
      if (last <= start || last > end) continue;
      f(p);
      ++n;
    }
  }

  size_t MemoryBytes() const { return pairs_.capacity() * sizeof(PairSummary); }  // heap only
  // Cache hints for the first "max_pairs" summaries (all by default).
  void PrefetchPairs(size_t max_pairs = SIZE_MAX) const;

  // Versioned binary encoding (AccountState embeds it).
  void EncodeTo(std::string* out) const;
  // Consumes the encoding from the front of *in; false on malformed input.
  bool DecodeFrom(std::string_view* in);

 private:
  int NumAmounts(bool out) const { return out ? n_out_ : n_in_; }
  const float* Amounts(bool out) const { return out ? out_amounts_.data() : in_amounts_.data(); }

  std::vector<PairSummary, HugePageAllocator<PairSummary>> pairs_;
  std::array<float, kAmountRing> out_amounts_{};  // ring, next write at next_out_
  std::array<float, kAmountRing> in_amounts_{};
  uint32_t last_in_seconds_ = 0;
  uint32_t newest_ = 0;
  uint8_t n_out_ = 0, n_in_ = 0, next_out_ = 0, next_in_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_ACCOUNT_HISTORY_H_
