#include "vigil/crypto/envelope.h"

#include <openssl/crypto.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil::crypto {
namespace {

// Wipes a string holding key bytes when it goes out of scope.
struct Wiped {
  std::string bytes;
  ~Wiped() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

absl::StatusOr<KeyWrapAlgorithm> ParseWrap(std::string_view name) {
  if (name == "rsa-oaep-sha256") return KeyWrapAlgorithm::kRsaOaepSha256;
  if (name == "sm2") return KeyWrapAlgorithm::kSm2;
  return absl::InvalidArgumentError(absl::StrCat("wrapped data key: field wrap: unknown '",
                                                 ToAbsl(name), "'"));
}

// The data key of "wrapped", unwrapped by "kek", into "key". A key that unwraps to the wrong
// length for its suite is kDataLoss (an unwrap hook may answer anything; a private key that
// unwraps another key's bytes too), naming the lengths, never the bytes.
absl::Status UnwrapDataKey(const WrappedDataKey& wrapped, const KeyEncryptionKey& kek, Wiped& key) {
  VIGIL_ASSIGN_OR_RETURN(key.bytes, kek.Unwrap(wrapped.wrapped));
  if (key.bytes.size() != DataKeyBytes(wrapped.suite)) {
    return absl::DataLossError(absl::StrCat(
        "data key ", wrapped.id, " unwrapped ",
        kek.has_unwrap_hook() ? "through the key-management hook for key " : "under key ",
        kek.key_id(), " to ", key.bytes.size(), " bytes; a ",
        ToAbsl(CipherSuiteName(wrapped.suite)), " data key is ", DataKeyBytes(wrapped.suite),
        " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string WrappedDataKey::ToJson() const {
  std::string b64;
  absl::Base64Escape(absl::string_view(wrapped.data(), wrapped.size()), &b64);
  return nlohmann::json({{"id", id},
                         {"suite", std::string(CipherSuiteName(suite))},
                         {"kek_id", kek_id},
                         {"wrap", std::string(KeyWrapAlgorithmName(wrap))},
                         {"wrapped", b64}})
      .dump();
}

absl::StatusOr<WrappedDataKey> WrappedDataKey::FromJson(std::string_view json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("wrapped data key: not a JSON object");
  }
  for (const char* field : {"id", "suite", "kek_id", "wrap", "wrapped"}) {
    if (!j.contains(field) || !j[field].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("wrapped data key: field ", field, ": a string is required"));
    }
  }
  WrappedDataKey out;
  out.id = j["id"].get<std::string>();
  out.kek_id = j["kek_id"].get<std::string>();
  absl::StatusOr<CipherSuite> suite = ParseCipherSuite(j["suite"].get<std::string>());
  if (!suite.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("wrapped data key: field suite: ", suite.status().message()));
  }
  out.suite = *suite;
  VIGIL_ASSIGN_OR_RETURN(out.wrap, ParseWrap(j["wrap"].get<std::string>()));
  if (!absl::Base64Unescape(j["wrapped"].get<std::string>(), &out.wrapped) || out.wrapped.empty()) {
    return absl::InvalidArgumentError("wrapped data key: field wrapped: not base64");
  }
  return out;
}

absl::StatusOr<SealedSegmentKey> NewSegmentKey(CipherSuite suite, const KeyEncryptionKey& kek) {
  VIGIL_ASSIGN_OR_RETURN(const std::string id_bytes, RandomBytes(8));
  Wiped key;
  VIGIL_ASSIGN_OR_RETURN(key.bytes, FieldCipher::NewDataKey(suite));
  WrappedDataKey wrapped;
  wrapped.id = absl::BytesToHexString(id_bytes);
  wrapped.suite = suite;
  wrapped.kek_id = kek.key_id();
  wrapped.wrap = kek.algorithm();
  VIGIL_ASSIGN_OR_RETURN(wrapped.wrapped, kek.Wrap(key.bytes));
  VIGIL_ASSIGN_OR_RETURN(FieldCipher cipher, FieldCipher::Create(suite, key.bytes));
  return SealedSegmentKey{std::move(cipher), std::move(wrapped)};
}

absl::StatusOr<FieldCipher> OpenSegmentKey(const WrappedDataKey& wrapped,
                                           const KeyEncryptionKey& kek) {
  if (wrapped.kek_id != kek.key_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "data key ", wrapped.id, " was wrapped by key ", wrapped.kek_id, ", not by key ",
        kek.key_id()));
  }
  Wiped key;
  VIGIL_RETURN_IF_ERROR(UnwrapDataKey(wrapped, kek, key));
  return FieldCipher::Create(wrapped.suite, key.bytes);
}

absl::StatusOr<WrappedDataKey> RewrapSegmentKey(const WrappedDataKey& wrapped,
                                                const KeyEncryptionKey& from,
                                                const KeyEncryptionKey& to) {
  if (wrapped.kek_id != from.key_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "data key ", wrapped.id, " was wrapped by key ", wrapped.kek_id, ", not by key ",
        from.key_id()));
  }
  Wiped key;
  VIGIL_RETURN_IF_ERROR(UnwrapDataKey(wrapped, from, key));
  WrappedDataKey out = wrapped;
  out.kek_id = to.key_id();
  out.wrap = to.algorithm();
  VIGIL_ASSIGN_OR_RETURN(out.wrapped, to.Wrap(key.bytes));
  return out;
}

}  // namespace vigil::crypto
