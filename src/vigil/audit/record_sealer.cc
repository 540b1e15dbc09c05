#include "vigil/audit/record_sealer.h"

#include <openssl/crypto.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/internal/field_sealer.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil::audit {
namespace {

constexpr std::string_view kAadLabel = "vigil-audit/1";

// Wipes a string holding key bytes when it goes out of scope.
struct Wiped {
  std::string bytes;
  ~Wiped() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

void AppendLengthPrefixed(std::string_view v, std::string* out) {
  uint64_t n = v.size();
  while (n >= 0x80) {
    out->push_back(static_cast<char>(n | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
  out->append(v);
}

}  // namespace

std::string SealedFieldAad(std::string_view data_key_id, std::string_view transaction_id,
                           std::string_view path) {
  std::string aad;
  aad.reserve(kAadLabel.size() + data_key_id.size() + transaction_id.size() + path.size() + 6);
  aad.append(kAadLabel);
  AppendLengthPrefixed(data_key_id, &aad);
  AppendLengthPrefixed(transaction_id, &aad);
  AppendLengthPrefixed(path, &aad);
  return aad;
}

bool IsSealablePath(std::string_view path) {
  absl::string_view rest = ToAbsl(path);
  if (!absl::ConsumePrefix(&rest, "transaction.")) return false;
  if (rest == "remittance") return true;
  if (absl::ConsumePrefix(&rest, "agents[")) {
    const size_t close = rest.find(']');
    if (close == 0 || close == absl::string_view::npos || close > 9) return false;
    for (char c : rest.substr(0, close)) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    if (close > 1 && rest[0] == '0') return false;
    return rest.substr(close) == "].account_id";
  }
  for (absl::string_view party :
       {"originator.", "beneficiary.", "ultimate_originator.", "ultimate_beneficiary."}) {
    absl::string_view field = rest;
    if (absl::ConsumePrefix(&field, party)) {
      return field == "account_id" || field == "name" || field == "address";
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------

RecordSealer::RecordSealer(std::unique_ptr<internal::FieldSealer> sealer,
                           crypto::WrappedDataKey wrapped)
    : sealer_(std::move(sealer)), wrapped_(std::move(wrapped)) {}

RecordSealer::~RecordSealer() = default;

absl::StatusOr<std::unique_ptr<RecordSealer>> RecordSealer::Create(
    crypto::CipherSuite suite, const crypto::KeyEncryptionKey& kek) {
  // As crypto::NewSegmentKey, keeping the key for the FieldSealer (a FieldCipher does not give
  // its key out).
  VIGIL_ASSIGN_OR_RETURN(const std::string id_bytes, crypto::RandomBytes(8));
  Wiped key;
  VIGIL_ASSIGN_OR_RETURN(key.bytes, crypto::FieldCipher::NewDataKey(suite));
  crypto::WrappedDataKey wrapped;
  wrapped.id = absl::BytesToHexString(ToAbsl(id_bytes));
  wrapped.suite = suite;
  wrapped.kek_id = kek.key_id();
  wrapped.wrap = kek.algorithm();
  VIGIL_ASSIGN_OR_RETURN(wrapped.wrapped, kek.Wrap(key.bytes));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<internal::FieldSealer> sealer,
                         internal::FieldSealer::Create(suite, key.bytes));
  // What it seals must open with FieldCipher, which readers use: checked once per key.
  VIGIL_ASSIGN_OR_RETURN(const crypto::FieldCipher cipher,
                         crypto::FieldCipher::Create(suite, key.bytes));
  const std::string aad = SealedFieldAad(wrapped.id, "check", "transaction.remittance");
  VIGIL_ASSIGN_OR_RETURN(const std::string sealed, sealer->Seal("vigil", aad));
  absl::StatusOr<std::string> opened = cipher.Open(sealed, aad);
  if (!opened.ok() || *opened != "vigil") {
    return absl::InternalError(absl::StrCat(
        "audit record sealer: a field sealed under ", ToAbsl(crypto::CipherSuiteName(suite)),
        " does not open with crypto::FieldCipher",
        opened.ok() ? std::string() : absl::StrCat(": ", opened.status().message())));
  }
  return std::unique_ptr<RecordSealer>(new RecordSealer(std::move(sealer), std::move(wrapped)));
}

absl::StatusOr<std::string> RecordSealer::Seal(std::string_view transaction_id,
                                               std::string_view path,
                                               std::string_view payload) const {
  absl::StatusOr<std::string> sealed =
      sealer_->Seal(payload, SealedFieldAad(wrapped_.id, transaction_id, path));
  if (!sealed.ok()) {
    return absl::InternalError(absl::StrCat("sealing ", ToAbsl(path), " of transaction ",
                                            ToAbsl(transaction_id), " under data key ",
                                            wrapped_.id, ": ", sealed.status().message()));
  }
  return sealed;
}

// ---------------------------------------------------------------------------------------------

RecordOpener::RecordOpener(std::shared_ptr<const crypto::KeyEncryptionKey> kek, KeySource source)
    : kek_(std::move(kek)), source_(std::move(source)) {}

std::unique_ptr<RecordOpener> RecordOpener::ForLog(
    const AuditLog& log, std::shared_ptr<const crypto::KeyEncryptionKey> kek) {
  return std::make_unique<RecordOpener>(
      std::move(kek), [&log](std::string_view id) { return log.DataKey(id); });
}

void RecordOpener::AddDataKey(crypto::WrappedDataKey wrapped) {
  absl::MutexLock lock(&mu_);
  std::string id = wrapped.id;
  added_.emplace(std::move(id), std::move(wrapped));
}

absl::StatusOr<std::shared_ptr<const crypto::FieldCipher>> RecordOpener::Cipher(
    std::string_view data_key_id) const {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = ciphers_.find(data_key_id); it != ciphers_.end()) return it->second;
  }
  std::optional<crypto::WrappedDataKey> wrapped;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = added_.find(data_key_id); it != added_.end()) wrapped = it->second;
  }
  if (!wrapped.has_value() && source_ != nullptr) {
    absl::StatusOr<std::optional<crypto::WrappedDataKey>> found = source_(data_key_id);
    if (!found.ok()) return found.status();
    wrapped = *std::move(found);
  }
  if (!wrapped.has_value()) {
    return absl::NotFoundError(absl::StrCat("data key ", ToAbsl(data_key_id),
                                            " is unknown: no wrapped key of that id is stored"));
  }
  // Unwrapped outside the lock (RSA or SM2 decryption): two threads may both unwrap a key
  // the first time; the first to finish is kept.
  absl::StatusOr<crypto::FieldCipher> cipher = crypto::OpenSegmentKey(*wrapped, *kek_);
  if (!cipher.ok()) {
    const absl::Status& s = cipher.status();
    if (absl::IsFailedPrecondition(s) && wrapped->kek_id != kek_->key_id()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "data key ", wrapped->id, " was wrapped by key-encryption key ", wrapped->kek_id,
          ", not by the key-encryption key given (", kek_->key_id(), ")"));
    }
    if (absl::IsFailedPrecondition(s)) {
      return absl::FailedPreconditionError(
          absl::StrCat("data key ", wrapped->id, ": key-encryption key ", kek_->key_id(),
                       " cannot unwrap (", s.message(), "); give its private half"));
    }
    return absl::Status(s.code(), absl::StrCat("data key ", wrapped->id, " (wrapped by key ",
                                               wrapped->kek_id, "): ", s.message()));
  }
  auto shared = std::make_shared<const crypto::FieldCipher>(*std::move(cipher));
  absl::MutexLock lock(&mu_);
  return ciphers_.emplace(std::string(data_key_id), std::move(shared)).first->second;
}

absl::StatusOr<std::string> RecordOpener::OpenField(std::string_view data_key_id,
                                                    std::string_view transaction_id,
                                                    std::string_view path,
                                                    std::string_view sealed) const {
  absl::StatusOr<std::shared_ptr<const crypto::FieldCipher>> cipher = Cipher(data_key_id);
  if (!cipher.ok()) return cipher.status();
  absl::StatusOr<std::string> payload =
      (*cipher)->Open(sealed, SealedFieldAad(data_key_id, transaction_id, path));
  if (!payload.ok()) {
    return absl::DataLossError(absl::StrCat(
        "sealed field ", ToAbsl(path), " of transaction ", ToAbsl(transaction_id),
        " does not open under data key ", ToAbsl(data_key_id),
        " (altered, or moved from another record or field): ", payload.status().message()));
  }
  return payload;
}

absl::Status RecordOpener::Open(AuditRecord& record) const {
  if (record.sealed.empty()) return absl::OkStatus();
  Transaction opened = record.transaction;
  for (const SealedField& field : record.sealed) {
    absl::StatusOr<std::string> payload =
        OpenField(record.data_key_id, record.transaction.id, field.path, field.bytes);
    if (!payload.ok()) return payload.status();
    if (absl::Status s = SetSealedField(field.path, *payload, opened); !s.ok()) return s;
  }
  record.transaction = std::move(opened);
  record.sealed.clear();
  return absl::OkStatus();
}

absl::StatusOr<AuditRecord> RecordOpener::Decode(std::string_view bytes) const {
  absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
  if (!record.ok()) return record.status();
  if (absl::Status s = Open(*record); !s.ok()) return s;
  return record;
}

}  // namespace vigil::audit
