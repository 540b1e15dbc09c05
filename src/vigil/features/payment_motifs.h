// Payment motifs: the graph shapes a payment completes, found over the accounts' long memory
// (AccountHistory) with bounded work, in the spirit of IBM's Graph Feature Preprocessor
// (arXiv 2402.08593) but streaming and causal: only payments before this one are seen.
//
// For a payment orig -> bene at time t, over the window (t - 30 days, t]:
//  - cycle_length: the length L (2..6) of the shortest time-ordered cycle it closes, 0 if none:
//    a walk bene = x0 -> x1 -> ... -> x(L-1) = orig of earlier payments with non-decreasing times,
//    so that money from bene has come back to orig by the time orig pays bene. Between two
//    accounts the history keeps only the first and last payment of each direction (PairSummary),
//    so a hop uses one of those two times: the search never reports a cycle that did not happen,
//    and may miss one whose only time-ordered hop was a payment between the first and the last.
//  - scatter_gather: how many distinct intermediaries m (other than orig and bene) were paid by an
//    account s that also paid orig and themselves paid bene: s scatters to orig and m, which
//    gather at bene. Window membership only; the order of those payments is not checked.
//
// Bounds: each account expands at most "branching" counterparties (the first with a usable
// payment in its history's order, most recently updated first; the scan stops there), and at
// most "budget" account histories other than orig's and bene's are read per payment (orig's
// senders first, for the backward half and scatter-gather, then bene's receivers, then theirs).
// A history is not read when nothing it holds can matter: without a payment from bene in the
// window no cycle longer than 2 can close, and scatter-gather needs a sender of bene's. The search meets in the middle: up to 3 hops forward from bene and 2 backward
// from orig. With the bounds wide enough to see every account, the result is the exact shortest
// cycle under the first/last rule above (the property test checks this against brute force).
//
// Thread safety: a pure function of the histories it is given (thread-safe; it keeps its scratch
// space per thread).
#ifndef VIGIL_FEATURES_PAYMENT_MOTIFS_H_
#define VIGIL_FEATURES_PAYMENT_MOTIFS_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "vigil/features/account_history.h"

namespace vigil {

struct MotifLimits {
  int branching = 8;
  int budget = 24;  // 0: no search (both motifs 0)
};

struct PaymentMotifs {
  int cycle_length = 0;
  int scatter_gather = 0;
  int histories_read = 0;  // beyond orig's and bene's
};

// REQUIRES: orig != bene; "history_of" returns the history of any account number it is given
// (orig and bene included) as of before this payment.
PaymentMotifs FindPaymentMotifs(uint32_t orig, uint32_t bene, int64_t t_us,
                                const MotifLimits& limits,
                                absl::FunctionRef<const AccountHistory&(uint32_t)> history_of);

}  // namespace vigil

#endif  // VIGIL_FEATURES_PAYMENT_MOTIFS_H_
