// VerifyAuditLog: checks an audit log end to end — every record's encoding, the hash chain, the
// stored tree, the index, and every signed tree head's signature and root — and names the first
// damage: its kind and the sequence number where it starts.
//
// Kinds (docs/audit.md, "Verification"):
//   modified       a record's bytes (or its stored hashes, or the index entry) are not what the
//                  chain, the tree and the signed heads say; also an undecodable record
//   deleted        a record is missing while later ones exist
//   reordered      a record is intact but stored at another position (its own sequence number
//                  and leaf hash belong elsewhere)
//   truncated      the log ends before a signed tree head (or the durable head) says it does
//   bad_signature  a tree head's signature does not verify with the trusted key (a rewritten
//                  log re-signed with another key); its sequence is the last one the head covers
//   missing_key    a record's personal fields are sealed under a data key that the log's
//                  audit_keys does not hold (or holds damaged): they can never be opened
//   missing_head   a signed tree head was removed from the store: the chain of heads has a
//                  gap (a head's index or spacing says one is missing before it), the log
//                  holds records but no head, or more records follow the newest head than it
//                  promised (its newest heads were removed); its sequence is the size of the
//                  last head before the gap
//
// Heads of format 1 (tree_head.h), written before heads were chained, are checked for their
// signature and root only: a deleted one among them is found only where a chained head
// follows (its index counts them).
//
// Verification needs no key to open sealed fields: the chain and the tree cover the stored
// bytes, ciphertext included.
// The first damage is the one with the lowest sequence; the walk stops there.
//
// Thread safety: reentrant; reads the log through its thread-safe accessors.
#ifndef VIGIL_AUDIT_AUDIT_VERIFIER_H_
#define VIGIL_AUDIT_AUDIT_VERIFIER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/signing_key.h"
#include "vigil/audit/tree_head.h"

namespace vigil::audit {

enum class DamageKind : uint8_t {
  kModified,
  kDeleted,
  kReordered,
  kTruncated,
  kBadSignature,
  kMissingKey,
  kMissingHead,
};

// "modified", "deleted", "reordered", "truncated", "bad_signature", "missing_key",
// "missing_head".
std::string_view DamageKindName(DamageKind kind);

struct Damage {
  DamageKind kind = DamageKind::kModified;
  uint64_t sequence = 0;
  std::string detail;  // what differs, for the examiner
};

struct VerifyOptions {
  // Check records from here on (the tree and chain before it are taken from the stored tree).
  uint64_t from = 0;
  // Check this many records at most (a live log keeps growing): 0 for all. With a limit, the
  // durable head is not compared (it moves); the tree heads within the limit are.
  uint64_t up_to = 0;
  // The key the tree heads must verify with. Null: the public key in the log's header, which
  // proves the log consistent with itself but not who signed it: pass the key the examiner
  // holds (`--pubkey`) to detect a log rewritten and re-signed with another key.
  const LogVerifier* trusted_key = nullptr;
  // Check only the stored heads from this size on (their signatures, roots and chain, taken up
  // where the first of them stands): the heads before were checked before (CheckLogTail).
  // 0: every head.
  uint64_t heads_from = 0;
  // Heads the examiner holds from elsewhere (a proof bundle, an earlier export or report),
  // whether or not the store still holds them: each must verify with the key, and the log
  // must extend each (a shorter log is `truncated`, another root at its size `modified`).
  // Errors (not damage): a head that does not verify or is of another log.
  std::vector<SignedTreeHead> held_heads;
};

struct VerifyReport {
  uint64_t records_checked = 0;
  uint64_t records = 0;  // records found (from 0)
  uint64_t tree_heads_checked = 0;
  uint64_t legacy_tree_heads = 0;  // of those, format 1 (unchained) heads
  bool tree_heads_chained = false;  // the log has chained heads (all of a new log's are)
  uint64_t held_heads_checked = 0;  // VerifyOptions::held_heads the log was found to extend
  uint64_t sealed_records = 0;  // of the records checked, those with sealed personal fields
  uint64_t data_keys = 0;       // wrapped data keys the log holds
  std::optional<SignedTreeHead> latest_tree_head;
  std::string key_id;      // of the key the heads were verified with
  bool trusted_key = false;  // that key was given (not taken from the header)
  std::optional<Damage> damage;  // the first; none when intact
  double seconds = 0;

  bool intact() const { return !damage.has_value(); }
};

// Errors (not damage): I/O errors reading the store, an unusable header key.
absl::StatusOr<VerifyReport> VerifyAuditLog(const AuditLog& log, const VerifyOptions& options);

// {"intact":true,"records":1000,"records_checked":1000,"tree_heads_checked":10,
//  "tree_heads_chained":true,"key_id":"...","trusted_key":true,"latest_tree_head":{...},
//  "seconds":0.12}, with "legacy_tree_heads" after "tree_heads_chained" when there are any,
// "held_heads_checked" when heads were given,
// "sealed_records" and "data_keys" after "tree_heads_checked" when the log holds data keys
// with "damage":{"kind":"modified","sequence":12,"detail":"..."} when not intact.
std::string VerifyReportToJson(const VerifyReport& report);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_AUDIT_VERIFIER_H_
