// SignedTreeHead: the log's signed statement "after `size` records my root was `root`, at
// `time`" (RFC 9162 section 4.10, in vigil's own encoding). A head signed at size n pins every
// record below n: an edited, deleted, reordered or appended-then-removed record changes the
// root, and nobody without the key can sign another.
//
// Signed bytes (docs/audit.md, "Tree heads"), UTF-8 text so that an examiner can rebuild them
// with a shell and check the signature with `openssl`:
//
//   vigil-audit-tree-head/v1\n
//   log <log id>\n
//   hash <sha256|sm3>\n
//   size <decimal>\n
//   root <64 lower-case hex digits>\n
//   time <microseconds since the Unix epoch, decimal>\n
//
// JSON form (stored in the log, printed in proofs):
//   {"log_id":"...","hash":"sha256","size":1000,"root":"<hex>","time":"2026-11-30T10:00:00.000000Z",
//    "time_us":1764496800000000,"signature_algorithm":"ed25519","key_id":"<hex>","signature":"<base64>"}
//
// Thread safety: plain value type and pure functions.
#ifndef VIGIL_AUDIT_TREE_HEAD_H_
#define VIGIL_AUDIT_TREE_HEAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/signing_key.h"
#include "vigil/common/clock.h"

namespace vigil::audit {

struct SignedTreeHead {
  std::string log_id;
  HashAlgorithm hash = HashAlgorithm::kSha256;
  uint64_t size = 0;
  Hash root{};
  UtcTime time{};
  SignatureAlgorithm signature_algorithm = SignatureAlgorithm::kEd25519;
  std::string key_id;     // the signing key's id (LogSigner::key_id)
  std::string signature;  // raw signature bytes

  friend bool operator==(const SignedTreeHead&, const SignedTreeHead&) = default;
};

// The bytes the signature covers (above).
std::string TreeHeadSignedBytes(const SignedTreeHead& head);

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
