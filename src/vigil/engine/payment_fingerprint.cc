#include "vigil/engine/payment_fingerprint.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/check.h"
#include "vigil/crypto/primitives.h"
#include "vigil/store/kv_store.h"

namespace vigil {
namespace {

constexpr char kMetaFamily[] = "meta";
constexpr char kKeyName[] = "payment_fingerprint_key";

}  // namespace

PaymentFingerprinter::PaymentFingerprinter(std::string key) {
  absl::StatusOr<crypto::Pseudonymizer> mac =
      crypto::Pseudonymizer::Create(crypto::Pseudonymizer::Hash::kHmacSha256, std::move(key));
  VIGIL_CHECK(mac.ok());  // the callers give kKeyBytes, which Create accepts
  mac_ = std::make_shared<const crypto::Pseudonymizer>(*std::move(mac));
}

PaymentFingerprinter PaymentFingerprinter::Ephemeral() {
  absl::StatusOr<std::string> key = crypto::RandomBytes(kKeyBytes);
  if (key.ok()) return PaymentFingerprinter(*std::move(key));
  std::random_device device;
  std::string fallback(kKeyBytes, '\0');
  for (char& c : fallback) c = static_cast<char>(device());
  return PaymentFingerprinter(std::move(fallback));
}

absl::StatusOr<PaymentFingerprinter> PaymentFingerprinter::ForStore(KvStore& kv) {
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> stored, kv.Get(kMetaFamily, kKeyName));
  if (stored.has_value()) {
    if (stored->size() != kKeyBytes) {
      return absl::DataLossError(absl::StrCat("feature state in ", kv.path(), ": ", kKeyName,
                                              " has ", stored->size(), " bytes, not ",
                                              kKeyBytes));
    }
    return PaymentFingerprinter(*std::move(stored));
  }
  VIGIL_ASSIGN_OR_RETURN(std::string key, crypto::RandomBytes(kKeyBytes));
  VIGIL_RETURN_IF_ERROR(kv.Put(kMetaFamily, kKeyName, key, KvWriteOptions{.sync = true}));
  return PaymentFingerprinter(std::move(key));
}

audit::Hash PaymentFingerprinter::Of(const Transaction& tx, EventTimeSource time) const {
  const std::string mac = mac_->Of(CanonicalPaymentBytes(tx, time));
  audit::Hash h{};
  std::memcpy(h.data(), mac.data(), std::min(mac.size(), h.size()));
  if (h == audit::Hash{}) h[0] = 1;  // 2^-256: kept apart from "not recorded" all the same
  return h;
}

}  // namespace vigil
