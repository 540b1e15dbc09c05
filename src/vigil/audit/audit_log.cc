#include "vigil/audit/audit_log.h"

#include <pthread.h>

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/record_chunk.h"
#include "vigil/common/check.h"
#include "vigil/common/ids.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"
#include "vigil/store/kv_store.h"

namespace vigil::audit {
namespace {

constexpr char kRecords[] = "audit_records";
constexpr char kTree[] = "audit_tree";
constexpr char kHeads[] = "audit_heads";
constexpr char kIndex[] = "audit_index";
constexpr char kMeta[] = "audit_meta";
constexpr const char* kKeys = kAuditKeysFamily;

// Tiles hold the nodes of every eighth tree level: tile (k, t) holds the hashes of level 8k,
// nodes [256 t, 256 t + 256). A node of a level in between is hashed up from at most 128 of
// them, so any subtree costs one read and at most 127 node hashes.
constexpr int kTileHeight = 8;
constexpr uint64_t kTileWidth = uint64_t{1} << kTileHeight;
constexpr size_t kHashSize = sizeof(Hash);

// A chunk closes at this many records or payload bytes, whichever comes first: reading one
// record (an idempotent repeat, `vigil audit show`) decompresses at most this much, while a
// chunk is still large enough to compress well (decisions repeat across records, not within).
constexpr size_t kChunkMaxRecords = 256;
constexpr size_t kChunkMaxBytes = size_t{1} << 20;

// Groups built and waiting for the writer, at most.
constexpr size_t kMaxStaged = 2;
// Records queued from which the committer builds the next group while the writer still
// writes the last one (a chunk's worth).
constexpr size_t kBuildAheadRecords = kChunkMaxRecords;

using Json = nlohmann::ordered_json;

// The header format of a log whose tree heads are chained (tree_head.h). A log of format 1
// becomes format 2 with its first chained head, so that a build that predates chaining, which
// would append unchained heads, refuses to open it.
constexpr int kChainedFormat = 2;

std::string Be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

std::optional<uint64_t> ParseBe64(absl::string_view s) {
  if (s.size() != 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) v = v << 8 | static_cast<uint8_t>(c);
  return v;
}

std::string TileKey(int tile_level, uint64_t tile_index) {
  std::string key(1, static_cast<char>(tile_level));
  key += Be64(tile_index);
  return key;
}

Hash HashAt(absl::string_view hashes, size_t i) {
  Hash h;
  std::memcpy(h.data(), hashes.data() + i * kHashSize, kHashSize);
  return h;
}

absl::string_view AsView(const Hash& h) {
  return absl::string_view(reinterpret_cast<const char*>(h.data()), h.size());
}

std::string HeaderToJson(const AuditLogHeader& h) {
  Json j;
  j["format"] = h.format;
  j["log_id"] = h.log_id;
  j["hash"] = std::string(HashAlgorithmName(h.hash));
  j["created"] = FormatUtc(h.created);
  j["tile_height"] = kTileHeight;
  j["signature_algorithm"] = std::string(SignatureAlgorithmName(h.signature_algorithm));
  j["key_id"] = h.key_id;
  j["public_key"] = h.public_key_pem;
  return j.dump();
}

absl::StatusOr<AuditLogHeader> HeaderFromJson(absl::string_view text, const std::string& path) {
  const Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("audit log in ", path, ": header ", why));
  };
  if (j.is_discarded() || !j.is_object()) return bad("is not a JSON object");
  AuditLogHeader h;
  try {
    h.format = j.at("format").get<int>();
    if (h.format != 1 && h.format != kChainedFormat) {
      return absl::FailedPreconditionError(absl::StrCat(
          "audit log in ", path, ": format ", h.format, " (this build reads formats 1 and 2)"));
    }
    if (j.at("tile_height").get<int>() != kTileHeight) return bad("has another tile height");
    h.log_id = j.at("log_id").get<std::string>();
    absl::StatusOr<HashAlgorithm> hash = ParseHashAlgorithm(j.at("hash").get<std::string>());
    if (!hash.ok()) return bad(hash.status().message());
    h.hash = *hash;
    absl::StatusOr<UtcTime> created = ParseRfc3339(j.at("created").get<std::string>());
    if (!created.ok()) return bad(created.status().message());
    h.created = *created;
    absl::StatusOr<SignatureAlgorithm> sig =
        ParseSignatureAlgorithm(j.at("signature_algorithm").get<std::string>());
    if (!sig.ok()) return bad(sig.status().message());
    h.signature_algorithm = *sig;
    h.key_id = j.at("key_id").get<std::string>();
    h.public_key_pem = j.at("public_key").get<std::string>();
  } catch (const Json::exception& e) {
    return bad(e.what());
  }
  return h;
}

}  // namespace

std::vector<std::string> AuditColumnFamilies() {
  return {kRecords, kTree, kHeads, kIndex, kMeta, kKeys};
}

// ---------------------------------------------------------------------------------------------
// The tree's stored nodes.

class AuditLog::Tiles final : public SubtreeSource {
 public:
  Tiles(const KvStore* store, HashAlgorithm hash) : store_(store), hash_(hash) {}

  // Reads the store: what the last durable group wrote.
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override {
    const int base = level - level % kTileHeight;
    const int up = level - base;
    const uint64_t span = uint64_t{1} << up;
    const uint64_t first = index << up;  // first node at the base level
    absl::StatusOr<std::optional<std::string>> tile =
        store_->Get(kTree, TileKey(base / kTileHeight, first / kTileWidth));
    if (!tile.ok()) return tile.status();
    const size_t offset = first % kTileWidth;
    if (!tile->has_value() || (*tile)->size() < (offset + span) * kHashSize) {
      return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                              ": the tree node of level ", level, " index ", index,
                                              " is not stored"));
    }
    std::vector<Hash> nodes(span);
    for (uint64_t i = 0; i < span; ++i) nodes[i] = HashAt(**tile, offset + i);
    for (uint64_t width = span; width > 1; width /= 2) {
      for (uint64_t i = 0; i < width / 2; ++i) {
        nodes[i] = NodeHash(hash_, nodes[2 * i], nodes[2 * i + 1]);
      }
    }
    return nodes[0];
  }

  // Committer side: the partial tile of each tile level, for a tree of "size" leaves.
  absl::Status LoadPartial(uint64_t size) {
    partial_.clear();
    for (int k = 0; k * kTileHeight < 64 && (size >> (k * kTileHeight)) > 0; ++k) {
      const uint64_t count = size >> (k * kTileHeight);
      Partial& p = partial_.emplace_back();
      p.tile_index = count / kTileWidth;
      const size_t have = count % kTileWidth;
      if (have == 0) continue;
      absl::StatusOr<std::optional<std::string>> tile =
          store_->Get(kTree, TileKey(k, p.tile_index));
      if (!tile.ok()) return tile.status();
      if (!tile->has_value() || (*tile)->size() < have * kHashSize) {
        return absl::DataLossError(absl::StrCat("audit log in ", store_->path(), ": tile ", k, "/",
                                                p.tile_index, " holds fewer than the ", have,
                                                " hashes a log of ", size, " records needs"));
      }
      p.hashes = (*tile)->substr(0, have * kHashSize);
    }
    return absl::OkStatus();
  }

  // A completed node of a tiled level (level % kTileHeight == 0), in index order.
  void Add(int level, uint64_t index, const Hash& hash) {
    const size_t k = static_cast<size_t>(level / kTileHeight);
    if (partial_.size() <= k) partial_.resize(k + 1);
    Partial& p = partial_[k];
    if (p.hashes.size() == kTileWidth * kHashSize) {
      if (p.touched) full_.emplace_back(TileKey(static_cast<int>(k), p.tile_index), p.hashes);
      p.hashes.clear();
      p.touched = false;
      ++p.tile_index;
    }
    VIGIL_DCHECK(index == p.tile_index * kTileWidth + p.hashes.size() / kHashSize);
    p.hashes.append(reinterpret_cast<const char*>(hash.data()), hash.size());
    p.touched = true;
  }

  // Puts the tiles changed since the last Stage into "batch".
  void Stage(KvWriteBatch& batch) {
    for (const auto& [key, value] : full_) batch.Put(kTree, key, value);
    full_.clear();
    for (size_t k = 0; k < partial_.size(); ++k) {
      Partial& p = partial_[k];
      if (!p.touched) continue;
      batch.Put(kTree, TileKey(static_cast<int>(k), p.tile_index), p.hashes);
      p.touched = false;
    }
  }

 private:
  struct Partial {
    uint64_t tile_index = 0;
    std::string hashes;  // the tile's hashes so far
    bool touched = false;
  };

  const KvStore* const store_;
  const HashAlgorithm hash_;
  std::vector<Partial> partial_;  // by tile level
  std::vector<std::pair<std::string, std::string>> full_;  // filled since the last Stage
};

// ---------------------------------------------------------------------------------------------

struct AuditLog::Waiter {
  std::vector<PendingRecord> records;
  bool with_state = false;  // Flush(true): write the companion's state even without records
  size_t bytes = 0;
  absl::Notification done;
  absl::Status status;
  std::vector<AppendedRecord> results;
  // AppendThen: called with the outcome instead of notifying "done".
  DurableFn on_durable;
};

AuditLog::AuditLog(KvStore* store, AuditLogOptions options, const Clock* clock)
    : store_(store),
      options_(std::move(options)),
      clock_(clock),
      chunk_(options_.compress_records ? ChunkCodec::kLz4 : ChunkCodec::kStored) {}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(KvStore* store, AuditLogOptions options,
                                                         const Clock& clock) {
  if (options.signer == nullptr) {
    return absl::InvalidArgumentError("audit log: a signing key is required (audit.signing_key)");
  }
  if (options.group_max_records == 0 || options.tree_head_every_records == 0 ||
      options.max_queued_records == 0 || options.records_per_data_key == 0) {
    return absl::InvalidArgumentError(
        "audit log: group_max_records, tree_head_every_records, max_queued_records and "
        "records_per_data_key must be positive");
  }
  std::unique_ptr<AuditLog> log(new AuditLog(store, std::move(options), &clock));
  if (absl::Status s = log->Load(/*create=*/true); !s.ok()) return s;
  if (log->options_.record_kek != nullptr) {
    if (absl::Status s = log->StartSegment(); !s.ok()) return s;
  }
  // Named for top -H and profilers.
  log->writer_ = std::thread([raw = log.get()] {
    pthread_setname_np(pthread_self(), "vigil-audit-w");
    raw->RunWriter();
  });
  log->notifier_ = std::thread([raw = log.get()] {
    pthread_setname_np(pthread_self(), "vigil-audit-n");
    raw->RunNotifier();
  });
  log->committer_ = std::thread([raw = log.get()] {
    pthread_setname_np(pthread_self(), "vigil-audit");
    raw->Run();
  });
  return log;
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::OpenForReading(KvStore* store) {
  std::unique_ptr<AuditLog> log(new AuditLog(store, AuditLogOptions{}, nullptr));
  if (absl::Status s = log->Load(/*create=*/false); !s.ok()) return s;
  return log;
}

absl::Status AuditLog::Load(bool create) {
  const std::string& path = store_->path();
  KvWriteBatch opening;  // a new log's header and first head
  bool write_opening = false;
  absl::StatusOr<std::optional<std::string>> header = store_->Get(kMeta, "header");
  if (!header.ok()) return header.status();
  if (!header->has_value()) {
    absl::StatusOr<std::unique_ptr<KvIterator>> it = store_->NewIterator(kRecords);
    if (!it.ok()) return it.status();
    (*it)->SeekToFirst();
    if ((*it)->Valid()) {
      return absl::DataLossError(
          absl::StrCat("audit log in ", path, ": records without a header (the header was removed)"));
    }
    if (!create) return absl::NotFoundError(absl::StrCat("no audit log in ", path));
    header_.log_id = UuidV7Generator(*clock_, std::random_device{}()).Next().ToString();
    header_.hash = options_.hash;
    header_.created = clock_->Now();
    header_.signature_algorithm = options_.signer->algorithm();
    header_.key_id = options_.signer->key_id();
    header_.public_key_pem = options_.signer->PublicKeyPem();
    header_.format = kChainedFormat;
    // Written with the first head (below), in one synced batch.
    opening.Put(kMeta, "header", HeaderToJson(header_));
    write_opening = true;
  } else {
    absl::StatusOr<AuditLogHeader> parsed = HeaderFromJson(**header, path);
    if (!parsed.ok()) return parsed.status();
    header_ = *std::move(parsed);
    if (options_.signer != nullptr && options_.signer->key_id() != header_.key_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "audit log in ", path, " is signed with key ", header_.key_id.substr(0, 16),
          "…, but the configured audit.signing_key is ", options_.signer->key_id().substr(0, 16),
          "…: configure the log's key"));
    }
  }
  {
    const std::vector<std::string> families = store_->ColumnFamilies();
    has_keys_ = std::find(families.begin(), families.end(), kKeys) != families.end();
  }
  tiles_ = std::make_unique<Tiles>(store_, header_.hash);
  absl::StatusOr<DurableHead> head = ReadDurableHead();
  if (!head.ok()) return head.status();
  absl::StatusOr<MerkleFrontier> frontier = MerkleFrontier::Restore(header_.hash, *tiles_, head->size);
  if (!frontier.ok()) return frontier.status();
  if (frontier->Root() != head->root) {
    return absl::DataLossError(absl::StrCat(
        "audit log in ", path, ": the stored tree's root at size ", head->size,
        " differs from the recorded head; run `vigil audit verify`"));
  }
  frontier_ = std::make_unique<MerkleFrontier>(*std::move(frontier));
  if (head->size > 0) {
    absl::StatusOr<Hash> last = StoredLeafHash(head->size - 1);
    if (!last.ok()) return last.status();
    last_leaf_ = *last;
  }
  absl::StatusOr<SignedTreeHead> latest = LatestTreeHead();
  if (latest.ok() && clock_ == nullptr) {
    last_head_size_ = latest->size;  // read-only: no chain to continue
    last_head_time_ = latest->time;
  } else if (latest.ok()) {
    VIGIL_RETURN_IF_ERROR(ContinueChain(*latest));
  } else if (!absl::IsNotFound(latest.status())) {
    return latest.status();
  } else if (clock_ != nullptr) {
    // No head yet: the first one, of size 0, signed now, so that a chained log always has
    // one (a log without any is one whose heads were removed). The interval runs from now.
    VIGIL_RETURN_IF_ERROR(SignAndStage(0, EmptyRootHash(header_.hash), clock_->Now(), opening));
    write_opening = true;
  }
  if (write_opening) VIGIL_RETURN_IF_ERROR(store_->Write(opening, {.sync = true}));
  if (clock_ != nullptr) {
    if (absl::Status s = tiles_->LoadPartial(head->size); !s.ok()) return s;
  }
  absl::MutexLock lock(&mu_);
  durable_size_ = head->size;
  return absl::OkStatus();
}

AuditLog::~AuditLog() {
  if (!committer_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  committer_.join();
  writer_.join();    // it stops after the committer's last group
  notifier_.join();  // and it after the writer's last waiters
}

void AuditLog::SetCompanion(Companion companion) { companion_ = std::move(companion); }

absl::StatusOr<std::vector<AppendedRecord>> AuditLog::Append(std::vector<PendingRecord> records,
                                                             bool wait) {
  if (records.empty() && clock_ != nullptr) return std::vector<AppendedRecord>();
  auto waiter = std::make_shared<Waiter>();
  waiter->records = std::move(records);
  VIGIL_RETURN_IF_ERROR(Enqueue(waiter));
  if (!wait) return std::vector<AppendedRecord>();
  waiter->done.WaitForNotification();
  if (!waiter->status.ok()) return waiter->status;
  return std::move(waiter->results);
}

absl::Status AuditLog::AppendThen(std::vector<PendingRecord> records, DurableFn on_durable) {
  if (records.empty() && clock_ != nullptr) {
    std::move(on_durable)(std::vector<AppendedRecord>());
    return absl::OkStatus();
  }
  auto waiter = std::make_shared<Waiter>();
  waiter->records = std::move(records);
  waiter->on_durable = std::move(on_durable);
  return Enqueue(std::move(waiter));
}

absl::Status AuditLog::Enqueue(std::shared_ptr<Waiter> waiter) {
  if (clock_ == nullptr) {
    return absl::FailedPreconditionError("audit log opened read-only: nothing can be appended");
  }
  for (const PendingRecord& r : waiter->records) {
    waiter->bytes += r.body.size() + r.transaction_id.size();
  }
  const size_t n = waiter->records.size();
  absl::MutexLock lock(&mu_);
  if (!failed_.ok()) {
    stats_.refused += n;
    return absl::UnavailableError(
        absl::StrCat("audit log stopped after a failed write: ", failed_.message()));
  }
  if (stopping_) return absl::UnavailableError("audit log is closing");
  if (queued_records_ + n > options_.max_queued_records) {
    stats_.refused += n;
    return absl::ResourceExhaustedError(
        absl::StrCat("audit log queue full: ", queued_records_, " records wait to be written (",
                     "limit ", options_.max_queued_records, ")"));
  }
  queue_.push_back(std::move(waiter));
  queued_records_ += n;
  return absl::OkStatus();
}

absl::Status AuditLog::Flush(bool with_state) {
  // An empty waiter queued behind everything else is notified after it.
  auto waiter = std::make_shared<Waiter>();
  waiter->with_state = with_state;
  {
    absl::MutexLock lock(&mu_);
    if (!failed_.ok()) return absl::UnavailableError(absl::StrCat("audit log stopped after a failed write: ", failed_.message()));
    if (clock_ == nullptr) return absl::OkStatus();
    queue_.push_back(waiter);
  }
  waiter->done.WaitForNotification();
  return waiter->status;
}

absl::Status AuditLog::health() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

std::shared_ptr<const RecordSealer> AuditLog::sealer() const {
  absl::MutexLock lock(&sealer_mu_);
  return sealer_;
}

absl::StatusOr<std::shared_ptr<const RecordSealer>> AuditLog::NewSealer() {
  absl::StatusOr<std::unique_ptr<RecordSealer>> sealer =
      RecordSealer::Create(options_.record_suite, *options_.record_kek);
  if (!sealer.ok()) {
    return absl::Status(sealer.status().code(),
                        absl::StrCat("audit log: cannot make a data key under key-encryption key ",
                                     options_.record_kek->key_id(), ": ",
                                     sealer.status().message()));
  }
  return std::shared_ptr<const RecordSealer>(*std::move(sealer));
}

absl::Status AuditLog::StartSegment() {
  absl::StatusOr<std::shared_ptr<const RecordSealer>> next = NewSealer();
  if (!next.ok()) return next.status();
  const crypto::WrappedDataKey& wrapped = (*next)->wrapped_key();
  // Durable before any record is sealed with it: a record whose key is lost can never be read.
  if (absl::Status s = store_->Put(kKeys, wrapped.id, wrapped.ToJson(), {.sync = true}); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("audit log: cannot store data key ", wrapped.id,
                                               " in ", kKeys, ": ", s.message()));
  }
  {
    absl::MutexLock lock(&mu_);
    ++stats_.data_keys;
  }
  absl::MutexLock lock(&sealer_mu_);
  sealer_ = *std::move(next);
  return absl::OkStatus();
}

// The new key goes into this group's batch. It is used at once, by records encoded from now
// on; those are appended after this group and so written after it (the writer writes groups
// in order and none after a failed one): the key is durable no later than the first record
// sealed with it.
absl::Status AuditLog::RotateIfDue(KvWriteBatch& batch) {
  if (options_.record_kek == nullptr) return absl::OkStatus();
  const std::shared_ptr<const RecordSealer> current = sealer();
  if (current != nullptr && current->records() < options_.records_per_data_key) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const RecordSealer>> next = NewSealer();
  if (!next.ok()) return next.status();
  const crypto::WrappedDataKey& wrapped = (*next)->wrapped_key();
  batch.Put(kKeys, wrapped.id, wrapped.ToJson());
  {
    absl::MutexLock lock(&mu_);
    ++stats_.data_keys;
  }
  absl::MutexLock lock(&sealer_mu_);
  sealer_ = *std::move(next);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<crypto::WrappedDataKey>> AuditLog::DataKey(
    std::string_view data_key_id) const {
  if (!has_keys_) return std::optional<crypto::WrappedDataKey>();
  absl::StatusOr<std::optional<std::string>> v = store_->Get(kKeys, ToAbsl(data_key_id));
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<crypto::WrappedDataKey>();
  absl::StatusOr<crypto::WrappedDataKey> wrapped = crypto::WrappedDataKey::FromJson(**v);
  if (!wrapped.ok() || wrapped->id != data_key_id) {
    return absl::DataLossError(absl::StrCat(
        "audit log in ", store_->path(), ": the stored data key ", ToAbsl(data_key_id),
        " is damaged: ",
        wrapped.ok() ? absl::StrCat("it names itself ", wrapped->id) : wrapped.status().message()));
  }
  return std::optional<crypto::WrappedDataKey>(*std::move(wrapped));
}

absl::StatusOr<std::vector<crypto::WrappedDataKey>> AuditLog::DataKeys() const {
  std::vector<crypto::WrappedDataKey> keys;
  if (!has_keys_) return keys;
  const absl::Status s =
      store_->ForEach(kKeys, "", [&](absl::string_view key, absl::string_view value) {
        absl::StatusOr<crypto::WrappedDataKey> wrapped = crypto::WrappedDataKey::FromJson(ToStd(value));
        if (!wrapped.ok() || wrapped->id != key) {
          return absl::DataLossError(absl::StrCat(
              "audit log in ", store_->path(), ": the stored data key ", key, " is damaged: ",
              wrapped.ok() ? absl::StrCat("it names itself ", wrapped->id)
                           : std::string(wrapped.status().message())));
        }
        keys.push_back(*std::move(wrapped));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return keys;
}

absl::StatusOr<uint64_t> AuditLog::RewrapDataKeys(const crypto::KeyEncryptionKey& from,
                                                  const crypto::KeyEncryptionKey& to) {
  absl::StatusOr<std::vector<crypto::WrappedDataKey>> keys = DataKeys();
  if (!keys.ok()) return keys.status();
  KvWriteBatch batch;
  uint64_t rewrapped = 0;
  for (const crypto::WrappedDataKey& key : *keys) {
    if (key.kek_id == to.key_id()) continue;
    if (key.kek_id != from.key_id()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "data key ", key.id, " is wrapped by key-encryption key ", key.kek_id,
          ", neither the old key (", from.key_id(), ") nor the new one (", to.key_id(),
          "); nothing was re-wrapped"));
    }
    absl::StatusOr<crypto::WrappedDataKey> next = crypto::RewrapSegmentKey(key, from, to);
    if (!next.ok()) {
      return absl::Status(next.status().code(),
                          absl::StrCat("data key ", key.id, ": ", next.status().message(),
                                       "; nothing was re-wrapped"));
    }
    batch.Put(kKeys, next->id, next->ToJson());
    ++rewrapped;
  }
  if (rewrapped > 0) {
    if (absl::Status s = store_->Write(batch, {.sync = true}); !s.ok()) return s;
  }
  return rewrapped;
}

uint64_t AuditLog::size() const {
  absl::MutexLock lock(&mu_);
  return durable_size_;
}

AuditLogStats AuditLog::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool AuditLog::TreeHeadDue(uint64_t size, UtcTime now) const {
  if (size <= last_head_size_) return false;
  return size - last_head_size_ >= head_every_ ||
         now - last_head_time_ >= options_.tree_head_interval;
}

absl::Status AuditLog::ContinueChain(const SignedTreeHead& latest) {
  last_head_size_ = latest.size;
  last_head_time_ = latest.time;
  last_head_hash_ = TreeHeadHash(latest);
  head_every_ = options_.tree_head_every_records;
  if (latest.chain.has_value()) {
    next_head_index_ = latest.chain->index + 1;
    // The newest head promised its successor within its "every": kept even when this process
    // was configured with a larger one.
    head_every_ = std::min(head_every_, latest.chain->every_records);
    return absl::OkStatus();
  }
  // Format 1 heads: the chain goes on from their number.
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> stored = StoredTreeHeads();
  if (!stored.ok()) return stored.status();
  next_head_index_ = stored->size();
  return absl::OkStatus();
}

absl::Status AuditLog::SignAndStage(uint64_t size, const Hash& root, UtcTime now,
                                    KvWriteBatch& batch) {
  SignedTreeHead head;
  head.log_id = header_.log_id;
  head.hash = header_.hash;
  head.size = size;
  head.root = root;
  head.time = now;
  TreeHeadChain& chain = head.chain.emplace();
  chain.index = next_head_index_;
  if (next_head_index_ > 0) chain.previous = last_head_hash_;
  chain.every_records = options_.tree_head_every_records;
  chain.interval_ms = options_.tree_head_interval.count();
  if (absl::Status s = SignTreeHead(*options_.signer, head); !s.ok()) return s;
  batch.Put(kHeads, Be64(size), TreeHeadToJson(head));
  if (header_.format < kChainedFormat && !header_upgraded_) {
    AuditLogHeader upgraded = header_;  // header_ stays as read: other threads read it
    upgraded.format = kChainedFormat;
    batch.Put(kMeta, "header", HeaderToJson(upgraded));
    header_upgraded_ = true;
  }
  last_head_size_ = size;
  last_head_time_ = now;
  last_head_hash_ = TreeHeadHash(head);
  ++next_head_index_;
  head_every_ = options_.tree_head_every_records;
  return absl::OkStatus();
}

// A built group on its way to the store: the batch and who waits for it. The writer handles
// them in the order the committer built them.
struct AuditLog::Staged {
  std::vector<std::shared_ptr<Waiter>> waiters;
  KvWriteBatch batch;
  bool write = false;    // false: nothing to write; the waiters are released in turn
  absl::Status status;   // a failure while building (signing): nothing of it is written
  uint64_t size = 0;     // the log's size once written
  uint64_t records = 0;
  uint64_t signed_heads = 0;
  bool last = false;     // the committer stopped: the writer stops after this one
};

void AuditLog::Run() {
  std::vector<std::shared_ptr<Waiter>> group;
  for (;;) {
    group.clear();
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      // A group is built when the writer is idle, or ahead of it (while it syncs the one
      // before) once enough records wait to make that pay. Small groups are not built ahead:
      // records that arrive during a sync then join one group written by the next sync,
      // instead of being spread over several (more writes, each rewriting the tree's partial
      // tiles), and a lone decision waits for one sync, not two.
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> bool {
        return stopping_ ||
               (!queue_.empty() && ((!writing_ && staged_.empty()) ||
                                    queued_records_ >= kBuildAheadRecords));
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready),
                           absl::FromChrono(options_.tree_head_interval));
      if (options_.group_max_delay.count() > 0 && !stopping_ &&
          queued_records_ < options_.group_max_records) {
        auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> bool {
          return queued_records_ >= options_.group_max_records || stopping_;
        };
        mu_.AwaitWithTimeout(absl::Condition(&full), absl::FromChrono(options_.group_max_delay));
      }
      size_t records = 0, bytes = 0;
      while (!queue_.empty()) {
        const Waiter& next = *queue_.front();
        if (!group.empty() && (records + next.records.size() > options_.group_max_records ||
                               bytes + next.bytes > options_.group_max_bytes)) {
          break;
        }
        records += next.records.size();
        bytes += next.bytes;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      queued_records_ -= records;
      stop = stopping_ && queue_.empty();
    }
    auto staged = std::make_unique<Staged>();
    staged->waiters = std::move(group);
    staged->last = stop;
    if (health().ok()) {
      bool has_records = false, with_state = false;
      for (const auto& w : staged->waiters) {
        has_records = has_records || !w->records.empty();
        with_state = with_state || w->with_state;
      }
      if (has_records || (with_state && companion_) ||
          (stop && frontier_->size() > last_head_size_) ||
          TreeHeadDue(frontier_->size(), clock_->Now())) {
        staged->status = Build(*staged, with_state);
        staged->write = staged->status.ok();
      }
    }
    // At most kMaxStaged groups wait for the writer: memory stays bounded, and records that
    // arrive meanwhile gather into the next group.
    {
      absl::MutexLock lock(&mu_);
      auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> bool {
        return staged_.size() < kMaxStaged;
      };
      mu_.Await(absl::Condition(&room));
      staged_.push_back(std::move(staged));
    }
    if (stop) return;
  }
}

void AuditLog::RunWriter() {
  std::vector<std::shared_ptr<Waiter>> released;  // waiters of a cycle, for the notifier
  for (;;) {
    // Everything built meanwhile, written with one sync: the groups built while the last
    // fsync ran cost one more fsync, not one each.
    std::vector<std::unique_ptr<Staged>> cycle;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> bool {
        return !staged_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      while (!staged_.empty()) {
        cycle.push_back(std::move(staged_.front()));
        staged_.pop_front();
      }
      writing_ = true;
    }
    // The groups before the first that failed to build are written; that one and those after
    // it are not.
    size_t buildable = 0;
    while (buildable < cycle.size() && cycle[buildable]->status.ok()) ++buildable;
    const absl::Status earlier = health();
    absl::Status written;
    if (earlier.ok()) {
      size_t last_write = buildable;
      for (size_t i = 0; i < buildable; ++i) {
        if (cycle[i]->write) last_write = i;
      }
      const auto start = std::chrono::steady_clock::now();
      uint64_t groups = 0, records = 0, heads = 0, size = 0, bytes = 0;
      for (size_t i = 0; i < buildable && written.ok(); ++i) {
        const Staged& s = *cycle[i];
        if (!s.write) continue;
        // Only the last write syncs: the write-ahead log is sequential, so its sync makes the
        // writes before it durable too (and no group is acknowledged before it returns).
        written = store_->Write(s.batch, {.sync = options_.sync && i == last_write});
        ++groups;
        bytes += s.batch.ApproximateSize();
        records += s.records;
        heads += s.signed_heads;
        size = s.size;
      }
      const auto elapsed = std::chrono::steady_clock::now() - start;
      const absl::Status failure = !written.ok()              ? written
                                   : buildable < cycle.size() ? cycle[buildable]->status
                                                              : absl::OkStatus();
      absl::MutexLock lock(&mu_);
      stats_.write_time += elapsed;
      if (written.ok() && groups > 0) {
        durable_size_ = size;
        stats_.records += records;
        stats_.groups += groups;
        stats_.tree_heads += heads;
        stats_.bytes_written += bytes;
        if (options_.sync) ++stats_.syncs;
      }
      if (!failure.ok()) {
        failed_ = failure;
        ++stats_.failed_writes;
      }
    }
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
    }
    bool last = false;
    for (size_t i = 0; i < cycle.size(); ++i) {
      Staged& s = *cycle[i];
      last = last || s.last;
      absl::Status status;
      if (!earlier.ok()) {
        status = absl::UnavailableError(
            absl::StrCat("audit log stopped after a failed write: ", earlier.message()));
      } else if (!written.ok() || i >= buildable) {
        status = absl::UnavailableError(
            absl::StrCat("audit log write failed, nothing of this group was recorded: ",
                         (!written.ok() ? written : cycle[buildable]->status).message()));
      }
      for (auto& w : s.waiters) {
        if (!status.ok()) {
          w->status = status;
          w->results.clear();
        }
      }
      released.insert(released.end(), std::make_move_iterator(s.waiters.begin()),
                      std::make_move_iterator(s.waiters.end()));
    }
    {
      absl::MutexLock lock(&notify_mu_);
      notify_queue_.insert(notify_queue_.end(), std::make_move_iterator(released.begin()),
                           std::make_move_iterator(released.end()));
      if (last) notify_stop_ = true;
    }
    released.clear();
    if (last) return;
  }
}

void AuditLog::RunNotifier() {
  std::vector<std::shared_ptr<Waiter>> batch;
  for (;;) {
    bool stop = false;
    {
      absl::MutexLock lock(&notify_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(notify_mu_) -> bool {
        return !notify_queue_.empty() || notify_stop_;
      };
      notify_mu_.Await(absl::Condition(&ready));
      batch.swap(notify_queue_);
      stop = notify_stop_;
    }
    for (auto& w : batch) {
      if (w->on_durable) {
        DurableFn on_durable = std::move(w->on_durable);
        if (w->status.ok()) {
          std::move(on_durable)(std::move(w->results));
        } else {
          std::move(on_durable)(w->status);
        }
      } else {
        w->done.Notify();
      }
    }
    batch.clear();
    if (stop) return;
  }
}

absl::Status AuditLog::Build(Staged& staged, bool with_state) {
  KvWriteBatch& batch = staged.batch;
  std::vector<std::string> ids;
  uint64_t sequence = frontier_->size();
  auto add_node = [this](int level, uint64_t index, const Hash& hash) {
    if (level % kTileHeight == 0) tiles_->Add(level, index, hash);
  };
  // One builder, reused: a chunk is compressed and staged as soon as it is full.
  uint64_t chunk_first = sequence;
  const auto close_chunk = [&] { batch.Put(kRecords, Be64(chunk_first), chunk_.Finish()); };
  for (auto& w : staged.waiters) {
    w->results.reserve(w->records.size());
    for (PendingRecord& r : w->records) {
      if (chunk_.records() >= kChunkMaxRecords || chunk_.payload_bytes() >= kChunkMaxBytes) {
        close_chunk();
      }
      if (chunk_.records() == 0) chunk_first = sequence;
      scratch_.clear();
      AppendAssembledRecord(sequence, last_leaf_, r.body, &scratch_);
      const Hash leaf = LeafHash(header_.hash, scratch_);
      chunk_.Add(scratch_);
      // An event record (no transaction id) is in the chain and the tree, not the index.
      if (!r.transaction_id.empty()) batch.Put(kIndex, r.transaction_id, Be64(sequence));
      frontier_->Append(leaf, add_node);
      w->results.push_back({sequence, leaf});
      last_leaf_ = leaf;
      ++sequence;
      // Exactly every head_every_ records (also inside a large group), so that the heads'
      // spacing is a bound an examiner can check: one compare per record, a root per head.
      if (sequence - last_head_size_ >= head_every_) {
        VIGIL_RETURN_IF_ERROR(SignAndStage(sequence, frontier_->Root(), clock_->Now(), batch));
        ++staged.signed_heads;
      }
      if (!r.transaction_id.empty()) ids.push_back(std::move(r.transaction_id));
      std::string().swap(r.body);
    }
  }
  if (chunk_.records() > 0) close_chunk();
  tiles_->Stage(batch);
  const Hash root = frontier_->Root();
  batch.Put(kMeta, "head", Be64(sequence) + std::string(AsView(root)));
  const UtcTime now = clock_->Now();
  bool closing;
  {
    absl::MutexLock lock(&mu_);
    closing = stopping_ && queue_.empty();
  }
  if (TreeHeadDue(sequence, now) || (closing && sequence > last_head_size_)) {
    if (absl::Status s = SignAndStage(sequence, root, now, batch); !s.ok()) return s;
    ++staged.signed_heads;
  }
  if (companion_ && (!ids.empty() || with_state)) companion_(ids, batch);
  if (absl::Status s = RotateIfDue(batch); !s.ok()) return s;
  staged.size = sequence;
  staged.records = ids.size();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint64_t>> AuditLog::FindTransaction(
    std::string_view transaction_id) const {
  absl::StatusOr<std::optional<std::string>> v = store_->Get(kIndex, ToAbsl(transaction_id));
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<uint64_t>();
  std::optional<uint64_t> sequence = ParseBe64(**v);
  if (!sequence.has_value()) {
    return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                            ": the index entry of transaction \"",
                                            ToAbsl(transaction_id), "\" is damaged"));
  }
  return sequence;
}

absl::StatusOr<std::string> AuditLog::ReadRecord(uint64_t sequence) const {
  absl::StatusOr<std::unique_ptr<KvIterator>> it = store_->NewIterator(kRecords);
  if (!it.ok()) return it.status();
  (*it)->SeekForPrev(Be64(sequence));
  if (!(*it)->Valid()) {
    if (absl::Status s = (*it)->status(); !s.ok()) return s;
    return absl::NotFoundError(absl::StrCat("audit log in ", store_->path(), ": no record ",
                                            sequence));
  }
  const std::optional<uint64_t> first = ParseBe64((*it)->key());
  if (!first.has_value()) {
    return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                            ": a record chunk's key is not a sequence number"));
  }
  absl::StatusOr<RecordChunk> chunk = RecordChunk::Parse(ToStd((*it)->value()));
  if (!chunk.ok()) {
    return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                            ": the chunk of records from ", *first,
                                            " is damaged: ", chunk.status().message()));
  }
  if (sequence - *first >= chunk->size()) {
    return absl::NotFoundError(absl::StrCat("audit log in ", store_->path(), ": no record ",
                                            sequence));
  }
  return std::string(chunk->record(sequence - *first));
}

absl::Status AuditLog::ForEachRecord(uint64_t from, const RecordFn& fn,
                                     const DamagedChunkFn& on_damaged) const {
  absl::StatusOr<std::unique_ptr<KvIterator>> it = store_->NewIterator(kRecords);
  if (!it.ok()) return it.status();
  KvIterator& i = **it;
  i.SeekForPrev(Be64(from));  // the chunk that holds "from"
  if (!i.Valid()) {
    if (absl::Status s = i.status(); !s.ok()) return s;
    i.Seek(Be64(from));
  }
  for (; i.Valid(); i.Next()) {
    const std::optional<uint64_t> first = ParseBe64(i.key());
    if (!first.has_value()) {
      return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                              ": a record chunk's key is not a sequence number"));
    }
    absl::StatusOr<RecordChunk> chunk = RecordChunk::Parse(ToStd(i.value()));
    if (!chunk.ok()) {
      if (on_damaged == nullptr) {
        return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                                ": the chunk of records from ", *first,
                                                " is damaged: ", chunk.status().message()));
      }
      if (absl::Status s = on_damaged(*first, ToStd(chunk.status().message())); !s.ok()) return s;
      continue;
    }
    for (size_t k = 0; k < chunk->size(); ++k) {
      if (*first + k < from) continue;
      if (absl::Status s = fn(*first + k, chunk->record(k)); !s.ok()) return s;
    }
  }
  return i.status();
}

absl::StatusOr<SignedTreeHead> AuditLog::LatestTreeHead() const {
  absl::StatusOr<std::unique_ptr<KvIterator>> it = store_->NewIterator(kHeads);
  if (!it.ok()) return it.status();
  (*it)->SeekToLast();
  if (!(*it)->Valid()) {
    if (absl::Status s = (*it)->status(); !s.ok()) return s;
    return absl::NotFoundError(absl::StrCat("audit log in ", store_->path(),
                                            " has no signed tree head yet"));
  }
  absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(ToStd((*it)->value()));
  if (!head.ok()) {
    return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                            ": damaged tree head: ", head.status().message()));
  }
  return head;
}

absl::StatusOr<std::vector<SignedTreeHead>> AuditLog::TreeHeads() const {
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> stored = StoredTreeHeads();
  if (!stored.ok()) return stored.status();
  std::vector<SignedTreeHead> heads;
  heads.reserve(stored->size());
  for (const auto& [size, json] : *stored) {
    absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(json);
    if (!head.ok()) {
      return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                              ": damaged tree head: ", head.status().message()));
    }
    heads.push_back(*std::move(head));
  }
  return heads;
}

absl::StatusOr<std::vector<Hash>> AuditLog::InclusionProof(uint64_t sequence,
                                                           uint64_t tree_size) const {
  if (tree_size > size()) {
    return absl::InvalidArgumentError(absl::StrCat("tree size ", tree_size, " is beyond the log's ",
                                                   size(), " durable records"));
  }
  return audit::InclusionProof(header_.hash, *tiles_, sequence, tree_size);
}

absl::StatusOr<std::vector<Hash>> AuditLog::ConsistencyProof(uint64_t old_size,
                                                             uint64_t new_size) const {
  if (new_size > size()) {
    return absl::InvalidArgumentError(absl::StrCat("tree size ", new_size, " is beyond the log's ",
                                                   size(), " durable records"));
  }
  return audit::ConsistencyProof(header_.hash, *tiles_, old_size, new_size);
}

absl::StatusOr<Hash> AuditLog::RootHash(uint64_t tree_size) const {
  return audit::RootHash(header_.hash, *tiles_, tree_size);
}

absl::StatusOr<MerkleFrontier> AuditLog::FrontierAt(uint64_t tree_size) const {
  return MerkleFrontier::Restore(header_.hash, *tiles_, tree_size);
}

absl::StatusOr<Hash> AuditLog::StoredLeafHash(uint64_t sequence) const {
  return tiles_->Subtree(0, sequence);
}

absl::StatusOr<std::string> AuditLog::LeafTile(uint64_t tile_index) const {
  absl::StatusOr<std::optional<std::string>> tile = store_->Get(kTree, TileKey(0, tile_index));
  if (!tile.ok()) return tile.status();
  if (!tile->has_value()) return std::string();
  return **std::move(tile);
}

absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> AuditLog::StoredTreeHeads(
    uint64_t from_size) const {
  std::vector<std::pair<uint64_t, std::string>> heads;
  absl::StatusOr<std::unique_ptr<KvIterator>> it = store_->NewIterator(kHeads);
  if (!it.ok()) return it.status();
  KvIterator& i = **it;
  for (i.Seek(Be64(from_size)); i.Valid(); i.Next()) {
    const std::optional<uint64_t> size = ParseBe64(i.key());
    if (!size.has_value()) {
      return absl::DataLossError(absl::StrCat("audit log in ", store_->path(),
                                              ": a tree head key is not a tree size"));
    }
    heads.emplace_back(*size, std::string(i.value()));
  }
  if (absl::Status s = i.status(); !s.ok()) return s;
  return heads;
}

absl::StatusOr<std::optional<AuditLog::VerifiedHead>> AuditLog::ReadVerifiedHead() const {
  absl::StatusOr<std::optional<std::string>> v = store_->Get(kMeta, "verified");
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<VerifiedHead>();
  const std::string& bytes = **v;
  if (bytes.size() != 16 + kHashSize) return std::optional<VerifiedHead>();  // checked afresh
  VerifiedHead head;
  head.index = *ParseBe64(absl::string_view(bytes).substr(0, 8));
  head.size = *ParseBe64(absl::string_view(bytes).substr(8, 8));
  std::memcpy(head.hash.data(), bytes.data() + 16, kHashSize);
  return std::optional<VerifiedHead>(head);
}

absl::Status AuditLog::WriteVerifiedHead(const VerifiedHead& head) {
  return store_->Put(kMeta, "verified",
                     Be64(head.index) + Be64(head.size) + std::string(AsView(head.hash)),
                     {.sync = true});
}

absl::StatusOr<AuditLog::DurableHead> AuditLog::ReadDurableHead() const {
  absl::StatusOr<std::optional<std::string>> v = store_->Get(kMeta, "head");
  if (!v.ok()) return v.status();
  DurableHead head;
  head.root = EmptyRootHash(header_.hash);
  if (!v->has_value()) return head;
  const std::string& bytes = **v;
  if (bytes.size() != 8 + kHashSize) {
    return absl::DataLossError(absl::StrCat("audit log in ", store_->path(), ": damaged head"));
  }
  head.size = *ParseBe64(absl::string_view(bytes).substr(0, 8));
  std::memcpy(head.root.data(), bytes.data() + 8, kHashSize);
  return head;
}

}  // namespace vigil::audit
