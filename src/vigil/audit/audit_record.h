// AuditRecord: what the audit log keeps of one decision, and its canonical encoding.
//
// A record holds the decision exactly as it was answered (vigil::Decision: action, score,
// reasons with the fired rules and screening hits, model and policy versions, degradation, the
// trace), the normalized transaction it decided, the feature vector the model saw, the SHA-256
// of the input bytes as received, when the request arrived and when it was decided, who sent it,
// and its place in the log: its sequence number and the leaf hash of the record before it.
//
// The encoding (docs/audit.md, "Record encoding", version 1) is canonical: one record has
// exactly one encoding, so the hashes over stored bytes are reproducible by anyone holding the
// specification. It is a tag-length-value format in the manner of protocol buffers' wire format
// with canonical rules added:
//
//   record  = "VAR" 0x01 field*          (magic, format version)
//   field   = key payload                key = varint(number << 3 | wire type)
//   wire 0  = varint                     (unsigned LEB128, minimal length)
//   wire 1  = 8 bytes little-endian      (IEEE-754 double)
//   wire 2  = varint length, bytes       (strings, hashes, nested messages, packed doubles)
//   wire 6  = varint length, sealed      (a sealed field: crypto::FieldCipher's sealed bytes)
//
// Fields appear in ascending number order, each at most once except repeated ones (adjacent,
// in order); a field whose value is zero, false or empty is left out (except where the table in
// docs/audit.md says "present iff"); NaN in the feature vector is the quiet NaN
// 0x7ff8000000000000. Decode refuses anything else, naming the field and the byte offset, so
// `vigil audit verify` checks the encoding, not only the hashes.
//
// Sealed fields (record_sealer.h, docs/audit.md "Sealed fields"): the personal data of the
// transaction (each party's account_id, name and address, each agent's account_id, the
// remittance text) may be written sealed under a data key: the field keeps its number, with
// wire type 6 and the sealed bytes of its ordinary payload; the record then names the data key
// in field 12. The chain and the tree hash the stored bytes, so verification needs no key.
// DecodeRecord leaves sealed fields empty and lists them (AuditRecord::sealed); a RecordOpener
// opens them.
//
// Thread safety: plain value type and pure functions.
#ifndef VIGIL_AUDIT_AUDIT_RECORD_H_
#define VIGIL_AUDIT_AUDIT_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/audit/log_hash.h"
#include "vigil/common/clock.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"

namespace vigil::audit {

inline constexpr uint8_t kRecordFormatVersion = 1;

class RecordSealer;  // record_sealer.h

// A personal field sealed in a stored record (wire type 6), as DecodeRecord found it.
struct SealedField {
  // Where it is: "transaction.originator.name", "transaction.agents[1].account_id",
  // "transaction.remittance", ... (an address is one field: all its lines sealed together).
  std::string path;
  std::string bytes;  // crypto::FieldCipher's sealed form: suite, nonce, ciphertext, tag

  bool operator==(const SealedField&) const = default;
};

struct AuditRecord {
  // Set by the log when it appends: the record's position (0-based) and the leaf hash of the
  // record at sequence - 1 (all zero for sequence 0).
  uint64_t sequence = 0;
  Hash previous_leaf_hash{};

  UtcTime received{};  // the request's first byte (serve) or the record read (replay), UTC
  UtcTime decided{};   // the decision made, before it was recorded
  std::string actor;   // who asked: API token id or TLS client subject; "" without auth
  std::string source;  // "serve" or "replay"
  std::string input_format;  // how the input arrived: "json", "amlworld_csv", ...
  Hash input_sha256{};       // SHA-256 of the transaction's input bytes as received
  Transaction transaction;   // as normalized by ingest
  std::vector<double> features;  // the row decided on, in decision.feature_schema_version
  Decision decision;             // as answered

  // The data key that sealed the record's personal fields (16 hex digits); empty when the
  // record was written in the clear.
  std::string data_key_id;
  // The fields still sealed, in encoding order; their values in "transaction" are empty.
  // Empty for a record written in the clear, and once a RecordOpener opened them (data_key_id
  // stays). EncodeRecord writes them back as they were, so a decoded record re-encodes to its
  // stored bytes.
  std::vector<SealedField> sealed;

  // What makes this decision's payment itself (engine::PaymentFingerprinter: a keyed hash of
  // core's CanonicalPaymentBytes), so that a later arrival of the same transaction id can be
  // told to be the same payment or another; all zero when not recorded (records written
  // before the field existed, and tools that record none).
  Hash payment_fingerprint{};

  // Not empty: the record is an event the server recorded about itself, not a decision (a
  // drift level change, freeze or release: docs/audit.md, "Events"), as JSON text; its
  // "source" says what raised it ("drift") and "input_sha256" is the SHA-256 of this text.
  // An event record names no transaction (empty transaction, features and decision), so it
  // is in the chain and the tree, and no transaction id finds it.
  std::string event;
};

// Fields 3 and up (everything but the sequence and the previous hash), which the threads that
// decide encode in parallel; the log prepends the rest when it appends. Fields the record lists
// as sealed are written sealed, as they are.
std::string EncodeRecordBody(const AuditRecord& record);

// The body of an event record (AuditRecord::event): "event_json" raised by "source" ("drift",
// "cases") at "at", by "actor"; its input_sha256 is the SHA-256 of the text. Append it with no
// transaction id (events are not indexed). kInvalidArgument when "event_json" is empty.
absl::StatusOr<std::string> EncodeEventRecordBody(std::string_view source,
                                                  std::string_view event_json, UtcTime at,
                                                  std::string_view actor);

// The same fields by reference, so that a decision is encoded without first copying its
// transaction, row and decision into an AuditRecord. The pointers must not be null, except
// "sealer".
struct RecordBodyFields {
  UtcTime received{};
  UtcTime decided{};
  std::string_view actor, source, input_format;
  const Hash* input_sha256 = nullptr;
  const Transaction* transaction = nullptr;
  absl::Span<const double> features;
  const Decision* decision = nullptr;
  // Seals the transaction's personal fields (AuditLog::sealer()); null: written in the clear.
  // "*sealer" must remain live during the call.
  const RecordSealer* sealer = nullptr;
  // Written when not null and not all zero (AuditRecord::payment_fingerprint).
  const Hash* payment_fingerprint = nullptr;
  // An event record's JSON (AuditRecord::event); empty for a decision.
  std::string_view event;

  // The fields of "record" (its "sealed" list aside), by reference.
  static RecordBodyFields Of(const AuditRecord& record);
};
// Errors: only with a sealer, when sealing fails (kInternal: no randomness from OpenSSL).
absl::StatusOr<std::string> EncodeRecordBody(const RecordBodyFields& fields);
// The stored bytes of a record at "sequence" after "previous" with "body", appended to *out.
void AppendAssembledRecord(uint64_t sequence, const Hash& previous, std::string_view body,
                           std::string* out);
// The whole record, as stored.
std::string EncodeRecord(const AuditRecord& record);

// Errors: kDataLoss naming the field path, byte offset and reason ("audit record:
// decision.reasons[1].kind at byte 412: 9 is not a reason kind"). Sealed fields are listed in
// AuditRecord::sealed, their values left empty (RecordOpener opens them).
absl::StatusOr<AuditRecord> DecodeRecord(std::string_view bytes);

// The values a sealed field's payload holds once opened: one non-empty string, or for an
// address its lines (the payload is each line as varint length ‖ bytes, at least one line).
// kDataLoss naming the path when the payload is not canonical; kInvalidArgument for a path
// that is never sealed.
absl::StatusOr<std::vector<std::string>> SealedFieldValues(std::string_view path,
                                                           std::string_view payload);
// Sets the field at "path" of "tx" to the opened "payload" (errors as SealedFieldValues).
absl::Status SetSealedField(std::string_view path, std::string_view payload, Transaction& tx);
// Sets the field at "path" of "tx" to "stand_in" (an address to that one line), to show where
// a sealed field stands in a view of the record. kInvalidArgument for a path never sealed;
// kDataLoss when the transaction has no such place.
absl::Status MarkSealedField(std::string_view path, std::string_view stand_in, Transaction& tx);

// The fields a chain walk needs, without decoding the rest (same errors for those fields).
struct RecordLink {
  uint64_t sequence = 0;
  Hash previous_leaf_hash{};
  std::string transaction_id;
};
absl::StatusOr<RecordLink> DecodeRecordLink(std::string_view bytes);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_AUDIT_RECORD_H_
