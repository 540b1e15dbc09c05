// AuditLog: the append-only, tamper-evident log of decisions, in RocksDB column families of a
// KvStore, durable before anything is acknowledged.
//
// Structure (docs/audit.md):
//  - records: one per decision, in sequence order, each carrying the leaf hash of the one
//    before it, so a sequential walk detects an edit; stored in chunks of consecutive records
//    (record_chunk.h), LZ4-compressed, one or more per group;
//  - a Merkle tree over the records (RFC 9162 hashing), its nodes stored in tiles of 256 hashes,
//    so inclusion and consistency proofs take O(log n) reads and hashes;
//  - signed tree heads, chained (each names the one before it), the first of size 0 when the
//    log is created, then exactly every `tree_head_every_records` records or after
//    `tree_head_interval`, so a rewritten or truncated log is detectable, not only an edited
//    record, and so is a head removed from the store;
//  - an index from transaction id to sequence (idempotency, `vigil audit prove TXID`);
//  - a header naming the hash algorithm, the log id and the signing key;
//  - with a key-encryption key (AuditLogOptions::record_kek), the wrapped data keys under which
//    the records' personal fields are sealed (record_sealer.h): a new one each time the log
//    opens and after every records_per_data_key records, each durable before a record sealed
//    with it.
//
// Appending: callers encode record bodies in parallel (EncodeRecordBody, with sealer() when the
// log seals personal data) and hand them to
// Append, which queues them for the log's committer thread. The committer takes everything
// queued (up to a group's limits), assigns sequence numbers, chains and hashes, packs the
// records into chunks, adds the tree's new nodes, the head and, when due, a signed tree head,
// lets the companion add state that must become durable with the records (the feature
// state), and hands the group, one atomic RocksDB batch, to the writer thread. The writer
// writes the groups in order, every group built since its last sync with one sync (group
// commit), and then releases their waiters: Append returns when its records are durable.
// While the writer syncs, the committer builds the next group when enough records wait
// (bulk appends); small groups wait and join the next sync.
//
// After a failed write the log accepts nothing more: every later Append fails with kUnavailable
// and health() reports the cause, so that a server turns unready instead of acknowledging
// decisions it cannot record. What was durable stays durable; a restart after the cause is
// fixed continues the log.
//
// Thread safety: safe for concurrent use; Append may be called from any number of threads.
#ifndef VIGIL_AUDIT_AUDIT_LOG_H_
#define VIGIL_AUDIT_AUDIT_LOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/merkle_tree.h"
#include "vigil/audit/record_chunk.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/signing_key.h"
#include "vigil/audit/tree_head.h"
#include "vigil/common/clock.h"
#include "vigil/crypto/envelope.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil {
class KvStore;
}  // namespace vigil

namespace vigil::audit {

// The log's column families, to open in the KvStore that holds it.
std::vector<std::string> AuditColumnFamilies();
// The one of them that holds the wrapped data keys (data key id -> WrappedDataKey JSON). A log
// written before records were sealed may lack it; readers treat it as empty.
inline constexpr char kAuditKeysFamily[] = "audit_keys";

struct AuditLogOptions {
  // Hash of a new log. An existing log keeps the algorithm in its header.
  HashAlgorithm hash = HashAlgorithm::kSha256;
  // Signs the tree heads. Required. A log created with one key refuses to open with another
  // (kFailedPrecondition): a key change must be a deliberate rotation, not a misconfiguration.
  std::shared_ptr<const LogSigner> signer;
  // A tree head is signed when this many records were added since the last one (exactly:
  // also within a group), or when tree_head_interval passed and the log grew, and when the log
  // is closed. Each head states both (tree_head.h); the next head honours the smaller of this
  // and what the newest head stated, so a log's heads never lie further apart than promised.
  uint64_t tree_head_every_records = 10'000;
  std::chrono::milliseconds tree_head_interval{1'000};
  // Group commit limits. A group is written as soon as the previous write finished (and, with
  // group_max_delay > 0, after waiting up to that long for more records while fewer than
  // group_max_records are queued).
  size_t group_max_records = 16'384;
  size_t group_max_bytes = size_t{16} << 20;
  std::chrono::microseconds group_max_delay{0};
  // fsync each group (default). false: a group survives a process crash but not an OS crash.
  bool sync = true;
  // Store each run of records as an LZ4-compressed chunk (record_chunk.h; default). false:
  // chunks stored uncompressed. Either way the records, their hashes and proofs are the same,
  // and a log may hold both kinds.
  bool compress_records = true;
  // Records queued but not yet written, at most. Beyond it Append fails with
  // kResourceExhausted: overload is answered, not absorbed.
  size_t max_queued_records = 262'144;

  // Field-level encryption of personal data (record_sealer.h, docs/audit.md "Sealed fields").
  // The key-encryption key that wraps the data keys; its public half is enough (the log never
  // reads what it sealed). Null (default): records are written in the clear, as before. The
  // setting applies to the records appended from now on; a log may hold both kinds.
  std::shared_ptr<const crypto::KeyEncryptionKey> record_kek;
  // The cipher of new data keys: kAes256Gcm (default) or kSm4CtrHmacSm3 (national profile).
  crypto::CipherSuite record_suite = crypto::CipherSuite::kAes256Gcm;
  // A data key seals at most about this many records (records encoded while the key is
  // replaced may still use it), then the log starts a new segment under a fresh one. Each
  // process also starts a new segment when it opens the log. Smaller: less data under one key
  // if a key leaks, one more wrapped key (about 400 bytes) per segment.
  uint64_t records_per_data_key = 1'000'000;
};

// A record to append: its body (EncodeRecordBody) and its transaction's id.
struct PendingRecord {
  std::string transaction_id;
  std::string body;
};

// Where an appended record went.
struct AppendedRecord {
  uint64_t sequence = 0;
  Hash leaf_hash{};
};

struct AuditLogHeader {
  // 2: tree heads chained (every log this build creates); 1: written before, its heads
  // unchained until this build signs the first chained one, when the header becomes 2.
  int format = 2;
  std::string log_id;  // UUIDv7 chosen at creation
  HashAlgorithm hash = HashAlgorithm::kSha256;
  UtcTime created{};
  SignatureAlgorithm signature_algorithm = SignatureAlgorithm::kEd25519;
  std::string key_id;
  std::string public_key_pem;
};

// Counters since Open.
struct AuditLogStats {
  uint64_t records = 0;       // appended (durable)
  uint64_t groups = 0;        // atomic batches written
  uint64_t syncs = 0;         // each covers the groups written since the one before
  uint64_t bytes_written = 0; // the groups' batches: records, tree, heads, index, state
  uint64_t tree_heads = 0;    // signed
  uint64_t failed_writes = 0;
  uint64_t refused = 0;       // records refused: queue full or log stopped
  uint64_t data_keys = 0;     // data keys made (segments started)
  std::chrono::nanoseconds write_time{0};  // total time in RocksDB writes (syncs included)
};

class AuditLog {
 public:
  // Opens (or creates) the log in "store", whose column families must include
  // AuditColumnFamilies(). "store" and "clock" must outlive the log. On open the durable head
  // is checked against the stored tree (kDataLoss when they disagree: run `vigil audit verify`).
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(KvStore* store, AuditLogOptions options,
                                                        const Clock& clock);

  // Opens an existing log read-only (verification, proofs, export): no committer, no signer;
  // Append fails. kNotFound when the store holds no log.
  static absl::StatusOr<std::unique_ptr<AuditLog>> OpenForReading(KvStore* store);

  // Writes what is queued, signs a final tree head when the log grew since the last one, and
  // stops the committer.
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Called by the committer for each group, with the group's transaction ids, to add state
  // that must become durable atomically with the group's records (the feature state). Set
  // before the first Append.
  using Companion =
      std::function<void(absl::Span<const std::string> transaction_ids, KvWriteBatch& batch)>;
  void SetCompanion(Companion companion);

  // Appends "records" in order, contiguously. With wait (the default) returns once they are
  // durable, with their sequence numbers and leaf hashes; without, returns once they are queued
  // (an empty vector). Errors: kUnavailable after a failed write (and the records of a group
  // whose write failed), kResourceExhausted when the queue is full, kFailedPrecondition for a
  // read-only log. Records are never partially appended: a group is written whole or not.
  absl::StatusOr<std::vector<AppendedRecord>> Append(std::vector<PendingRecord> records,
                                                     bool wait = true);

  // Append's asynchronous form, for callers that must not hold a thread while a group syncs.
  // Returns at once: an error when the records are refused (as Append: the queue is full, the
  // log stopped or is read-only; on_durable is then never called), else OK, and on_durable is
  // called exactly once with what Append would have returned: the records' sequence numbers
  // and leaf hashes once they are durable, or the error of the group's failed write. It runs
  // on the log's notifier thread, after the group's sync and in the order of the appends
  // (while the next group is written), so it must be short, must not block, and must not call
  // the log: the records appended after it are released after it returns. An empty "records" is OK and calls on_durable at once, on this thread.
  using DurableFn = absl::AnyInvocable<void(absl::StatusOr<std::vector<AppendedRecord>>) &&>;
  absl::Status AppendThen(std::vector<PendingRecord> records, DurableFn on_durable);

  // Waits until everything queued before the call is durable (or the log failed). With
  // "with_state", the companion's state is written too even when no record is queued (a
  // checkpoint of that state that stays in the log's order of writes).
  absl::Status Flush(bool with_state = false);

  // OK while the log accepts appends; the error that stopped it otherwise.
  absl::Status health() const;

  // Seals the personal fields of the records to append now (RecordBodyFields::sealer); null
  // when the log writes records in the clear (no record_kek, or read-only). Encode a record
  // with the sealer current when it is encoded: a record sealed under a key the log replaced
  // since is still valid (its key is stored).
  std::shared_ptr<const RecordSealer> sealer() const;

  // The wrapped data key "data_key_id", if the log holds it.
  absl::StatusOr<std::optional<crypto::WrappedDataKey>> DataKey(
      std::string_view data_key_id) const;
  // Every wrapped data key, by id. kDataLoss naming the key when an entry does not parse.
  absl::StatusOr<std::vector<crypto::WrappedDataKey>> DataKeys() const;

  // Rotation of the key-encryption key: re-wraps every data key wrapped by "from" (which must
  // hold the private half) under "to", in one synced write; the records are not touched. Keys
  // already wrapped by "to" are left as they are (a rotation may be run again). Errors:
  // kFailedPrecondition naming a data key wrapped by neither key (nothing is written), or the
  // errors of crypto::RewrapSegmentKey; store errors. Returns the number of keys re-wrapped.
  // Run it on a log no process appends to, after configuring writers with "to".
  absl::StatusOr<uint64_t> RewrapDataKeys(const crypto::KeyEncryptionKey& from,
                                          const crypto::KeyEncryptionKey& to);

  const AuditLogHeader& header() const { return header_; }
  HashAlgorithm hash() const { return header_.hash; }
  // Durable records.
  uint64_t size() const;
  AuditLogStats stats() const;

  // The sequence of the record of "transaction_id", if the log holds one.
  absl::StatusOr<std::optional<uint64_t>> FindTransaction(std::string_view transaction_id) const;
  // The stored bytes of record "sequence" (kNotFound past the end).
  absl::StatusOr<std::string> ReadRecord(uint64_t sequence) const;
  // Calls fn(sequence, bytes) for the records from "from" in order, stopping at fn's error.
  // The sequence is the record's position in the store (its chunk's key plus its place in the
  // chunk), not what the record's bytes say. A chunk that cannot be read is kDataLoss, or,
  // with "on_damaged", reported there (its first position and why) and the walk continues
  // unless that returns an error.
  using RecordFn = std::function<absl::Status(uint64_t sequence, std::string_view bytes)>;
  using DamagedChunkFn = std::function<absl::Status(uint64_t first, std::string_view why)>;
  absl::Status ForEachRecord(uint64_t from, const RecordFn& fn,
                             const DamagedChunkFn& on_damaged = nullptr) const;

  // The newest signed tree head (kNotFound before the first).
  absl::StatusOr<SignedTreeHead> LatestTreeHead() const;
  // Every signed tree head, by size.
  absl::StatusOr<std::vector<SignedTreeHead>> TreeHeads() const;

  // RFC 9162 proofs over the durable tree.
  absl::StatusOr<std::vector<Hash>> InclusionProof(uint64_t sequence, uint64_t tree_size) const;
  absl::StatusOr<std::vector<Hash>> ConsistencyProof(uint64_t old_size, uint64_t new_size) const;
  absl::StatusOr<Hash> RootHash(uint64_t tree_size) const;
  // The tree's frontier at "tree_size", from the stored tree (to continue a walk from there).
  absl::StatusOr<MerkleFrontier> FrontierAt(uint64_t tree_size) const;
  // The stored leaf hash of record "sequence" (from the tree, not recomputed).
  absl::StatusOr<Hash> StoredLeafHash(uint64_t sequence) const;
  // Tile t of the tree's leaf level: the stored leaf hashes of records [256 t, 256 t + 256),
  // concatenated (fewer in the last tile). For sequential walks.
  absl::StatusOr<std::string> LeafTile(uint64_t tile_index) const;
  // The stored tree heads from key "from_size" on, as stored: (key, JSON), in key order; the
  // key should be its size.
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> StoredTreeHeads(
      uint64_t from_size = 0) const;
  // The chained head up to which the last check at start (log_tail_check.h) found the chain
  // of heads intact, so that the next one starts there: bounded work. Not evidence (the store
  // is writable): a later check trusts it only to skip what an earlier one checked.
  struct VerifiedHead {
    uint64_t index = 0;
    uint64_t size = 0;
    Hash hash{};  // TreeHeadHash
  };
  // None when not recorded (or not readable: the check then starts from the first head).
  absl::StatusOr<std::optional<VerifiedHead>> ReadVerifiedHead() const;
  // Records it (synced). Allowed on a log opened for reading: it touches nothing the log's
  // evidence is made of (audit_meta "verified").
  absl::Status WriteVerifiedHead(const VerifiedHead& head);
  // The head the log recorded with its last group: size and root (the tail not yet covered by
  // a signed tree head is checked against it).
  struct DurableHead {
    uint64_t size = 0;
    Hash root{};
  };
  absl::StatusOr<DurableHead> ReadDurableHead() const;

 private:
  class Tiles;
  struct Waiter;
  // Queues "waiter" (Append's and AppendThen's refusals).
  absl::Status Enqueue(std::shared_ptr<Waiter> waiter);

  AuditLog(KvStore* store, AuditLogOptions options, const Clock* clock);
  absl::Status Load(bool create);
  struct Staged;
  // The committer: gathers groups and builds them (sequence numbers, chain, tree, chunks,
  // tree heads, the companion's state) while the writer writes the one before.
  void Run();
  absl::Status Build(Staged& staged, bool with_state);
  // The writer: writes and syncs each built group, then hands its waiters to the notifier;
  // in build order, so the store receives the groups in sequence.
  void RunWriter();
  // The notifier: releases the waiters in the order appended (wakes Append, calls
  // AppendThen's on_durable), so that the writer starts the next sync meanwhile.
  void RunNotifier();
  bool TreeHeadDue(uint64_t size, UtcTime now) const;
  // A new data key: stored (synced) in Open, staged in "batch" when rotating; then current.
  absl::StatusOr<std::shared_ptr<const RecordSealer>> NewSealer();
  absl::Status StartSegment();
  absl::Status RotateIfDue(KvWriteBatch& batch);
  // Signs the next head of the chain (tree_head.h) and stages it in "batch".
  absl::Status SignAndStage(uint64_t size, const Hash& root, UtcTime now, KvWriteBatch& batch);
  // Takes up the chain after "latest", the newest stored head.
  absl::Status ContinueChain(const SignedTreeHead& latest);

  KvStore* const store_;
  const AuditLogOptions options_;
  const Clock* const clock_;  // null when read-only
  AuditLogHeader header_;
  bool has_keys_ = false;  // the store has the audit_keys family (set by Load)
  std::unique_ptr<Tiles> tiles_;

  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Waiter>> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<Staged>> staged_ ABSL_GUARDED_BY(mu_);  // built, not yet written
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // the writer is writing a cycle
  size_t queued_records_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t durable_size_ ABSL_GUARDED_BY(mu_) = 0;
  AuditLogStats stats_ ABSL_GUARDED_BY(mu_);
  Companion companion_;  // set before the first Append

  mutable absl::Mutex sealer_mu_;
  std::shared_ptr<const RecordSealer> sealer_ ABSL_GUARDED_BY(sealer_mu_);

  // The committer's own state (its thread only, after Load).
  std::unique_ptr<MerkleFrontier> frontier_;
  Hash last_leaf_{};
  uint64_t last_head_size_ = 0;
  UtcTime last_head_time_{};
  Hash last_head_hash_{};        // TreeHeadHash of the newest head
  uint64_t next_head_index_ = 0;
  uint64_t head_every_ = 1;      // the next head is due this many records after the last
  bool header_upgraded_ = false;  // a format 1 header was rewritten as format 2
  std::string scratch_;
  RecordChunkBuilder chunk_;  // reused across groups; empty between them

  absl::Mutex notify_mu_;
  std::vector<std::shared_ptr<Waiter>> notify_queue_ ABSL_GUARDED_BY(notify_mu_);
  bool notify_stop_ ABSL_GUARDED_BY(notify_mu_) = false;  // after the writer's last cycle

  std::thread writer_;
  std::thread notifier_;
  std::thread committer_;
};

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_AUDIT_LOG_H_
