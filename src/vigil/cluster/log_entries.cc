#include "vigil/cluster/log_entries.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "vigil/cluster/internal/byte_codec.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/common/varint.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"

namespace vigil::cluster {
namespace {

using internal::ByteReader;
using internal::PutDouble;
using internal::PutString;
using internal::UnZigZag;
using internal::ZigZag;

constexpr std::string_view kPaymentMagic("VPE\x01", 4);
constexpr std::string_view kDecisionsMagic("VDB\x01", 4);
// A batch never holds more decisions than this (a NATS message is at most a few MiB).
constexpr uint64_t kMaxDecisions = 1 << 20;

}  // namespace

std::string EncodePayment(const PaymentEntry& payment) {
  std::string out(kPaymentMagic);
  PutVarint(ZigZag(payment.received_us), &out);
  PutVarint(ZigZag(payment.deadline_us), &out);
  PutString(payment.input_format, &out);
  out.append(reinterpret_cast<const char*>(payment.input_sha256.data()),
             payment.input_sha256.size());
  PutString(payment.actor, &out);
  PutString(payment.traceparent, &out);
  std::string json;
  AppendTransactionJson(payment.transaction, &json);
  PutString(json, &out);
  return out;
}

absl::StatusOr<PaymentEntry> DecodePayment(std::string_view bytes) {
  ByteReader in(bytes, "payment entry");
  VIGIL_RETURN_IF_ERROR(in.Magic(kPaymentMagic));
  PaymentEntry out;
  uint64_t v = 0;
  VIGIL_RETURN_IF_ERROR(in.Varint("received_us", &v));
  out.received_us = UnZigZag(v);
  VIGIL_RETURN_IF_ERROR(in.Varint("deadline_us", &v));
  out.deadline_us = UnZigZag(v);
  VIGIL_RETURN_IF_ERROR(in.String("input_format", &out.input_format));
  VIGIL_RETURN_IF_ERROR(in.Bytes("input_sha256", out.input_sha256.data(), 32));
  VIGIL_RETURN_IF_ERROR(in.String("actor", &out.actor));
  VIGIL_RETURN_IF_ERROR(in.String("traceparent", &out.traceparent));
  std::string json;
  VIGIL_RETURN_IF_ERROR(in.String("transaction", &json));
  VIGIL_RETURN_IF_ERROR(in.End());
  JsonParserOptions options;
  options.source_name = "payment entry";
  options.enforce_iso_minor_units = false;  // the front enforced what the caller asked for
  VIGIL_ASSIGN_OR_RETURN(out.transaction, JsonTransactionParser(options).Parse(json));
  return out;
}

std::string EncodeDecisions(absl::Span<const DecidedPayment> decisions) {
  std::string out(kDecisionsMagic);
  PutVarint(decisions.size(), &out);
  for (const DecidedPayment& d : decisions) {
    PutVarint(d.payment_sequence, &out);
    PutString(d.transaction_id, &out);
    PutDouble(d.score, &out);
    out.push_back(d.rule_hit ? 1 : 0);
    PutDouble(d.alert.score, &out);
    PutVarint(d.alert.rule_hits, &out);
    PutString(d.record, &out);
  }
  return out;
}

absl::StatusOr<std::vector<DecidedPayment>> DecodeDecisions(std::string_view bytes) {
  ByteReader in(bytes, "decision batch");
  VIGIL_RETURN_IF_ERROR(in.Magic(kDecisionsMagic));
  uint64_t count = 0;
  VIGIL_RETURN_IF_ERROR(in.Varint("count", &count));
  if (count > kMaxDecisions || count > bytes.size()) {
    return absl::DataLossError(absl::StrCat("decision batch: count ", count, " is impossible"));
  }
  std::vector<DecidedPayment> out(count);
  for (DecidedPayment& d : out) {
    VIGIL_RETURN_IF_ERROR(in.Varint("payment_sequence", &d.payment_sequence));
    VIGIL_RETURN_IF_ERROR(in.String("transaction_id", &d.transaction_id));
    VIGIL_RETURN_IF_ERROR(in.Double("score", &d.score));
    uint8_t hit = 0;
    VIGIL_RETURN_IF_ERROR(in.Bytes("rule_hit", &hit, 1));
    if (hit > 1) {
      return absl::DataLossError(absl::StrCat("decision batch: rule_hit of ", d.transaction_id,
                                              " is ", static_cast<int>(hit), ", not 0 or 1"));
    }
    d.rule_hit = hit == 1;
    VIGIL_RETURN_IF_ERROR(in.Double("alert.score", &d.alert.score));
    uint64_t hits = 0;
    VIGIL_RETURN_IF_ERROR(in.Varint("alert.rule_hits", &hits));
    if (hits > std::numeric_limits<uint32_t>::max()) {
      return absl::DataLossError(
          absl::StrCat("decision batch: alert.rule_hits ", hits, " is over 32 bits"));
    }
    d.alert.rule_hits = static_cast<uint32_t>(hits);
    VIGIL_RETURN_IF_ERROR(in.String("record", &d.record));
  }
  VIGIL_RETURN_IF_ERROR(in.End());
  return out;
}

absl::StatusOr<audit::AuditRecord> DecodeDecidedRecord(std::string_view record_body) {
  std::string stored;
  audit::AppendAssembledRecord(0, audit::Hash{}, record_body, &stored);
  return audit::DecodeRecord(stored);
}

}  // namespace vigil::cluster
