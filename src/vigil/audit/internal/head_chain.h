// The checks of the chain of signed tree heads (tree_head.h, format 2) that VerifyAuditLog and
// CheckLogTail share: every head in its place among the log's heads, naming the one before it,
// no further from it than that one promised, and the newest covering the log's end within its
// promise. What they find is damage of kind `missing_head` (a head removed from the store) or
// `modified` (heads that cannot have been written so: a chain that does not link).
//
// Thread safety: pure functions.
#ifndef VIGIL_AUDIT_INTERNAL_HEAD_CHAIN_H_
#define VIGIL_AUDIT_INTERNAL_HEAD_CHAIN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/tree_head.h"

namespace vigil::audit::internal {

// A stored head: its key (the size it is stored under) and the head, when it parses.
struct StoredHead {
  uint64_t key = 0;
  std::optional<SignedTreeHead> head;
};

struct ChainCheck {
  std::optional<Damage> damage;  // the first (lowest sequence)
  uint64_t legacy = 0;           // format 1 heads seen
  bool chained = false;          // a format 2 head seen
};

// Keeps in "first" whichever of it and "next" starts at the lower sequence.
void KeepFirst(std::optional<Damage>& first, Damage next);

// "heads": consecutive stored heads in key order, the first of them at "first_position" among
// all the log's heads (0 when they are all of them). Heads that do not parse are skipped (the
// caller reports them), and so are the links next to them.
ChainCheck CheckHeadChain(absl::Span<const StoredHead> heads, uint64_t first_position);

// The end of the log, "records" long: covered by "newest" (the newest stored head that parses;
// none when no head is stored) within the records it promised. "header_format" 2 says the log's
// heads are chained, so at least the first one (of size 0) must be stored.
std::optional<Damage> CheckEndCovered(const std::optional<SignedTreeHead>& newest,
                                      uint64_t records, int header_format);

}  // namespace vigil::audit::internal

#endif  // VIGIL_AUDIT_INTERNAL_HEAD_CHAIN_H_
