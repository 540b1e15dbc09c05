#include "vigil/audit/audit_verifier.h"

#include <chrono>
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/internal/head_chain.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::audit {
namespace {

constexpr uint64_t kTileWidth = 256;

// The stored leaf hashes, read a tile at a time for a sequential walk.
class StoredLeaves {
 public:
  explicit StoredLeaves(const AuditLog& log) : log_(log) {}

  // The stored leaf hash of "sequence"; nullopt when the tree does not hold it.
  absl::StatusOr<std::optional<Hash>> At(uint64_t sequence) {
    const uint64_t tile = sequence / kTileWidth;
    if (!loaded_ || tile != tile_index_) {
      absl::StatusOr<std::string> bytes = log_.LeafTile(tile);
      if (!bytes.ok()) return bytes.status();
      tile_ = *std::move(bytes);
      tile_index_ = tile;
      loaded_ = true;
    }
    const size_t offset = (sequence % kTileWidth) * sizeof(Hash);
    if (tile_.size() < offset + sizeof(Hash)) return std::optional<Hash>();
    Hash h;
    std::memcpy(h.data(), tile_.data() + offset, sizeof(Hash));
    return std::optional<Hash>(h);
  }

 private:
  const AuditLog& log_;
  std::string tile_;
  uint64_t tile_index_ = 0;
  bool loaded_ = false;
};

struct Walk {
  std::optional<Damage> damage;
  void Found(DamageKind kind, uint64_t sequence, std::string detail) {
    if (!damage.has_value() || sequence < damage->sequence) {
      damage = Damage{kind, sequence, std::move(detail)};
    }
  }
};

// The position after "sequence" where the store holds record "sequence" (by its own number),
// if anywhere: tells a moved record from removed ones.
absl::StatusOr<std::optional<uint64_t>> FindLater(const AuditLog& log, uint64_t sequence) {
  std::optional<uint64_t> found;
  const absl::Status s = log.ForEachRecord(
      sequence + 1,
      [&](uint64_t position, std::string_view bytes) -> absl::Status {
        absl::StatusOr<RecordLink> link = DecodeRecordLink(bytes);
        if (link.ok() && link->sequence == sequence) {
          found = position;
          return absl::CancelledError();
        }
        return absl::OkStatus();
      },
      [](uint64_t, std::string_view) { return absl::OkStatus(); });
  if (!s.ok() && !absl::IsCancelled(s)) return s;
  return found;
}

// The chain of the heads read (internal/head_chain.h): its damage goes to "walk". Returns the
// newest head that parses (none when none does).
absl::StatusOr<std::optional<SignedTreeHead>> CheckChainOfHeads(
    const AuditLog& log, const VerifyOptions& options,
    const std::vector<internal::StoredHead>& chain, VerifyReport& report, Walk& walk) {
  std::optional<SignedTreeHead> newest;
  for (auto it = chain.rbegin(); it != chain.rend() && !newest.has_value(); ++it) newest = it->head;
  // From heads_from on, the first head read stands where its index says (the chain before it
  // was checked before).
  uint64_t first_position = 0;
  if (options.heads_from > 0 && !chain.empty() && chain.front().head.has_value() &&
      chain.front().head->chain.has_value()) {
    first_position = chain.front().head->chain->index;
  }
  const internal::ChainCheck check = internal::CheckHeadChain(chain, first_position);
  report.legacy_tree_heads = check.legacy;
  report.tree_heads_chained = check.chained;
  if (check.damage.has_value()) {
    walk.Found(check.damage->kind, check.damage->sequence, check.damage->detail);
  }
  if (chain.empty() && options.heads_from == 0 && options.up_to == 0) {
    // No head at all: found before the walk, which then stops at once.
    absl::StatusOr<AuditLog::DurableHead> durable = log.ReadDurableHead();
    if (!durable.ok()) return durable.status();
    if (std::optional<Damage> end =
            internal::CheckEndCovered(std::nullopt, durable->size, log.header().format);
        end.has_value()) {
      walk.Found(end->kind, end->sequence, std::move(end->detail));
    }
  }
  return newest;
}

// Adds the examiner's heads to "heads" (checked there by the walk like the stored ones).
// Returns their sizes.
absl::StatusOr<std::set<uint64_t>> AddHeldHeads(const AuditLog& log, const LogVerifier& key,
                                                const VerifyOptions& options,
                                                std::map<uint64_t, SignedTreeHead>& heads,
                                                Walk& walk) {
  std::set<uint64_t> sizes;
  for (const SignedTreeHead& held : options.held_heads) {
    const std::string name =
        absl::StrCat("the held tree head of size ", held.size, " at ", FormatUtc(held.time));
    if (held.log_id != log.header().log_id || held.hash != log.hash()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " is of audit log ", held.log_id,
                                                     ", not of this one (", log.header().log_id,
                                                     ")"));
    }
    if (absl::Status s = VerifyTreeHead(key, held); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " does not verify with key ", key.key_id().substr(0, 16), ": ",
                       s.message()));
    }
    if (held.size == 0) continue;  // every log extends the empty one
    sizes.insert(held.size);
    auto [it, added] = heads.emplace(held.size, held);
    if (!added && it->second.root != held.root) {
      walk.Found(DamageKind::kModified, 0,
                 absl::StrCat(name, " and the head stored for that size sign different roots: "
                                    "the log was rewritten"));
    }
  }
  return sizes;
}

// The key the tree heads must verify with: the examiner's, else the one in the log's header
// (then owned by "header_key"). Errors: an unusable header key.
absl::StatusOr<const LogVerifier*> ChooseKey(const AuditLog& log, const VerifyOptions& options,
                                             std::unique_ptr<LogVerifier>& header_key) {
  if (options.trusted_key != nullptr) return options.trusted_key;
  absl::StatusOr<std::unique_ptr<LogVerifier>> k =
      LogVerifier::FromPem(log.header().public_key_pem, "the audit log's header");
  if (!k.ok()) return k.status();
  header_key = *std::move(k);
  return header_key.get();
}

// The stored tree heads, read once: those whose signature verified, and all of them as stored.
struct StoredHeads {
  std::map<uint64_t, SignedTreeHead> verified;  // by size
  std::vector<internal::StoredHead> chain;      // as stored, for the chain's checks
};

// One stored head's form: it parses, names the size it is stored under and this log, and is
// spelled as the log writes it. Damage goes to "walk"; returns the head unless it does not
// parse or names another size or log (a respelled head is returned: its signature is checked).
std::optional<SignedTreeHead> ReadStoredHead(const AuditLog& log, uint64_t key_size,
                                             const std::string& json, Walk& walk) {
  const uint64_t covers = key_size > 0 ? key_size - 1 : 0;
  absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(json);
  if (!head.ok()) {
    walk.Found(DamageKind::kBadSignature, covers,
               absl::StrCat("the tree head stored for size ", key_size,
                            " does not parse: ", head.status().message()));
    return std::nullopt;
  }
  if (head->size != key_size || head->log_id != log.header().log_id || head->hash != log.hash()) {
    walk.Found(DamageKind::kModified, covers,
               absl::StrCat("the tree head stored for size ", key_size,
                            " names size ", head->size, " of log ", head->log_id));
    return std::nullopt;
  }
  if (TreeHeadToJson(*head) != json) {
    // Members outside the signed bytes ("time", "key_id"), or another spelling of the
    // signature: the log writes each head in one form.
    walk.Found(DamageKind::kModified, covers,
               absl::StrCat("the tree head stored for size ", key_size,
                            " is not as the log wrote it (a member outside the signed bytes "
                            "was changed)"));
  }
  return *std::move(head);
}

// Reads the stored heads (from options.heads_from, up to options.up_to) and checks their form
// and signatures now; their roots are checked during the walk. Damage goes to "walk".
absl::StatusOr<StoredHeads> CheckStoredHeads(const AuditLog& log, const LogVerifier& key,
                                             const VerifyOptions& options, VerifyReport& report,
                                             Walk& walk) {
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> stored =
      log.StoredTreeHeads(options.heads_from);
  if (!stored.ok()) return stored.status();
  StoredHeads heads;
  for (const auto& [key_size, json] : *stored) {
    if (options.up_to > 0 && key_size > options.up_to) break;
    internal::StoredHead& entry = heads.chain.emplace_back(internal::StoredHead{key_size, {}});
    std::optional<SignedTreeHead> head = ReadStoredHead(log, key_size, json, walk);
    if (!head.has_value()) continue;
    entry.head = *head;
    ++report.tree_heads_checked;
    absl::Status s = VerifyTreeHead(key, *head);
    if (s.ok() && head->key_id != key.key_id()) {
      s = absl::DataLossError(absl::StrCat("the tree head stored for size ", key_size,
                                           " names signing key ", head->key_id.substr(0, 16),
                                           ", it verifies with key ", key.key_id().substr(0, 16)));
    }
    if (!s.ok()) {
      walk.Found(DamageKind::kBadSignature, key_size > 0 ? key_size - 1 : 0,
                 std::string(s.message()));
      continue;
    }
    heads.verified.emplace(key_size, *head);
    report.latest_tree_head = *head;
  }
  return heads;
}

// The ids of the data keys the log holds; "damaged" says why audit_keys cannot be read, when it
// cannot (a record sealed under a key the log does not hold can never be opened).
struct DataKeys {
  std::set<std::string, std::less<>> ids;
  std::string damaged;
};

absl::StatusOr<DataKeys> ReadDataKeys(const AuditLog& log) {
  DataKeys data_keys;
  if (absl::StatusOr<std::vector<crypto::WrappedDataKey>> keys = log.DataKeys(); keys.ok()) {
    for (const crypto::WrappedDataKey& wrapped : *keys) data_keys.ids.insert(wrapped.id);
  } else if (absl::IsDataLoss(keys.status())) {
    data_keys.damaged = std::string(keys.status().message());
  } else {
    return keys.status();
  }
  return data_keys;
}

// The walk over the stored records from options.from: each record's position, encoding, chain
// link, stored leaf, seal and index entry, and the root of every verified head the walk
// reaches. Each Check* step returns OK to go on, kCancelled after recording damage in "walk"
// (the walk stops at the first), or a read error.
class RecordWalk {
 public:
  // "log", "options", "heads", "data_keys", "report" and "walk" must outlive the RecordWalk.
  RecordWalk(const AuditLog& log, const VerifyOptions& options,
             const std::map<uint64_t, SignedTreeHead>& heads, const DataKeys& data_keys,
             VerifyReport& report, Walk& walk)
      : log_(log),
        options_(options),
        hash_(log.hash()),
        heads_(heads),
        data_keys_(data_keys),
        report_(report),
        walk_(walk),
        stored_leaves_(log),
        frontier_(hash_),
        expected_(options.from),
        next_head_(heads.lower_bound(options.from == 0 ? 1 : options.from + 1)) {}

  // Walks the records; afterwards expected() is the number of records found.
  absl::Status Run() {
    VIGIL_RETURN_IF_ERROR(StartFromStoredTree());
    const absl::Status scanned = log_.ForEachRecord(
        options_.from,
        [this](uint64_t sequence, std::string_view bytes) { return CheckRecord(sequence, bytes); },
        [this](uint64_t first, std::string_view why) { return UnreadableChunk(first, why); });
    if (!scanned.ok() && !absl::IsCancelled(scanned)) return scanned;
    return absl::OkStatus();
  }

  // Nothing signed or recorded may lie beyond where the walk ended ("held": the sizes of the
  // examiner's heads). Damage goes to "walk"; errors: reading the durable head.
  absl::Status CheckEnd(const std::set<uint64_t>& held) {
    if (next_head_ != heads_.end() && !(options_.up_to > 0 && expected_ >= options_.up_to)) {
      const uint64_t largest = heads_.rbegin()->first;
      walk_.Found(DamageKind::kTruncated, expected_,
                  absl::StrCat("the log ends at record ", expected_, " but a tree head ",
                               held.contains(largest) ? "the examiner holds, " : "",
                               "signed at ", FormatUtc(heads_.rbegin()->second.time),
                               ", covers ", largest, " records"));
    } else if (options_.up_to == 0) {
      absl::StatusOr<AuditLog::DurableHead> durable = log_.ReadDurableHead();
      if (!durable.ok()) return durable.status();
      if (durable->size > expected_) {
        walk_.Found(DamageKind::kTruncated, expected_,
                    absl::StrCat("the log ends at record ", expected_, " but its head records ",
                                 durable->size));
      } else if (durable->size < expected_) {
        walk_.Found(DamageKind::kModified, durable->size,
                    absl::StrCat("records from ", durable->size,
                                 " on were added outside the log (its head records ",
                                 durable->size, ")"));
      } else if (durable->root != frontier_.Root()) {
        walk_.Found(DamageKind::kModified, verified_head_,
                    absl::StrCat("the records do not hash to the log's recorded head root; the "
                                 "log was rewritten after record ", verified_head_));
      }
    }
    return absl::OkStatus();
  }

  uint64_t expected() const { return expected_; }

 private:
  static absl::Status Stop() { return absl::CancelledError(); }

  // The frontier and the previous leaf at options.from, from the stored tree; a verified head
  // at that size pins the stored tree's root.
  absl::Status StartFromStoredTree() {
    if (absl::StatusOr<MerkleFrontier> f = log_.FrontierAt(options_.from); f.ok()) {
      frontier_ = *std::move(f);
    } else {
      walk_.Found(DamageKind::kModified, options_.from,
                  absl::StrCat("the stored tree cannot be read at ", options_.from, ": ",
                               f.status().message()));
    }
    if (options_.from == 0) return absl::OkStatus();
    if (auto at = heads_.find(options_.from);
        at != heads_.end() && frontier_.Root() != at->second.root) {
      walk_.Found(DamageKind::kModified, 0,
                  absl::StrCat("the stored tree's root at size ", options_.from,
                               " is not the one signed at that size (",
                               FormatUtc(at->second.time), ")"));
    }
    absl::StatusOr<std::optional<Hash>> p = stored_leaves_.At(options_.from - 1);
    if (!p.ok()) return p.status();
    if (p->has_value()) previous_ = **p;
    return absl::OkStatus();
  }

  absl::Status CheckRecord(uint64_t sequence, std::string_view bytes) {
    if (options_.up_to > 0 && sequence >= options_.up_to) return Stop();
    if (walk_.damage.has_value() && walk_.damage->sequence <= sequence) {
      return Stop();  // nothing later can come first
    }
    VIGIL_RETURN_IF_ERROR(CheckPosition(sequence));
    const Hash leaf = LeafHash(hash_, bytes);
    absl::StatusOr<std::optional<Hash>> stored_leaf = stored_leaves_.At(sequence);
    if (!stored_leaf.ok()) return stored_leaf.status();
    absl::StatusOr<RecordLink> link = DecodeRecordLink(bytes);
    if (!link.ok()) {
      walk_.Found(DamageKind::kModified, sequence,
                  absl::StrCat("record ", sequence, " does not decode: ", link.status().message()));
      return Stop();
    }
    if (link->sequence != sequence) return ReportMisplaced(sequence, link->sequence, leaf);
    VIGIL_RETURN_IF_ERROR(CheckChainLink(sequence, *link));
    VIGIL_RETURN_IF_ERROR(CheckStoredLeaf(sequence, leaf, *stored_leaf));
    VIGIL_RETURN_IF_ERROR(CheckDataKey(sequence, bytes));
    VIGIL_RETURN_IF_ERROR(CheckIndexEntry(sequence, *link));
    frontier_.Append(leaf, [](int, uint64_t, const Hash&) {});
    previous_ = leaf;
    ++expected_;
    ++report_.records_checked;
    return CheckSignedRoots();
  }

  // The store holds the positions in order, each once.
  absl::Status CheckPosition(uint64_t sequence) {
    if (sequence == expected_) return absl::OkStatus();
    if (sequence < expected_) {
      walk_.Found(DamageKind::kModified, sequence,
                  absl::StrCat("the store holds position ", sequence, " twice (chunks overlap)"));
    } else {
      walk_.Found(DamageKind::kDeleted, expected_,
                  absl::StrCat("record ", expected_, " is missing",
                               sequence > expected_ + 1
                                   ? absl::StrCat(" (and the next ", sequence - expected_ - 1,
                                                  " too)")
                                   : std::string(),
                               "; record ", sequence, " follows"));
    }
    return Stop();
  }

  // Position "sequence" holds record "numbered", whose bytes hash to "leaf". Always stops:
  // records damaged, removed or moved.
  absl::Status ReportMisplaced(uint64_t sequence, uint64_t numbered, const Hash& leaf) {
    // Intact but elsewhere: its bytes hash to the leaf the tree stores for its own number.
    bool intact = false;
    if (numbered < log_.size() || options_.up_to > numbered) {
      StoredLeaves other(log_);
      absl::StatusOr<std::optional<Hash>> own = other.At(numbered);
      if (!own.ok()) return own.status();
      intact = own->has_value() && **own == leaf;
    }
    if (!intact) {
      walk_.Found(DamageKind::kModified, sequence,
                  absl::StrCat("position ", sequence, " holds a record numbered ", numbered,
                               " that is not the log's"));
      return Stop();
    }
    // A later record in this place: either the records from here to it were removed (the rest
    // shifted up), or this one was moved. Which: whether record "sequence" turns up further on.
    std::optional<uint64_t> found_at;
    if (numbered > sequence) {
      absl::StatusOr<std::optional<uint64_t>> later = FindLater(log_, sequence);
      if (!later.ok()) return later.status();
      found_at = *later;
    }
    if (numbered > sequence && !found_at.has_value()) {
      const uint64_t gap = numbered - sequence;
      walk_.Found(DamageKind::kDeleted, sequence,
                  absl::StrCat("record ", sequence, " is missing",
                               gap > 1 ? absl::StrCat(" (and the next ", gap - 1, " too)")
                                       : std::string(),
                               "; record ", numbered, " follows"));
    } else {
      walk_.Found(DamageKind::kReordered, sequence,
                  absl::StrCat("position ", sequence, " holds record ", numbered,
                               " (intact: it belongs there)",
                               found_at.has_value()
                                   ? absl::StrCat("; record ", sequence, " is at position ",
                                                  *found_at)
                                   : std::string()));
    }
    return Stop();
  }

  // The record names the leaf hash of the one before it.
  absl::Status CheckChainLink(uint64_t sequence, const RecordLink& link) {
    if (sequence == 0 || link.previous_leaf_hash == previous_) return absl::OkStatus();
    walk_.Found(DamageKind::kModified, sequence,
                absl::StrCat("record ", sequence, " does not chain to record ", sequence - 1,
                             ": its previous hash is ", HashHex(link.previous_leaf_hash),
                             ", record ", sequence - 1, " hashes to ", HashHex(previous_)));
    return Stop();
  }

  // The stored tree holds the record's leaf hash.
  absl::Status CheckStoredLeaf(uint64_t sequence, const Hash& leaf,
                               const std::optional<Hash>& stored_leaf) {
    if (stored_leaf.has_value() && *stored_leaf == leaf) return absl::OkStatus();
    walk_.Found(DamageKind::kModified, sequence,
                absl::StrCat("record ", sequence, " hashes to ", HashHex(leaf),
                             stored_leaf.has_value()
                                 ? absl::StrCat(", the tree holds ", HashHex(*stored_leaf))
                                 : std::string(", the tree holds no leaf for it")));
    return Stop();
  }

  // The record decodes, and a sealed one names a data key the log holds.
  absl::Status CheckDataKey(uint64_t sequence, std::string_view bytes) {
    absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
    if (!record.ok()) {
      walk_.Found(DamageKind::kModified, sequence,
                  absl::StrCat("record ", sequence, ": ", record.status().message()));
      return Stop();
    }
    if (record->data_key_id.empty()) return absl::OkStatus();
    ++report_.sealed_records;
    if (data_keys_.ids.contains(record->data_key_id)) return absl::OkStatus();
    walk_.Found(DamageKind::kMissingKey, sequence,
                absl::StrCat("record ", sequence, " is sealed under data key ",
                             record->data_key_id, ", which the log ",
                             data_keys_.damaged.empty()
                                 ? std::string("does not hold")
                                 : absl::StrCat("cannot read (", data_keys_.damaged, ")"),
                             ": its personal fields can never be opened"));
    return Stop();
  }

  // The index entry of the record's transaction points to it.
  absl::Status CheckIndexEntry(uint64_t sequence, const RecordLink& link) {
    // An event record names no transaction: nothing indexes it (DecodeRecord checked that a
    // record without a transaction id is an event).
    absl::StatusOr<std::optional<uint64_t>> indexed =
        link.transaction_id.empty() ? absl::StatusOr<std::optional<uint64_t>>(sequence)
                                    : log_.FindTransaction(link.transaction_id);
    if (!indexed.ok()) return indexed.status();
    if (indexed->value_or(UINT64_MAX) == sequence) return absl::OkStatus();
    walk_.Found(DamageKind::kModified, sequence,
                absl::StrCat("the index entry of transaction \"", link.transaction_id, "\" ",
                             indexed->has_value() ? absl::StrCat("points to ", **indexed)
                                                  : std::string("is missing"),
                             ", its record is ", sequence));
    return Stop();
  }

  // Each verified head of the size the tree has reached signs its root.
  absl::Status CheckSignedRoots() {
    while (next_head_ != heads_.end() && next_head_->first == frontier_.size()) {
      if (frontier_.Root() != next_head_->second.root) {
        walk_.Found(DamageKind::kModified, verified_head_,
                    absl::StrCat("records 0..", next_head_->first - 1,
                                 " do not hash to the root signed at size ", next_head_->first,
                                 " (", FormatUtc(next_head_->second.time),
                                 "): the log was rewritten after record ", verified_head_));
        return Stop();
      }
      verified_head_ = next_head_->first;
      ++next_head_;
    }
    return absl::OkStatus();
  }

  absl::Status UnreadableChunk(uint64_t first, std::string_view why) {
    const uint64_t at = std::max(first, expected_);
    if (options_.up_to > 0 && at >= options_.up_to) return Stop();
    walk_.Found(DamageKind::kModified, at,
                absl::StrCat("the stored chunk of records from ", first,
                             " cannot be read: ", ToAbsl(why)));
    return Stop();
  }

  const AuditLog& log_;
  const VerifyOptions& options_;
  const HashAlgorithm hash_;
  const std::map<uint64_t, SignedTreeHead>& heads_;
  const DataKeys& data_keys_;
  VerifyReport& report_;
  Walk& walk_;
  StoredLeaves stored_leaves_;
  MerkleFrontier frontier_;
  Hash previous_{};
  uint64_t expected_;
  uint64_t verified_head_ = 0;  // size of the last head whose root matched
  std::map<uint64_t, SignedTreeHead>::const_iterator next_head_;
};

}  // namespace

std::string_view DamageKindName(DamageKind kind) {
  switch (kind) {
    case DamageKind::kModified: return "modified";
    case DamageKind::kDeleted: return "deleted";
    case DamageKind::kReordered: return "reordered";
    case DamageKind::kTruncated: return "truncated";
    case DamageKind::kBadSignature: return "bad_signature";
    case DamageKind::kMissingKey: return "missing_key";
    case DamageKind::kMissingHead: return "missing_head";
  }
  return "modified";
}

absl::StatusOr<VerifyReport> VerifyAuditLog(const AuditLog& log, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  VerifyReport report;
  Walk walk;

  std::unique_ptr<LogVerifier> header_key;
  VIGIL_ASSIGN_OR_RETURN(const LogVerifier* const key, ChooseKey(log, options, header_key));
  report.key_id = key->key_id();
  report.trusted_key = options.trusted_key != nullptr;

  // Tree heads: signatures and chain now, roots during the walk.
  VIGIL_ASSIGN_OR_RETURN(StoredHeads heads, CheckStoredHeads(log, *key, options, report, walk));
  VIGIL_ASSIGN_OR_RETURN(std::optional<SignedTreeHead> newest,
                         CheckChainOfHeads(log, options, heads.chain, report, walk));
  VIGIL_ASSIGN_OR_RETURN(std::set<uint64_t> held,
                         AddHeldHeads(log, *key, options, heads.verified, walk));
  VIGIL_ASSIGN_OR_RETURN(const DataKeys data_keys, ReadDataKeys(log));
  report.data_keys = data_keys.ids.size();

  RecordWalk records(log, options, heads.verified, data_keys, report, walk);
  VIGIL_RETURN_IF_ERROR(records.Run());
  const uint64_t expected = records.expected();
  report.records = expected;
  if (!walk.damage.has_value() || walk.damage->sequence > expected) {
    VIGIL_RETURN_IF_ERROR(records.CheckEnd(held));
  }
  // With up_to (a live log), its heads up to that size were durable with its records.
  const bool at_end = options.up_to == 0 || expected >= options.up_to;
  if (at_end && (options.heads_from == 0 || newest.has_value())) {
    if (std::optional<Damage> end =
            internal::CheckEndCovered(newest, expected, log.header().format);
        end.has_value()) {
      walk.Found(end->kind, end->sequence, std::move(end->detail));
    }
  }
  for (uint64_t size : held) {
    if (size <= expected) ++report.held_heads_checked;
  }
  report.damage = std::move(walk.damage);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string VerifyReportToJson(const VerifyReport& report) {
  nlohmann::ordered_json j;
  j["intact"] = report.intact();
  j["records"] = report.records;
  j["records_checked"] = report.records_checked;
  j["tree_heads_checked"] = report.tree_heads_checked;
  j["tree_heads_chained"] = report.tree_heads_chained;
  if (report.legacy_tree_heads > 0) j["legacy_tree_heads"] = report.legacy_tree_heads;
  if (report.held_heads_checked > 0) j["held_heads_checked"] = report.held_heads_checked;
  if (report.data_keys > 0 || report.sealed_records > 0) {
    j["sealed_records"] = report.sealed_records;
    j["data_keys"] = report.data_keys;
  }
  j["key_id"] = report.key_id;
  j["trusted_key"] = report.trusted_key;
  if (report.latest_tree_head.has_value()) {
    j["latest_tree_head"] = nlohmann::ordered_json::parse(TreeHeadToJson(*report.latest_tree_head));
  }
  if (report.damage.has_value()) {
    j["damage"] = {{"kind", std::string(DamageKindName(report.damage->kind))},
                   {"sequence", report.damage->sequence},
                   {"detail", report.damage->detail}};
  }
  j["seconds"] = report.seconds;
  return j.dump();
}

}  // namespace vigil::audit
