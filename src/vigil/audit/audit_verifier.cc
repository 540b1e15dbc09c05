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
  const HashAlgorithm hash = log.hash();
  VerifyReport report;
  Walk walk;

  // The key: the examiner's, or the header's.
  std::unique_ptr<LogVerifier> header_key;
  const LogVerifier* key = options.trusted_key;
  if (key == nullptr) {
    absl::StatusOr<std::unique_ptr<LogVerifier>> k =
        LogVerifier::FromPem(log.header().public_key_pem, "the audit log's header");
    if (!k.ok()) return k.status();
    header_key = *std::move(k);
    key = header_key.get();
  }
  report.key_id = key->key_id();
  report.trusted_key = options.trusted_key != nullptr;

  // Tree heads: signatures and chain now, roots during the walk.
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> stored =
      log.StoredTreeHeads(options.heads_from);
  if (!stored.ok()) return stored.status();
  std::map<uint64_t, SignedTreeHead> heads;  // by size, signature verified
  std::vector<internal::StoredHead> chain;   // as stored, for the chain's checks
  for (const auto& [key_size, json] : *stored) {
    if (options.up_to > 0 && key_size > options.up_to) break;
    const uint64_t covers = key_size > 0 ? key_size - 1 : 0;
    internal::StoredHead& entry = chain.emplace_back(internal::StoredHead{key_size, {}});
    absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(json);
    if (!head.ok()) {
      walk.Found(DamageKind::kBadSignature, covers,
                 absl::StrCat("the tree head stored for size ", key_size,
                              " does not parse: ", head.status().message()));
      continue;
    }
    if (head->size != key_size || head->log_id != log.header().log_id || head->hash != hash) {
      walk.Found(DamageKind::kModified, covers,
                 absl::StrCat("the tree head stored for size ", key_size,
                              " names size ", head->size, " of log ", head->log_id));
      continue;
    }
    entry.head = *head;
    ++report.tree_heads_checked;
    if (TreeHeadToJson(*head) != json) {
      // Members outside the signed bytes ("time", "key_id"), or another spelling of the
      // signature: the log writes each head in one form.
      walk.Found(DamageKind::kModified, covers,
                 absl::StrCat("the tree head stored for size ", key_size,
                              " is not as the log wrote it (a member outside the signed bytes "
                              "was changed)"));
    }
    absl::Status s = VerifyTreeHead(*key, *head);
    if (s.ok() && head->key_id != key->key_id()) {
      s = absl::DataLossError(absl::StrCat("the tree head stored for size ", key_size,
                                           " names signing key ", head->key_id.substr(0, 16),
                                           ", it verifies with key ", key->key_id().substr(0, 16)));
    }
    if (!s.ok()) {
      walk.Found(DamageKind::kBadSignature, covers, std::string(s.message()));
      continue;
    }
    heads.emplace(key_size, *head);
    report.latest_tree_head = *head;
  }
  VIGIL_ASSIGN_OR_RETURN(std::optional<SignedTreeHead> newest,
                         CheckChainOfHeads(log, options, chain, report, walk));
  VIGIL_ASSIGN_OR_RETURN(std::set<uint64_t> held, AddHeldHeads(log, *key, options, heads, walk));

  // The data keys: a record sealed under a key the log does not hold can never be opened.
  std::set<std::string, std::less<>> data_keys;
  std::string damaged_keys;  // why audit_keys cannot be read, when it cannot
  if (absl::StatusOr<std::vector<crypto::WrappedDataKey>> keys = log.DataKeys(); keys.ok()) {
    for (const crypto::WrappedDataKey& wrapped : *keys) data_keys.insert(wrapped.id);
  } else if (absl::IsDataLoss(keys.status())) {
    damaged_keys = std::string(keys.status().message());
  } else {
    return keys.status();
  }
  report.data_keys = data_keys.size();

  // The walk.
  absl::StatusOr<MerkleFrontier> frontier = log.FrontierAt(options.from);
  if (!frontier.ok()) {
    walk.Found(DamageKind::kModified, options.from,
               absl::StrCat("the stored tree cannot be read at ", options.from, ": ",
                            frontier.status().message()));
    frontier = MerkleFrontier(hash);
  }
  if (options.from > 0) {
    // The walk starts from the stored tree: a head at that size pins it.
    if (auto at = heads.find(options.from); at != heads.end() && frontier->Root() != at->second.root) {
      walk.Found(DamageKind::kModified, 0,
                 absl::StrCat("the stored tree's root at size ", options.from,
                              " is not the one signed at that size (", FormatUtc(at->second.time),
                              ")"));
    }
  }
  StoredLeaves stored_leaves(log);
  Hash previous{};
  if (options.from > 0) {
    absl::StatusOr<std::optional<Hash>> p = stored_leaves.At(options.from - 1);
    if (!p.ok()) return p.status();
    if (p->has_value()) previous = **p;
  }
  uint64_t expected = options.from;
  uint64_t verified_head = 0;  // size of the last head whose root matched
  auto next_head = heads.lower_bound(options.from == 0 ? 1 : options.from + 1);
  const auto ignore = [](int, uint64_t, const Hash&) {};
  const absl::Status scanned = log.ForEachRecord(
      options.from, [&](uint64_t sequence, std::string_view bytes) -> absl::Status {
        if (options.up_to > 0 && sequence >= options.up_to) return absl::CancelledError();
        if (walk.damage.has_value() && walk.damage->sequence <= sequence) {
          return absl::CancelledError();  // nothing later can come first
        }
        if (sequence != expected) {
          if (sequence < expected) {
            walk.Found(DamageKind::kModified, sequence,
                       absl::StrCat("the store holds position ", sequence,
                                    " twice (chunks overlap)"));
          } else {
            walk.Found(DamageKind::kDeleted, expected,
                       absl::StrCat("record ", expected, " is missing",
                                    sequence > expected + 1
                                        ? absl::StrCat(" (and the next ", sequence - expected - 1,
                                                       " too)")
                                        : std::string(),
                                    "; record ", sequence, " follows"));
          }
          return absl::CancelledError();
        }
        const Hash leaf = LeafHash(hash, bytes);
        absl::StatusOr<std::optional<Hash>> stored_leaf = stored_leaves.At(sequence);
        if (!stored_leaf.ok()) return stored_leaf.status();
        absl::StatusOr<RecordLink> link = DecodeRecordLink(bytes);
        if (!link.ok()) {
          walk.Found(DamageKind::kModified, sequence,
                     absl::StrCat("record ", sequence, " does not decode: ", link.status().message()));
          return absl::CancelledError();
        }
        if (link->sequence != sequence) {
          // Intact but elsewhere: its bytes hash to the leaf the tree stores for its own number.
          bool intact = false;
          if (link->sequence < log.size() || options.up_to > link->sequence) {
            StoredLeaves other(log);
            absl::StatusOr<std::optional<Hash>> own = other.At(link->sequence);
            if (!own.ok()) return own.status();
            intact = own->has_value() && **own == leaf;
          }
          if (!intact) {
            walk.Found(DamageKind::kModified, sequence,
                       absl::StrCat("position ", sequence, " holds a record numbered ",
                                    link->sequence, " that is not the log's"));
            return absl::CancelledError();
          }
          // A later record in this place: either the records from here to it were removed (the
          // rest shifted up), or this one was moved. Which: whether record "sequence" turns up
          // further on.
          std::optional<uint64_t> found_at;
          if (link->sequence > sequence) {
            absl::StatusOr<std::optional<uint64_t>> later = FindLater(log, sequence);
            if (!later.ok()) return later.status();
            found_at = *later;
          }
          if (link->sequence > sequence && !found_at.has_value()) {
            const uint64_t gap = link->sequence - sequence;
            walk.Found(DamageKind::kDeleted, sequence,
                       absl::StrCat("record ", sequence, " is missing",
                                    gap > 1 ? absl::StrCat(" (and the next ", gap - 1, " too)")
                                            : std::string(),
                                    "; record ", link->sequence, " follows"));
          } else {
            walk.Found(DamageKind::kReordered, sequence,
                       absl::StrCat("position ", sequence, " holds record ", link->sequence,
                                    " (intact: it belongs there)",
                                    found_at.has_value()
                                        ? absl::StrCat("; record ", sequence, " is at position ",
                                                       *found_at)
                                        : std::string()));
          }
          return absl::CancelledError();
        }
        if (sequence > 0 && link->previous_leaf_hash != previous) {
          walk.Found(DamageKind::kModified, sequence,
                     absl::StrCat("record ", sequence,
                                  " does not chain to record ", sequence - 1,
                                  ": its previous hash is ", HashHex(link->previous_leaf_hash),
                                  ", record ", sequence - 1, " hashes to ", HashHex(previous)));
          return absl::CancelledError();
        }
        if (!stored_leaf->has_value() || **stored_leaf != leaf) {
          walk.Found(DamageKind::kModified, sequence,
                     absl::StrCat("record ", sequence, " hashes to ", HashHex(leaf),
                                  stored_leaf->has_value()
                                      ? absl::StrCat(", the tree holds ", HashHex(**stored_leaf))
                                      : std::string(", the tree holds no leaf for it")));
          return absl::CancelledError();
        }
        absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
        if (!record.ok()) {
          walk.Found(DamageKind::kModified, sequence,
                     absl::StrCat("record ", sequence, ": ", record.status().message()));
          return absl::CancelledError();
        }
        if (!record->data_key_id.empty()) {
          ++report.sealed_records;
          if (!data_keys.contains(record->data_key_id)) {
            walk.Found(DamageKind::kMissingKey, sequence,
                       absl::StrCat("record ", sequence, " is sealed under data key ",
                                    record->data_key_id, ", which the log ",
                                    damaged_keys.empty()
                                        ? std::string("does not hold")
                                        : absl::StrCat("cannot read (", damaged_keys, ")"),
                                    ": its personal fields can never be opened"));
            return absl::CancelledError();
          }
        }
        // An event record names no transaction: nothing indexes it (DecodeRecord checked
        // that a record without a transaction id is an event).
        absl::StatusOr<std::optional<uint64_t>> indexed =
            link->transaction_id.empty() ? absl::StatusOr<std::optional<uint64_t>>(sequence)
                                         : log.FindTransaction(link->transaction_id);
        if (!indexed.ok()) return indexed.status();
        if (indexed->value_or(UINT64_MAX) != sequence) {
          walk.Found(DamageKind::kModified, sequence,
                     absl::StrCat("the index entry of transaction \"", link->transaction_id, "\" ",
                                  indexed->has_value() ? absl::StrCat("points to ", **indexed)
                                                       : std::string("is missing"),
                                  ", its record is ", sequence));
          return absl::CancelledError();
        }
        frontier->Append(leaf, ignore);
        previous = leaf;
        ++expected;
        ++report.records_checked;
        while (next_head != heads.end() && next_head->first == frontier->size()) {
          if (frontier->Root() != next_head->second.root) {
            walk.Found(DamageKind::kModified, verified_head,
                       absl::StrCat("records 0..", next_head->first - 1,
                                    " do not hash to the root signed at size ", next_head->first,
                                    " (", FormatUtc(next_head->second.time),
                                    "): the log was rewritten after record ", verified_head));
            return absl::CancelledError();
          }
          verified_head = next_head->first;
          ++next_head;
        }
        return absl::OkStatus();
      },
      [&](uint64_t first, std::string_view why) -> absl::Status {
        const uint64_t at = std::max(first, expected);
        if (options.up_to > 0 && at >= options.up_to) return absl::CancelledError();
        walk.Found(DamageKind::kModified, at,
                   absl::StrCat("the stored chunk of records from ", first,
                                " cannot be read: ", ToAbsl(why)));
        return absl::CancelledError();
      });
  if (!scanned.ok() && !absl::IsCancelled(scanned)) return scanned;
  report.records = expected;

  if (!walk.damage.has_value() || walk.damage->sequence > expected) {
    // The end: nothing signed or recorded may lie beyond it.
    if (next_head != heads.end() && !(options.up_to > 0 && expected >= options.up_to)) {
      const uint64_t largest = heads.rbegin()->first;
      walk.Found(DamageKind::kTruncated, expected,
                 absl::StrCat("the log ends at record ", expected, " but a tree head ",
                              held.contains(largest) ? "the examiner holds, " : "",
                              "signed at ", FormatUtc(heads.rbegin()->second.time), ", covers ",
                              largest, " records"));
    } else if (options.up_to == 0) {
      absl::StatusOr<AuditLog::DurableHead> durable = log.ReadDurableHead();
      if (!durable.ok()) return durable.status();
      if (durable->size > expected) {
        walk.Found(DamageKind::kTruncated, expected,
                   absl::StrCat("the log ends at record ", expected, " but its head records ",
                                durable->size));
      } else if (durable->size < expected) {
        walk.Found(DamageKind::kModified, durable->size,
                   absl::StrCat("records from ", durable->size,
                                " on were added outside the log (its head records ",
                                durable->size, ")"));
      } else if (durable->root != frontier->Root()) {
        walk.Found(DamageKind::kModified, verified_head,
                   absl::StrCat("the records do not hash to the log's recorded head root; the log "
                                "was rewritten after record ", verified_head));
      }
    }
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
