// Proof bundles ("vigil-audit-proof/v1", docs/audit-cli.md): self-contained JSON documents that
// prove, to anyone holding the log's public key and nothing else, either
//   inclusion    that a transaction's decision is record N of the log: the record's bytes, its
//                leaf hash, the latest signed tree head and the RFC 9162 path to that head's root;
//   consistency  that the log at an older signed tree head is a prefix of the log at a newer
//                one: both heads and the RFC 9162 consistency proof.
//
//   VIGIL_ASSIGN_OR_RETURN(ProofBundle bundle, InclusionBundle(log, "tx-42", view));
//   ... the examiner, with the file and the public key:
//   VIGIL_ASSIGN_OR_RETURN(CheckedProof proof, CheckProofBundle(bundle.json, *key, view));
//
// Checking reads every member strictly: present, of its type, in its one canonical spelling
// (lower-case hex, padded base64), and nothing else there, so that any edit of a meaningful byte
// makes the bundle invalid rather than silently different; re-indenting or reordering members
// does not. A bundle is built and then checked against the log's own key before it is returned:
// a proof that does not verify is never handed out.
//
// The decoded view. An inclusion bundle also carries the record decoded for people ("record":
// the record as `vigil audit export` writes it). That view is made with the JSON writers of
// ingest, decision and features, which this module may not use (DESIGN.md: audit depends on core
// and store only), so the caller supplies it: a RecordViewFn from the decoded record to the view's
// JSON text. One function serves both ends, so the view a producer writes is the one a checker
// expects: building puts its output in the bundle; checking calls it on the record the bytes
// decode to and requires the bundle's "record" to equal it. What "equal" means is part of the
// format, so it is decided here: equal as JSON values (member order and number spelling do not
// count), except that "features" may be named (an object) on one side and in schema order (an
// array) on the other, when the producer knew a feature schema the checker does not; then only
// the values are compared. Everything else about a bundle (its members, their order and
// spelling, what is checked) is this module's.
//
// Thread safety: free functions, safe for concurrent use; the log is read through its
// thread-safe accessors.
#ifndef VIGIL_AUDIT_PROOF_BUNDLE_H_
#define VIGIL_AUDIT_PROOF_BUNDLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/signing_key.h"
#include "vigil/audit/tree_head.h"
#include "vigil/common/clock.h"
#include "vigil/core/decision.h"

namespace vigil::audit {

// The "format" member of every bundle this build writes and the only one it reads.
inline constexpr std::string_view kProofBundleFormat = "vigil-audit-proof/v1";

// The decoded view of "record" (whose leaf hash is "leaf_hash") as JSON text: one object.
// Deterministic: called once when a bundle is built and once more for each check of it.
using RecordViewFn =
    absl::FunctionRef<std::string(const AuditRecord& record, const Hash& leaf_hash)>;

enum class ProofType : uint8_t { kInclusion, kConsistency };

// What a valid bundle proves, with the facts a report of it names.
struct CheckedProof {
  ProofType type = ProofType::kInclusion;
  std::string log_id;
  // Inclusion: the head the record is included in. Consistency: the newer head.
  SignedTreeHead tree_head;
  // Consistency only: the older head, of which tree_head extends the log.
  std::optional<SignedTreeHead> old_tree_head;
  // Inclusion only: the record's place, its transaction, and what was decided when.
  uint64_t sequence = 0;
  std::string transaction_id;
  Action action = Action::kAllow;
  UtcTime decided{};
};

// A bundle as built from a log.
struct ProofBundle {
  // The bundle: indented by two spaces, members in the order of docs/audit-cli.md, ending in a
  // newline. Written as is to a file or a response body.
  std::string json;
  // What it proves, as checked with the log's own key before it was returned.
  CheckedProof proof;
};

// The inclusion bundle of the record of "transaction_id" against the log's latest signed tree
// head, with "view" of the record as its "record" member. Errors:
//   kNotFound            the log holds no record of the transaction (the message says so);
//   kFailedPrecondition  the record is newer than the latest signed tree head, or the log has
//                        none yet ("transaction X (record N) is not yet covered by a signed
//                        tree head (the latest covers M records)"): retry after the next head;
//   kDataLoss            the log is damaged: the index points at a missing or another record,
//                        a record does not decode, a node is missing, or the bundle built does
//                        not verify with the log's key (run VerifyAuditLog);
//   others               reading the store (never kNotFound or kFailedPrecondition), an
//                        unusable key in the log's header, kInternal when "view" is not a JSON
//                        object.
absl::StatusOr<ProofBundle> InclusionBundle(const AuditLog& log, std::string_view transaction_id,
                                            RecordViewFn view);

// The consistency bundle from "old_head" to "new_head", two of log.TreeHeads(). The caller
// chooses them (an examiner names the sizes of heads it holds). Errors: kInvalidArgument unless
// both are heads of this log with 0 < old_head.size <= new_head.size; kDataLoss as above; store
// errors.
absl::StatusOr<ProofBundle> ConsistencyBundle(const AuditLog& log, const SignedTreeHead& old_head,
                                              const SignedTreeHead& new_head);

// Checks a bundle with nothing but "key", the log's public key as the examiner holds it, and
// "view" (see the file comment; consistency bundles do not call it). Returns what the bundle
// proves, or why it proves nothing, in a message for the examiner (check-proof prints it after
// "INVALID: "):
//   kInvalidArgument  not a bundle this build reads, so nothing was checked: not a JSON object,
//                     no "format" or another one (a later version), or a "type" v1 does not have;
//   kDataLoss         a v1 bundle that does not prove its claim: a member missing, unknown,
//                     mistyped or not canonical, a head not signed by "key", a path that does not
//                     lead to the head's root, a record that is not the claimed one, a view that
//                     is not what the bytes decode to ("... does not match the record bytes (at
//                     /decision/action)");
//   kInternal         "view" returned something other than a JSON object.
absl::StatusOr<CheckedProof> CheckProofBundle(std::string_view json, const LogVerifier& key,
                                              RecordViewFn view);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_PROOF_BUNDLE_H_
