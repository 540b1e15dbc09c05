// SignedTreeHead: the log's signed statement "after `size` records my root was `root`, at
// `time`" (RFC 9162 section 4.10, in vigil's own encoding). A head signed at size n pins every
// record below n: an edited, deleted, reordered or appended-then-removed record changes the
// root, and nobody without the key can sign another.
//
// Chained heads (format 2): each head also commits to its place among the log's heads (its
// index, from 0), to the head before it (the hash of that head's signed bytes) and to the
// cadence of the next one (it comes within `every` records of this one), so that a head
// removed from the store, or the newest ones removed with the records after them beyond that
// cadence, is found without the key (audit_verifier.h, `missing_head`). Format 1 heads, written
// before, carry none of it (legacy: unchained); they still verify.
//
// Signed bytes (docs/audit.md, "Tree heads"), UTF-8 text so that an examiner can rebuild them
// with a shell and check the signature with `openssl`:
//
//   vigil-audit-tree-head/v2\n              (v1: the first six lines only, with "v1")
//   log <log id>\n
//   hash <sha256|sm3>\n
//   size <decimal>\n
//   root <64 lower-case hex digits>\n
//   time <microseconds since the Unix epoch, decimal>\n
//   index <decimal>\n
//   previous <64 lower-case hex digits, or "none" for index 0>\n
//   every <decimal, >= 1>\n
//   interval_ms <decimal>\n
//
// JSON form (stored in the log, printed in proofs):
//   {"log_id":"...","hash":"sha256","size":1000,"root":"<hex>","time":"2026-11-30T10:00:00.000000Z",
//    "time_us":1764496800000000,"index":7,"previous":"<hex>"|null,"every":10000,
//    "interval_ms":1000,"signature_algorithm":"ed25519","key_id":"<hex>","signature":"<base64>"}
// (format 1: without "index", "previous", "every" and "interval_ms").
//
// Thread safety: plain value type and pure functions.
#ifndef VIGIL_AUDIT_TREE_HEAD_H_
#define VIGIL_AUDIT_TREE_HEAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/signing_key.h"
#include "vigil/common/clock.h"

namespace vigil::audit {

// What a chained (format 2) head adds.
struct TreeHeadChain {
  uint64_t index = 0;             // the head's place among the log's heads, from 0
  std::optional<Hash> previous;   // TreeHeadHash of head index - 1; none for index 0
  uint64_t every_records = 1;     // the next head is at most this many records larger
  int64_t interval_ms = 0;        // and is signed once this much time passed with growth

  friend bool operator==(const TreeHeadChain&, const TreeHeadChain&) = default;
};

struct SignedTreeHead {
  std::string log_id;
  HashAlgorithm hash = HashAlgorithm::kSha256;
  uint64_t size = 0;
  Hash root{};
  UtcTime time{};
  std::optional<TreeHeadChain> chain;  // none: a format 1 (legacy, unchained) head
  SignatureAlgorithm signature_algorithm = SignatureAlgorithm::kEd25519;
  std::string key_id;     // the signing key's id (LogSigner::key_id)
  std::string signature;  // raw signature bytes

  friend bool operator==(const SignedTreeHead&, const SignedTreeHead&) = default;
};

// The bytes the signature covers (above).
std::string TreeHeadSignedBytes(const SignedTreeHead& head);

// The hash (the head's own algorithm) of its signed bytes: what the next head's "previous"
// names.
Hash TreeHeadHash(const SignedTreeHead& head);

// Fills signature_algorithm, key_id and signature. Errors: the signer's.
absl::Status SignTreeHead(const LogSigner& signer, SignedTreeHead& head);

// OK when the signature verifies with "verifier" and the head names the verifier's algorithm.
// kDataLoss otherwise, naming the head ("tree head of size 1000 at 2026-...: ...").
absl::Status VerifyTreeHead(const LogVerifier& verifier, const SignedTreeHead& head);

std::string TreeHeadToJson(const SignedTreeHead& head);
// Errors: kInvalidArgument naming the member and the reason.
absl::StatusOr<SignedTreeHead> TreeHeadFromJson(std::string_view json);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_TREE_HEAD_H_
