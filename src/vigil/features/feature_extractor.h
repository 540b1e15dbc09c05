// FeatureExtractor: turns each Transaction into one feature row while updating the per-account
// state of both parties. The row layout is FeatureExtractor::Schema() ("vigil.features.v3": the
// columns of v1 and v2 in their places, then the counterparty-risk columns), documented in docs/features.md.
//
// Every transaction updates the originator's state with an outgoing event and the
// beneficiary's with an incoming one; the row describes both accounts as of the transaction's
// event time, the transaction itself included. A rejected transaction (unknown currency, later
// than the lateness bound) changes nothing.
//
// Thread safety: externally synchronized (one extractor per pipeline shard).
#ifndef VIGIL_FEATURES_FEATURE_EXTRACTOR_H_
#define VIGIL_FEATURES_FEATURE_EXTRACTOR_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "vigil/common/large_array.h"
#include "vigil/core/account_standing.h"
#include "vigil/core/feature_schema.h"
#include "vigil/core/fx_rates.h"
#include "vigil/core/transaction.h"
#include "vigil/features/account_index.h"
#include "vigil/features/account_state.h"
#include "vigil/features/feature_config.h"

namespace vigil {

// What FeatureExtractor::BoundEventTimes changed.
struct EventTimeRepair {
  int64_t watermark_before_us = INT64_MIN;
  int64_t watermark_after_us = INT64_MIN;
  size_t accounts = 0;        // accounts whose state held events past the bound
  size_t events_dropped = 0;  // those events, forgotten
  bool repaired() const { return accounts > 0 || watermark_before_us != watermark_after_us; }
};

// Memory held by the feature state, for capacity planning and the bytes-per-account figure.
struct FeatureMemoryStats {
  size_t accounts = 0;
  size_t state_bytes = 0;                   // AccountState objects and their heap
  size_t index_bytes = 0;                   // account key index
  std::vector<uint32_t> per_account_bytes;  // state bytes per account (filled on request)
};

// The member of the transaction that a refusal of FeatureExtractor::Process is about, as a
// JSON path of the ingest schema ("$.timestamp", "$.amount.value", "$.amount.currency"); ""
// for a status that names none.
std::string RefusedField(const absl::Status& status);

// The accounts each row's counterparty-risk columns (schema v3) were read from: both parties
// and the counterparties consulted for each. A caller that decides a batch of payments at once
// can tell from them which rows an earlier decision of the same batch made stale (it changed
// the risk of an account the row read) and refresh those rows (RefreshRiskColumns) before
// deciding them again, so that the batch decides exactly as payments one by one would.
class RiskReads {
 public:
  struct Row {
    absl::Span<const uint32_t> parties;  // {originator, beneficiary}; empty: the row was refused
    absl::Span<const uint32_t> counterparties[2];
  };
  void Clear() {
    accounts_.clear();
    rows_.clear();
  }
  size_t size() const { return rows_.size(); }
  Row Of(size_t row) const;

 private:
  friend class FeatureExtractor;
  struct Extent {
    uint32_t begin = 0, orig_counterparties = 0, bene_counterparties = 0;
    bool refused = true;
  };
  std::vector<uint32_t> accounts_;
  std::vector<Extent> rows_;
};

class FeatureExtractor {
 public:
  // "fx" must outlive the extractor.
  FeatureExtractor(const FxRates& fx, FeatureConfig config);

  static std::shared_ptr<const FeatureSchema> Schema();

  // Applies "tx" and writes its feature row to "row" (size Schema()->size()). Errors:
  // kInvalidArgument for an amount that cannot be converted (reason in the message),
  // kOutOfRange when tx is older than watermark - allowed_lateness ("event_too_late"). Each
  // names the member of the transaction at fault in RefusedField (a status payload).
  absl::Status Process(const Transaction& tx, absl::Span<double> row);
  // The same, also noting the accounts the row's risk columns were read from as the next row
  // of `reads` (appended, not cleared: an empty row when refused), as ProcessBatch does.
  absl::Status Process(const Transaction& tx, absl::Span<double> row, RiskReads* reads);

  // Applies txs in order with the same results as Process on each in turn: row i goes to
  // rows[i * width, (i + 1) * width) with width = Schema()->size(), its result to statuses[i].
  // Built for throughput when the state is larger than the CPU caches: while it applies one
  // transaction it looks a few ahead and fetches the index slots, account states, events and
  // (with the cycle check) the beneficiaries' receivers they will touch, so the DRAM misses of
  // several transactions overlap instead of following one another.
  // REQUIRES: rows.size() == txs.size() * width and statuses.size() == txs.size().
  // With `reads`, also notes the accounts each row's risk columns were read from (one entry
  // per transaction, refused ones empty; `reads` is cleared first).
  void ProcessBatch(absl::Span<const Transaction> txs, absl::Span<double> rows,
                    absl::Span<absl::Status> statuses, RiskReads* reads = nullptr);

  // Writes the counterparty-risk columns of `row` again from the accounts `reads` names, as
  // their risk stands now (at tx's event time): what Process would have written had the
  // payments decided since been decided before tx. The other columns are left as they are.
  // REQUIRES: `reads` is tx's row of the ProcessBatch that applied tx, not refused.
  void RefreshRiskColumns(const Transaction& tx, const RiskReads::Row& reads,
                          absl::Span<double> row) const;

  // Folds one decided payment into both parties' account risk (AccountRisk, over
  // FeatureConfig::account_window) and returns their standings, originator first: "score" is
  // the decision's model score (NaN: none), "rule_hit" whether an active rule fired, and
  // "thresholds" when an account alerts. The payment is known by its transaction id (a retry
  // of the same payment is answered alike, AccountRisk). A party this extractor has never seen
  // (the payment was refused) gets an empty standing and nothing changes for it. Call it after
  // Process (or ProcessBatch) applied the payment; marks the accounts dirty.
  std::array<AccountStanding, 2> RecordRisk(const Transaction& tx, double score, bool rule_hit,
                                            const AccountAlertThresholds& thresholds);
  // What RecordRisk would return now for this decision, without recording anything (a
  // cluster node's owner answers with it; the log's account step records it later).
  std::array<AccountStanding, 2> PreviewRisk(const Transaction& tx, double score, bool rule_hit,
                                             const AccountAlertThresholds& thresholds);
  // Both parties' standing as of tx's event time, without recording anything (no alert).
  std::array<AccountStanding, 2> StandingsOf(const Transaction& tx);

  // Latest event time applied (microseconds), INT64_MIN before the first.
  int64_t watermark_us() const { return watermark_; }
  size_t num_accounts() const { return states_.size(); }
  FeatureMemoryStats Memory(bool per_account) const;

  // Persistence hooks (FeatureStore): accounts changed since the last ClearDirty(), in first-
  // change order, and restore of one account's state under its key.
  const std::vector<uint32_t>& dirty_accounts() const { return dirty_; }
  void ClearDirty();
  const AccountIndex& index() const { return index_; }
  const AccountState& state(uint32_t account) const { return states_[account]; }
  // REQUIRES: accounts are restored in their original number order (0, 1, 2, ...).
  absl::Status RestoreAccount(std::string_view key, AccountState state);
  void RestoreWatermark(int64_t watermark_us) { watermark_ = watermark_us; }

  // Recovery from a poisoned state: a state written before admission bounded event times (or
  // restored on a host whose clock jumped back) may hold events dated after "limit_us" (the
  // server's clock plus the skew it admits), and its watermark then makes every real payment
  // "event_too_late". Forgets those events (AccountState::DropEventsAfter), marks their
  // accounts dirty so that the next checkpoint stores the repair, and sets the watermark to the
  // newest event kept. O(accounts) when the watermark is past the bound; otherwise nothing.
  EventTimeRepair BoundEventTimes(int64_t limit_us);

 private:
  // One transaction's account keys and what was learnt about them ahead of its turn.
  struct Lookahead {
    static constexpr int kMaxReceivers = 16;
    std::string key[2];  // originator, beneficiary
    uint64_t hash[2] = {0, 0};
    int64_t account[2] = {-1, -1};      // -1 while unknown (or new)
    uint32_t receivers[kMaxReceivers];  // the beneficiary's recent receivers, as seen ahead
    int num_receivers = 0;
    // The accounts the motif search will read first (the originator's senders, the
    // beneficiary's receivers in its long memory), as seen ahead.
    uint32_t motif_accounts[kMaxReceivers];
    int num_motif_accounts = 0;
  };
  // Transactions between two lookahead stages; the ring holds every transaction in flight.
  static constexpr int64_t kLookaheadStep = 2;
  static constexpr size_t kLookaheadRing = 32;
  static_assert(kLookaheadRing > 5 * kLookaheadStep &&
                (kLookaheadRing & (kLookaheadRing - 1)) == 0);

  // The two account keys of "tx" (their pseudonyms when config_.account_pseudonyms is set).
  void PrepareKeys(const Transaction& tx, Lookahead* la);
  void LookaheadFind(Lookahead* la) const;
  void LookaheadStates(const Lookahead& la) const;
  void LookaheadReceivers(const Transaction& tx, Lookahead* la) const;
  void LookaheadMotifAccounts(Lookahead* la) const;
  void LookaheadReceiverStates(const Lookahead& la) const;
  void LookaheadCounterpartyRisk(const Transaction& tx, const Lookahead& la) const;
  void PrefetchState(uint32_t account) const;

  absl::Status ProcessPrepared(const Transaction& tx, const Lookahead& la, absl::Span<double> row,
                               RiskReads* reads = nullptr);
  uint32_t Touch(std::string_view key, uint64_t hash);
  void MarkDirty(uint32_t account);
  int64_t RiskBucketMicros() const;
  int CycleLength(uint32_t orig, uint32_t bene, int64_t t) const;
  // Schema v2's columns from both parties' long memory before this payment.
  void WriteHistoryColumns(uint32_t orig, uint32_t bene, int64_t t, double amount,
                           double* out) const;
  // Schema v3's counterparty-risk columns of one side.
  // With `read`, appends the counterparties consulted.
  void WriteRiskSide(uint32_t account, int64_t t, double* out,
                     std::vector<uint32_t>* read = nullptr) const;
  // The same columns from a list of counterparties noted before.
  // (WriteRiskSide's scratch list; the extractor is used by one thread at a time.)
  mutable std::vector<uint32_t> risk_counterparties_;
  void WriteRiskSideFrom(uint32_t account, absl::Span<const uint32_t> counterparties, int64_t t,
                         double* out) const;

  // Account states in fixed chunks: a growing std::vector would leave up to half its capacity
  // unused (and copy every state on growth); chunks waste less than one chunk. The first
  // kSmallChunks chunks are small (a small population wastes little); past them each chunk
  // fills one 2 MiB huge page (a large population is read at random, see LargeArray).
  class StateTable {
   public:
    static constexpr size_t kSmallChunk = 1024;
    static constexpr size_t kSmallChunks = 64;
    static constexpr size_t kSmallTotal = kSmallChunk * kSmallChunks;
    static constexpr size_t kLargeChunk = (size_t{2} << 20) / sizeof(AccountState);
    AccountState& operator[](size_t i) {
      if (i < kSmallTotal) return small_[i / kSmallChunk][i % kSmallChunk];
      i -= kSmallTotal;
      return large_[i / kLargeChunk][i % kLargeChunk];
    }
    const AccountState& operator[](size_t i) const { return const_cast<StateTable&>(*this)[i]; }
    size_t size() const { return size_; }
    size_t capacity() const { return small_.size() * kSmallChunk + large_.size() * kLargeChunk; }
    void push_back(AccountState state) {
      if (size_ == capacity()) {
        if (small_.size() < kSmallChunks) {
          small_.emplace_back(kSmallChunk);
        } else {
          large_.emplace_back(kLargeChunk);
        }
      }
      (*this)[size_++] = std::move(state);
    }

   private:
    std::vector<LargeArray<AccountState>> small_;
    std::vector<LargeArray<AccountState>> large_;
    size_t size_ = 0;
  };

  const FxRates& fx_;
  const FeatureConfig config_;
  const std::shared_ptr<const FeatureSchema> schema_;
  AccountIndex index_;
  StateTable states_;
  std::vector<uint8_t> is_dirty_;
  std::vector<uint32_t> dirty_;
  int64_t watermark_ = INT64_MIN;
  Lookahead single_;  // Process()'s keys
  std::string plain_key_;  // PrepareKeys' scratch when pseudonymizing
  std::array<Lookahead, kLookaheadRing> ring_;
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_FEATURE_EXTRACTOR_H_
