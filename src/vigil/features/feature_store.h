// FeatureStore: durable per-account feature state under a data directory (RocksDB).
//
// All state lives in memory in a FeatureExtractor; the store makes it survive restarts. Open()
// restores every account and the watermark; Checkpoint() writes the accounts changed since the
// previous checkpoint together with a caller-supplied cursor (e.g. how far a replay got) in one
// atomic, fsync'd batch. After a crash the state is exactly that of the last checkpoint and the
// cursor says where to resume, so no account's counters are ever reset or counted twice.
//
// Layout (column families): "accounts": key = account number (4 bytes, big-endian, so keys sort
// in number order), value = varint key length, account key, AccountState encoding.
// "meta": "watermark" (8 bytes), "schema" (feature schema version), "account_keys" ("plain",
// or "<hmac>:<key id>" when accounts are pseudonymized: FeatureConfig::account_pseudonyms),
// "cursor/<name>" entries. A state is opened only with the account keying it was written with.
//
// Thread safety: externally synchronized, like the FeatureExtractor it owns.
#ifndef VIGIL_FEATURES_FEATURE_STORE_H_
#define VIGIL_FEATURES_FEATURE_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/fx_rates.h"
#include "vigil/features/feature_config.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil {

class KvFaults;
class KvStore;

struct CheckpointStats {
  size_t accounts_written = 0;
  size_t bytes_written = 0;
};

class FeatureStore {
 public:
  // Opens or creates the store at "data_dir"/features and restores its state. "fx" must outlive
  // the store. "extra_column_families" are opened (created when missing) beside the store's
  // own, for other state that should share its directory and write-ahead log (the drift event
  // log of `vigil serve`); their names must not be "accounts" or "meta". Fails with
  // kFailedPrecondition when the stored feature schema version differs from this build's
  // (state of another definition must not be mixed in).
  // "faults": fault injection for tests (store/kv_faults.h); null outside tests.
  static absl::StatusOr<std::unique_ptr<FeatureStore>> Open(
      const std::string& data_dir, const FxRates& fx, const FeatureConfig& config,
      const std::vector<std::string>& extra_column_families = {},
      std::shared_ptr<KvFaults> faults = nullptr);
  ~FeatureStore();

  FeatureExtractor& extractor() { return *extractor_; }
  // The key-value store underneath, for the extra column families given to Open. Unlike the
  // FeatureStore it is safe for concurrent use; it lives as long as this FeatureStore. Writing
  // to "accounts" or "meta" through it would bypass the checkpoint protocol: don't.
  KvStore& kv() { return *kv_; }
  // Cursor entries restored by Open (as written by the last Checkpoint).
  const std::map<std::string, std::string>& cursor() const { return cursor_; }

  // Durably writes the changed accounts, the watermark and "cursor" (replacing the previous
  // cursor) in one atomic batch, then clears the extractor's dirty set.
  absl::StatusOr<CheckpointStats> Checkpoint(const std::map<std::string, std::string>& cursor);

  // The same in two phases, for a store that serves live traffic: Stage copies the changed
  // accounts into a batch and clears the dirty set (cheap; under the caller's lock on the
  // extractor); Commit writes it durably (slow: the fsync; without that lock, as it reads
  // nothing of the extractor). Commits must follow stage order, and a batch whose Commit failed
  // must be committed again before any later one (the caller keeps it), or the accounts it
  // holds would be durable only at their next change.
  struct StagedCheckpoint {
    KvWriteBatch batch;
    CheckpointStats stats;
    std::map<std::string, std::string> cursor;
  };
  StagedCheckpoint Stage(const std::map<std::string, std::string>& cursor);
  // Stage without a cursor, into a batch of the caller's: for state that becomes durable with
  // another module's writes in one atomic batch (the audit log's groups). The same ordering
  // rule as Stage/Commit holds: such batches must be written in the order they were staged.
  void StageInto(KvWriteBatch& batch);
  absl::Status Commit(const StagedCheckpoint& staged);

 private:
  FeatureStore() = default;
  absl::Status Restore();
  // Puts the dirty accounts, the watermark and the schema into "batch"; clears the dirty set.
  CheckpointStats StageAccounts(KvWriteBatch& batch);

  std::unique_ptr<KvStore> kv_;
  std::unique_ptr<FeatureExtractor> extractor_;
  std::map<std::string, std::string> cursor_;
  std::string account_keys_;  // what meta "account_keys" must say
};

}  // namespace vigil

#endif  // VIGIL_FEATURES_FEATURE_STORE_H_
