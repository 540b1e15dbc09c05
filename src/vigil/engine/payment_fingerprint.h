// PaymentFingerprinter: a keyed hash of what makes a payment itself (core's
// CanonicalPaymentBytes), so that a repeated transaction id can be told to be the same payment
// or another one (docs/serve.md, "Idempotency").
//
// The fingerprint is HMAC-SHA-256 under a secret of the data dir (crypto::Pseudonymizer, whose
// precomputed key states make it cheap per payment), not a plain hash: the audit
// log records it beside each decision, and a record whose personal fields are sealed
// (docs/security.md) must not let anyone holding the log confirm a guess of those fields by
// hashing it. The secret is 32 random bytes kept in the feature store's "meta" column family
// ("payment_fingerprint_key"), created on first use; whoever can read it can read the feature
// state too.
//
// Thread safety: immutable after construction; Of may be called from any thread.
#ifndef VIGIL_ENGINE_PAYMENT_FINGERPRINT_H_
#define VIGIL_ENGINE_PAYMENT_FINGERPRINT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "vigil/audit/log_hash.h"
#include "vigil/core/payment_identity.h"
#include "vigil/core/transaction.h"
#include "vigil/crypto/pseudonym.h"

namespace vigil {

class KvStore;

class PaymentFingerprinter {
 public:
  static constexpr size_t kKeyBytes = 32;

  // A fingerprinter under a fresh random key, for services that keep nothing across restarts
  // (from OpenSSL's generator, else std::random_device: nothing fingerprinted under it is
  // stored).
  static PaymentFingerprinter Ephemeral();
  // The data dir's key in "kv" (its "meta" column family), created and durably written when
  // missing. Errors: the store's; a stored key of the wrong length (kDataLoss).
  static absl::StatusOr<PaymentFingerprinter> ForStore(KvStore& kv);

  // Never all zero (an all-zero hash means "not recorded" in an audit record).
  audit::Hash Of(const Transaction& tx, EventTimeSource time) const;

 private:
  // "key" is kKeyBytes long.
  explicit PaymentFingerprinter(std::string key);
  std::shared_ptr<const crypto::Pseudonymizer> mac_;
};

}  // namespace vigil

#endif  // VIGIL_ENGINE_PAYMENT_FINGERPRINT_H_
