#include "vigil/features/payment_motifs.h"

#include <algorithm>
#include <vector>

namespace vigil {
namespace {

constexpr uint32_t kSecondsPerDay = 86'400;
constexpr uint32_t kWindowSeconds = 30 * kSecondsPerDay;

// An account reached by the search and the time it was reached: for the forward half the
// earliest time money from bene can have arrived there, for the backward half the latest time
// money can leave it and still reach orig.
struct Hop {
  uint32_t account;
  uint32_t time;
};

// The earliest of a pair's first/last outgoing times in [from, to]; 0 when neither is.
// REQUIRES: from >= 1 (0 is "never", so it is never in range).
uint32_t EarliestOut(const PairSummary& p, uint32_t from, uint32_t to) {
  if (p.first_out >= from && p.first_out <= to) return p.first_out;
  if (p.last_out >= from && p.last_out <= to) return p.last_out;
  return 0;
}

// The latest of a pair's first/last incoming times in [from, to]; 0 when neither is.
// REQUIRES: from >= 1.
uint32_t LatestIn(const PairSummary& p, uint32_t from, uint32_t to) {
  if (p.last_in >= from && p.last_in <= to) return p.last_in;
  if (p.first_in >= from && p.first_in <= to) return p.first_in;
  return 0;
}

// One level: at most one hop per account, the best time kept (earliest for forward, latest for
// backward), sorted by account for the meet test.
void Dedupe(std::vector<Hop>* hops, bool forward) {
  std::sort(hops->begin(), hops->end(), [forward](const Hop& a, const Hop& b) {
    if (a.account != b.account) return a.account < b.account;
    return forward ? a.time < b.time : a.time > b.time;
  });
  hops->erase(std::unique(hops->begin(), hops->end(),
                          [](const Hop& a, const Hop& b) { return a.account == b.account; }),
              hops->end());
}

// Whether some account is reached forward at time a and backward at time d >= a.
bool Meet(const std::vector<Hop>& forward, const std::vector<Hop>& backward) {
  size_t i = 0, j = 0;
  while (i < forward.size() && j < backward.size()) {
    if (forward[i].account < backward[j].account) {
      ++i;
    } else if (forward[i].account > backward[j].account) {
      ++j;
    } else {
      if (forward[i].time <= backward[j].time) return true;
      ++i;
      ++j;
    }
  }
  return false;
}

}  // namespace

PaymentMotifs FindPaymentMotifs(uint32_t orig, uint32_t bene, int64_t t_us,
                                const MotifLimits& limits,
                                absl::FunctionRef<const AccountHistory&(uint32_t)> history_of) {
  PaymentMotifs result;
  if (limits.budget <= 0 || limits.branching <= 0 || orig == bene) return result;
  const uint32_t end = HistorySeconds(t_us);
  const uint32_t from = end > kWindowSeconds ? end - kWindowSeconds + 1 : 1;  // window's first

  // Level sets: forward[k] reached from bene in k hops, backward[j] reaching orig in j hops.
  // Reused between calls on one thread: the search allocates nothing once warm.
  thread_local struct Scratch {
    std::vector<Hop> forward[4], backward[3];
    std::vector<uint32_t> bene_senders, intermediaries;
  } scratch;
  std::vector<Hop>(&forward)[4] = scratch.forward;
  std::vector<Hop>(&backward)[3] = scratch.backward;
  for (auto& level : forward) level.clear();
  for (auto& level : backward) level.clear();
  forward[0].push_back(Hop{bene, from});
  backward[0].push_back(Hop{orig, end});

  // The first "branching" counterparties of the history (most recently updated first) with a
  // payment usable after "bound" (forward) or before it (backward): the scan stops there, so a
  // busy account costs what a quiet one does.
  const auto expand = [&](const AccountHistory& h, uint32_t account, uint32_t bound, bool fwd,
                          std::vector<Hop>* out) {
    int taken = 0;
    for (const PairSummary& p : h.pairs()) {
      if (taken == limits.branching) break;
      if (p.counterparty == account) continue;
      const uint32_t time = fwd ? EarliestOut(p, bound, end) : LatestIn(p, from, bound);
      if (time == 0) continue;
      out->push_back(Hop{p.counterparty, time});
      ++taken;
    }
  };
  const AccountHistory& orig_history = history_of(orig);
  const AccountHistory& bene_history = history_of(bene);
  expand(orig_history, orig, end, /*fwd=*/false, &backward[1]);
  Dedupe(&backward[1], false);

  // Scatter-gather needs bene's senders in the window; they are read from its own history.
  std::vector<uint32_t>& bene_senders = scratch.bene_senders;
  bene_senders.clear();
  for (const PairSummary& p : bene_history.pairs()) {
    if (p.counterparty != bene && p.counterparty != orig && LatestIn(p, from, end) != 0) {
      bene_senders.push_back(p.counterparty);
    }
  }
  std::sort(bene_senders.begin(), bene_senders.end());

  int budget = limits.budget;
  const auto read = [&](uint32_t account) -> const AccountHistory* {
    if (budget <= 0) return nullptr;
    --budget;
    ++result.histories_read;
    return &history_of(account);
  };

  // One hop from each side meets without reading any other history.
  expand(bene_history, bene, from, /*fwd=*/true, &forward[1]);
  Dedupe(&forward[1], true);
  if (Meet(forward[0], backward[1]) || Meet(forward[1], backward[0])) {
    result.cycle_length = 2;
  } else if (Meet(forward[1], backward[1])) {
    result.cycle_length = 3;
  }

  // Backward level 2 and scatter-gather: read each account that paid orig, when either can
  // still matter (nobody paid orig, or bene paid nobody, in the window: no longer cycle can
  // close).
  const bool search_on =
      result.cycle_length == 0 && !backward[1].empty() && !forward[1].empty();
  std::vector<uint32_t>& intermediaries = scratch.intermediaries;
  intermediaries.clear();
  for (const Hop& y : backward[1]) {
    if (!search_on && bene_senders.empty()) break;
    const AccountHistory* h = y.account == bene ? &bene_history : read(y.account);
    if (h == nullptr) break;
    if (search_on) expand(*h, y.account, y.time, false, &backward[2]);
    if (bene_senders.empty()) continue;
    for (const PairSummary& p : h->pairs()) {
      const uint32_t m = p.counterparty;
      if (m == orig || m == bene || m == y.account || EarliestOut(p, from, end) == 0) continue;
      if (std::binary_search(bene_senders.begin(), bene_senders.end(), m)) {
        intermediaries.push_back(m);
      }
    }
  }
  Dedupe(&backward[2], false);
  std::sort(intermediaries.begin(), intermediaries.end());
  result.scatter_gather = static_cast<int>(
      std::unique(intermediaries.begin(), intermediaries.end()) - intermediaries.begin());
  if (!search_on) return result;

  // Forward levels 2 and 3: bene's receivers' receivers and theirs, as far as the budget reads.
  const auto grow = [&](int k) {
    for (const Hop& x : forward[k - 1]) {
      const AccountHistory* h =
          x.account == orig ? &orig_history : (x.account == bene ? &bene_history : read(x.account));
      if (h == nullptr) break;
      expand(*h, x.account, x.time, true, &forward[k]);
    }
    Dedupe(&forward[k], true);
  };
  // A cycle of length L meets at forward[k] and backward[j] with k + j = L - 1.
  const auto closes = [&](int length, int max_k) {
    for (int k = 0; k <= max_k; ++k) {
      const int j = length - 1 - k;
      if (j >= 0 && j <= 2 && Meet(forward[k], backward[j])) return true;
    }
    return false;
  };
  grow(2);
  for (int length = 3; length <= 4; ++length) {
    if (closes(length, 2)) {
      result.cycle_length = length;
      return result;
    }
  }
  grow(3);
  for (int length = 4; length <= 6; ++length) {
    if (closes(length, 3)) {
      result.cycle_length = length;
      return result;
    }
  }
  return result;
}

}  // namespace vigil
