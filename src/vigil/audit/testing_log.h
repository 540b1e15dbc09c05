// What the audit module's tests share: a fresh signing key, and the 8-byte big-endian key under
// which the log stores a record (or a tree head) by sequence number (or size), for tests that
// reach into the store to tamper with it. Test-only.
#ifndef VIGIL_AUDIT_TESTING_LOG_H_
#define VIGIL_AUDIT_TESTING_LOG_H_

#include <cstdint>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "vigil/audit/signing_key.h"

namespace vigil::audit {

inline std::shared_ptr<const LogSigner> TestSigner(
    SignatureAlgorithm algorithm = SignatureAlgorithm::kEd25519) {
  absl::StatusOr<std::string> pem = GeneratePrivateKeyPem(algorithm);
  EXPECT_TRUE(pem.ok()) << pem.status();
  absl::StatusOr<std::unique_ptr<LogSigner>> signer = LogSigner::FromPem(*pem, "test key");
  EXPECT_TRUE(signer.ok()) << signer.status();
  return std::shared_ptr<const LogSigner>(*std::move(signer));
}

inline std::string SequenceKey(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_TESTING_LOG_H_
