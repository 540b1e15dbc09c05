#include "vigil/ingest/json_writer.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "vigil/common/json_text.h"
#include "vigil/ingest/internal/string_view.h"

namespace vigil {
namespace {


void AppendKey(std::string_view key, std::string* out) {
  out->push_back('"');
  out->append(key);
  out->append("\":");
}

void AppendParty(const Party& p, std::string* out) {
  out->append("{\"account_id\":");
  AppendJsonString(p.account_id, out);
  if (!p.name.empty()) {
    out->append(",\"name\":");
    AppendJsonString(p.name, out);
  }
  if (!p.bank_id.empty()) {
    out->append(",\"bank_id\":");
    AppendJsonString(p.bank_id, out);
  }
  if (!p.country.empty()) {
    out->append(",\"country\":");
    AppendJsonString(p.country, out);
  }
  out->push_back('}');
}

void AppendMoney(const Money& m, std::string* out) {
  absl::StrAppend(out, "{\"value\":\"", m.ToDecimalString(), "\",\"currency\":\"",
                  m.currency().code(), "\"}");
}

}  // namespace

void AppendTransactionJson(const Transaction& tx, std::string* out) {
  out->append("{\"id\":");
  AppendJsonString(tx.id, out);
  out->append(",\"timestamp\":");
  AppendJsonString(FormatUtc(tx.event_time), out);
  out->append(",\"originator\":");
  AppendParty(tx.originator, out);
  out->append(",\"beneficiary\":");
  AppendParty(tx.beneficiary, out);
  out->append(",\"amount\":");
  AppendMoney(tx.amount, out);
  if (tx.settled_amount) {
    out->append(",\"settled_amount\":");
    AppendMoney(*tx.settled_amount, out);
  }
  out->push_back(',');
  AppendKey("payment_format", out);
  AppendJsonString(ingest_internal::ToStd(PaymentFormatJsonName(tx.payment_format)), out);
  if (!tx.channel.empty()) {
    out->push_back(',');
    AppendKey("channel", out);
    AppendJsonString(tx.channel, out);
  }
  if (!tx.remittance.empty()) {
    out->push_back(',');
    AppendKey("remittance", out);
    AppendJsonString(tx.remittance, out);
  }
  out->push_back(',');
  AppendKey("priority", out);
  AppendJsonString(ingest_internal::ToStd(PriorityName(tx.priority)), out);
  if (tx.label) {
    out->append(",\"label\":{\"is_laundering\":");
    out->append(tx.label->is_laundering ? "true" : "false");
    if (!tx.label->typology.empty()) {
      out->append(",\"typology\":");
      AppendJsonString(tx.label->typology, out);
    }
    out->push_back('}');
  }
  out->push_back('}');
}

std::string TransactionToJson(const Transaction& tx) {
  std::string out;
  out.reserve(512);
  AppendTransactionJson(tx, &out);
  return out;
}

}  // namespace vigil
