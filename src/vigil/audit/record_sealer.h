// Field-level envelope encryption of the personal data in audit records (docs/audit.md,
// "Sealed fields").
//
// What is sealed, of a record's transaction: each party's (originator, beneficiary,
// ultimate_originator, ultimate_beneficiary) account_id, name and address (all its lines as one
// field), each agent's account_id, and the remittance text. Nothing else: amounts, currencies,
// BICs, times, ids, the decision and the features stay readable, so that the decision can be
// answered again for a repeated transaction id and the log verified without any key.
//
// A sealed field keeps its field number with wire type 6; its payload is crypto::FieldCipher's
// sealed form of the field's ordinary payload, authenticated with associated data that binds it
// to its place (SealedFieldAad): the data key, the transaction id and the field's path. A sealed
// field moved to another record or another field, or altered, does not open.
//
// Keys (crypto/envelope.h): the log seals under a data key that it makes when it opens and
// replaces after AuditLogOptions::records_per_data_key records; each data key is stored only
// wrapped by the key-encryption key, in the log's "audit_keys" column family, durably before a
// record sealed with it. A segment is the run of records under one data key.
//
//   RecordSealer  seals under one data key (AuditLog::sealer(); the threads that encode record
//                 bodies share it).
//   RecordOpener  opens, with the key-encryption key's private half (or its public half and a
//                 key-management hook, crypto/kek_command.h) and the wrapped data keys (of a
//                 log, or of an export), each unwrapped once.
//
// Thread safety: both are safe for concurrent use.
#ifndef VIGIL_AUDIT_RECORD_SEALER_H_
#define VIGIL_AUDIT_RECORD_SEALER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/audit/audit_record.h"
#include "vigil/crypto/envelope.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"

namespace vigil::audit {

class AuditLog;

// The associated data of a sealed field: "vigil-audit/1", then the data key id, the
// transaction id and the field's path, each as varint length ‖ bytes.
std::string SealedFieldAad(std::string_view data_key_id, std::string_view transaction_id,
                           std::string_view path);

// Whether a field at "path" ("transaction.originator.name") is one that records seal.
bool IsSealablePath(std::string_view path);

namespace internal {
class FieldSealer;
}  // namespace internal

class RecordSealer {
 public:
  // A sealer under a fresh data key for "suite", wrapped by "kek" (its public half is enough),
  // as crypto::NewSegmentKey makes one. The data key itself stays inside the sealer; its first
  // seal is checked to open with crypto::FieldCipher. kInternal when OpenSSL fails.
  static absl::StatusOr<std::unique_ptr<RecordSealer>> Create(crypto::CipherSuite suite,
                                                              const crypto::KeyEncryptionKey& kek);
  ~RecordSealer();
  RecordSealer(const RecordSealer&) = delete;
  RecordSealer& operator=(const RecordSealer&) = delete;

  const std::string& data_key_id() const { return wrapped_.id; }
  // The data key as stored (wrapped by the key-encryption key).
  const crypto::WrappedDataKey& wrapped_key() const { return wrapped_; }
  crypto::CipherSuite suite() const { return wrapped_.suite; }

  // The sealed bytes of "payload", the ordinary payload of the field at "path" of the record of
  // "transaction_id". kInternal when OpenSSL fails (no randomness).
  absl::StatusOr<std::string> Seal(std::string_view transaction_id, std::string_view path,
                                   std::string_view payload) const;

  // Records sealed with this key so far (EncodeRecordBody counts them; the log rotates the key
  // after AuditLogOptions::records_per_data_key).
  uint64_t records() const { return records_.load(std::memory_order_relaxed); }
  void CountRecord() const { records_.fetch_add(1, std::memory_order_relaxed); }

 private:
  RecordSealer(std::unique_ptr<internal::FieldSealer> sealer, crypto::WrappedDataKey wrapped);

  // Seals as crypto::FieldCipher does, with keyed contexts kept between calls (the cost of a
  // record that is sealed on every decision).
  const std::unique_ptr<internal::FieldSealer> sealer_;
  const crypto::WrappedDataKey wrapped_;
  mutable std::atomic<uint64_t> records_{0};
};

class RecordOpener {
 public:
  // Looks up a wrapped data key by id: nullopt when there is none.
  using KeySource = std::function<absl::StatusOr<std::optional<crypto::WrappedDataKey>>(
      std::string_view data_key_id)>;

  // "kek" must be able to unwrap (its private half, or an unwrap hook). Data keys not added with AddDataKey are looked up in
  // "source" (null: none).
  RecordOpener(std::shared_ptr<const crypto::KeyEncryptionKey> kek, KeySource source = nullptr);
  // An opener of the records of "log" (its "audit_keys"), which must outlive it.
  static std::unique_ptr<RecordOpener> ForLog(const AuditLog& log,
                                              std::shared_ptr<const crypto::KeyEncryptionKey> kek);
  RecordOpener(const RecordOpener&) = delete;
  RecordOpener& operator=(const RecordOpener&) = delete;

  const crypto::KeyEncryptionKey& kek() const { return *kek_; }

  // Makes "wrapped" known (an export's data key). A key already known under its id is kept.
  void AddDataKey(crypto::WrappedDataKey wrapped);

  // Opens the sealed fields of "record" in place: their values set, "sealed" emptied. Nothing
  // to do for a record written in the clear. Errors (the record is left as it was):
  //   kFailedPrecondition  the data key was wrapped by another key-encryption key (naming the
  //                        data key id and both key-encryption key ids), or this one is public;
  //   kNotFound            the data key is unknown (not in the log's audit_keys / the export);
  //   kDataLoss            a field does not open (altered, or moved from another record or
  //                        field), naming its path and the transaction; or the data key does not
  //                        unwrap (or unwraps to a key of the wrong length);
  //   a key-management hook's own errors (kUnavailable, kDeadlineExceeded, ...), naming it.
  absl::Status Open(AuditRecord& record) const;
  // DecodeRecord, then Open.
  absl::StatusOr<AuditRecord> Decode(std::string_view bytes) const;
  // The payload of one sealed field (errors as Open).
  absl::StatusOr<std::string> OpenField(std::string_view data_key_id,
                                        std::string_view transaction_id, std::string_view path,
                                        std::string_view sealed) const;

 private:
  absl::StatusOr<std::shared_ptr<const crypto::FieldCipher>> Cipher(
      std::string_view data_key_id) const;

  // Constant after construction.
  const std::shared_ptr<const crypto::KeyEncryptionKey> kek_;
  const KeySource source_;

  mutable absl::Mutex mu_;
  std::map<std::string, crypto::WrappedDataKey, std::less<>> added_ ABSL_GUARDED_BY(mu_);
  // Unwrapped once each.
  mutable std::map<std::string, std::shared_ptr<const crypto::FieldCipher>, std::less<>> ciphers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_RECORD_SEALER_H_
