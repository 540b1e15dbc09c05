// SourceLedger: who a live window's rows come from, so that no one account, counterparty or
// client can make up a window's evidence of drift (docs/drift.md, "Who can move a window").
//
// Every row names its sources (RowSource): the originator's account, the beneficiary's account
// and the client that submitted it, as hashes. The ledger mirrors one LiveWindow's ring of
// panes and counts, per source, the rows the window holds from it. A row is admitted to the
// window only while each of its accounts holds fewer than
//   max(account_cap_rows, account_cap_share × the window's admitted rows)
// of the window's rows (and its client fewer than max(account_cap_rows, client_cap_share × rows)
// when client_cap_share < 1); past that, the source's further rows are counted as capped and
// left out of the window. So 3,000 one-cent payments of one account in a second weigh what a
// handful of its payments weigh, whichever counterparty they go to. The distinct accounts and
// clients of the window are read at each evaluation: a window spanning too few is not
// evaluated (DriftConfig::min_accounts, min_clients).
//
// A source hash of 0 is unknown: such a row is never capped on it, and each unknown party
// counts as one distinct account (callers that cannot name the parties vouch for them; `vigil serve` and `vigil
// replay` always name them).
//
// Memory: two account hashes and one client hash per admitted row, plus one map entry per
// distinct source in the window: bounded by the window's rows.
//
// Thread safety: externally synchronized (one per window, owned by the monitor).
#ifndef VIGIL_DRIFT_SOURCE_LEDGER_H_
#define VIGIL_DRIFT_SOURCE_LEDGER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace vigil::drift {

struct RowSource {
  uint64_t originator = 0;   // hash of the originator's bank and account; 0: unknown
  uint64_t beneficiary = 0;  // the same of the beneficiary
  uint64_t client = 0;       // hash of the submitting client (the request's actor); 0: unknown
};

// A non-zero hash of "text" (FNV-1a 64, 0 mapped to 1), for RowSource members.
uint64_t SourceHash(std::string_view text);

struct SourceCaps {
  uint64_t account_cap_rows = 1;
  double account_cap_share = 0;
  double client_cap_share = 1.0;  // 1: clients are not capped
};

class SourceLedger {
 public:
  // "panes": the window's number of panes (size / slide), >= 1.
  SourceLedger(size_t panes, SourceCaps caps);

  enum class Admission { kAdmitted, kCapped, kLate };
  // Whether a row of pane "index" from "source" counts in the window; when admitted, it is
  // recorded. kLate: older than the window (the LiveWindow counts it late); kCapped: a source
  // holds its share already (counted in capped()).
  Admission Admit(int64_t index, const RowSource& source);
  // Forgets the panes that a window ending with pane "index" no longer covers (before an
  // evaluation as of "index" when no row of it has come).
  void AdvanceTo(int64_t index);

  // Over the panes (newest - panes, newest]:
  uint64_t rows() const { return rows_; }
  size_t distinct_accounts() const { return accounts_.size() + unknown_accounts_; }
  // Rows of unknown client count as one client.
  size_t distinct_clients() const { return clients_.size() + (unknown_clients_ > 0 ? 1 : 0); }
  // Rows left out by the caps since the start.
  uint64_t capped() const { return capped_; }

 private:
  struct Pane {
    int64_t index = INT64_MIN;
    std::vector<uint64_t> accounts;  // known account hashes of its admitted rows (one per party)
    std::vector<uint64_t> clients;   // known client hashes of its admitted rows
    uint64_t rows = 0;
    uint64_t unknown_accounts = 0;
    uint64_t unknown_clients = 0;
  };
  void Evict(Pane& pane);
  static void Decrement(absl::flat_hash_map<uint64_t, uint32_t>& counts, uint64_t key);

  const SourceCaps caps_;
  std::vector<Pane> panes_;
  int64_t newest_ = INT64_MIN;
  uint64_t rows_ = 0;
  uint64_t unknown_accounts_ = 0;
  uint64_t unknown_clients_ = 0;
  uint64_t capped_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> accounts_;  // rows in the window per account
  absl::flat_hash_map<uint64_t, uint32_t> clients_;   // rows in the window per client
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_SOURCE_LEDGER_H_
