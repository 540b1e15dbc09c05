// What the cluster log's messages carry (docs/cluster.md, "The cluster log"), and their
// encodings: a payment as a node's HTTP front publishes it, and a batch of decisions as the
// partition's owner publishes it. Every node decodes them the same way and applies them in log
// order; the encodings are canonical (one value, one encoding) and versioned (a magic and a
// version byte up front), so that a node refuses what it cannot read instead of misreading it.
//
//   payment   = "VPE" 0x01 zigzag-varint(received_us) zigzag-varint(deadline_us)
//               str(input_format) sha256(32 bytes) str(actor) str(traceparent)
//               str(transaction as vigil's JSON, ingest/json_writer.h)
//   decisions = "VDB" 0x01 varint(count) decided*
//   decided   = varint(payment_sequence) str(transaction_id) f64le(score) u8(rule_hit)
//               f64le(alert.score) varint(alert.rule_hits) str(record)
//   str       = varint(length) bytes;  f64le: IEEE-754, little-endian, NaN as 0x7ff8000000000000
//
// The transaction travels as JSON so that the front parses each input format once (SWIFT MT,
// ISO 20022, JSON) and every node reads the one normalized form; the JSON writer round-trips
// every valid transaction exactly.
//
// Thread safety: value types and pure functions.
#ifndef VIGIL_CLUSTER_LOG_ENTRIES_H_
#define VIGIL_CLUSTER_LOG_ENTRIES_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/audit/audit_record.h"
#include "vigil/core/account_standing.h"
#include "vigil/core/transaction.h"

namespace vigil::cluster {

// A payment on vigil.<cluster>.pay.<p>, published with its transaction id as the message id.
struct PaymentEntry {
  Transaction transaction;
  std::string input_format;                // how it arrived: "json", "swift_mt", "iso20022"
  std::array<uint8_t, 32> input_sha256{};  // of the input bytes as received
  int64_t received_us = 0;                 // when the front received it (Unix microseconds)
  int64_t deadline_us = 0;                 // when its caller stops waiting for the decision
  std::string actor;                       // who asked (token or TLS subject), for the audit record
  std::string traceparent;                 // W3C trace context, "" for none
};

// One decision of a batch on vigil.<cluster>.dec.<p>: what every node needs to apply it.
struct DecidedPayment {
  uint64_t payment_sequence = 0;  // the payment's position in the log
  std::string transaction_id;
  // What the account step folds into both parties' risk (FeatureExtractor::RecordRisk): the
  // model score (NaN: none), whether an active rule fired, and the deciding policy's account
  // alert thresholds, so that every node applies it alike whatever policy it loaded.
  double score = 0;
  bool rule_hit = false;
  AccountAlertThresholds alert;
  // The audit record's body (audit/audit_record.h), appended by every node to the partition's
  // audit log, from which the answer to the caller is rebuilt.
  std::string record;
};

std::string EncodePayment(const PaymentEntry& payment);
// kDataLoss naming the field and byte offset for bytes that are not a payment entry (or one
// of a newer version); the transaction's JSON errors name its field.
absl::StatusOr<PaymentEntry> DecodePayment(std::string_view bytes);

std::string EncodeDecisions(absl::Span<const DecidedPayment> decisions);
absl::StatusOr<std::vector<DecidedPayment>> DecodeDecisions(std::string_view bytes);

// The audit record a decided payment carries (its body, without a log position), decoded.
absl::StatusOr<audit::AuditRecord> DecodeDecidedRecord(std::string_view record_body);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_LOG_ENTRIES_H_
