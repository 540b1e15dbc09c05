// FeatureExtractor: turns each Transaction into one feature row while updating the per-account
// state of both parties. The row layout is FeatureExtractor::Schema() ("vigil.features.v1"),
// documented in docs/features.md.
//
// Every transaction updates the originator's state with an outgoing event and the
// beneficiary's with an incoming one; the row describes both accounts as of the transaction's
// event time, the transaction itself included. A rejected transaction (unknown currency, later
// than the lateness bound) changes nothing.
//
// Thread safety: externally synchronized (one extractor per pipeline shard).
#ifndef VIGIL_FEATURES_FEATURE_EXTRACTOR_H_
#define VIGIL_FEATURES_FEATURE_EXTRACTOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "vigil/core/feature_schema.h"
#include "vigil/core/fx_rates.h"
#include "vigil/core/transaction.h"
#include "vigil/features/account_index.h"
#include "vigil/features/account_state.h"
#include "vigil/features/feature_config.h"

namespace vigil {

// Memory held by the feature state, for capacity planning and the bytes-per-account figure.
struct FeatureMemoryStats {
  size_t accounts = 0;
  size_t state_bytes = 0;  // AccountState objects and their heap
  size_t index_bytes = 0;  // account key index
  std::vector<uint32_t> per_account_bytes;  // state bytes per account (filled on request)
};

class FeatureExtractor {
 public:
  // "fx" must outlive the extractor.
  FeatureExtractor(const FxRates& fx, FeatureConfig config);

  static std::shared_ptr<const FeatureSchema> Schema();

  // Applies "tx" and writes its feature row to "row" (size Schema()->size()). Errors:
  // kInvalidArgument for an amount that cannot be converted (reason in the message),
  // kOutOfRange when tx is older than watermark - allowed_lateness ("event_too_late").
  absl::Status Process(const Transaction& tx, absl::Span<double> row);

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

 private:
  uint32_t Touch(const Party& party);
  int CycleLength(uint32_t orig, uint32_t bene, int64_t t) const;

  // Account states in fixed chunks: a growing std::vector would leave up to half its capacity
  // unused (and copy every state on growth); chunks waste less than one chunk.
  class StateTable {
   public:
    static constexpr size_t kChunk = 1024;
    AccountState& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
    const AccountState& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
    size_t size() const { return size_; }
    size_t capacity() const { return chunks_.size() * kChunk; }
    void push_back(AccountState state) {
      if (size_ == capacity()) chunks_.push_back(std::make_unique<AccountState[]>(kChunk));
      (*this)[size_++] = std::move(state);
    }

   private:
    std::vector<std::unique_ptr<AccountState[]>> chunks_;
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
  std::string key_scratch_;
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_FEATURE_EXTRACTOR_H_
