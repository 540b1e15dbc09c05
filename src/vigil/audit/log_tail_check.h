// CheckLogTail: the check `vigil serve` runs on its audit log before it appends anything, so
// that a server never continues (and signs over) a log whose newest part was tampered with.
// Bounded work, unlike VerifyAuditLog: the chain of tree heads from the head where the last
// check ended (AuditLog::ReadVerifiedHead; the first head when none is recorded), the newest
// head's signature and root, and the records after it (fewer than the head promised).
//
// What it covers (docs/audit.md, "What an attacker can hide"): a head removed from the
// store since the last check, the newest heads removed (beyond the cadence), the records after
// the newest head rewritten, deleted or cut, the tree rewritten under the newest head, a head
// that does not verify with the server's own key. What it leaves to `vigil audit verify`: the
// records below the newest head (the newest signature pins them; only a full walk recomputes
// them) and the chain before the last check.
//
// Thread safety: reentrant; reads the log through its thread-safe accessors.
#ifndef VIGIL_AUDIT_LOG_TAIL_CHECK_H_
#define VIGIL_AUDIT_LOG_TAIL_CHECK_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/signing_key.h"

namespace vigil {
class KvStore;
}  // namespace vigil

namespace vigil::audit {

struct TailCheckReport {
  uint64_t records = 0;        // the log's durable size
  uint64_t heads_checked = 0;  // heads read from the last checked one on
  uint64_t tail_records = 0;   // records after the newest head, recomputed
  std::optional<SignedTreeHead> newest;
  std::optional<Damage> damage;  // the first; none when intact
  bool intact() const { return !damage.has_value(); }
};

// Checks "log" with "key" (the key the log must be signed with). Errors (not damage): reading
// the store.
absl::StatusOr<TailCheckReport> CheckLogTail(const AuditLog& log, const LogVerifier& key);

// For `vigil serve`, before it opens the log in "store" for writing: nothing to do when the
// store holds no log; otherwise CheckLogTail with the public half of "signer". Intact: the
// newest chained head is recorded as checked (the next start begins there) and OK is returned.
// Damaged: kDataLoss, whose message names the damage's kind, sequence and detail and what to
// do ("run `vigil audit verify --data-dir DATA_DIR ...`", restore or move the data dir aside).
// "data_dir" is only for that message. Errors reading the store as they are.
absl::Status CheckAuditLogAtStart(KvStore* store, const LogSigner& signer,
                                  std::string_view data_dir);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_LOG_TAIL_CHECK_H_
