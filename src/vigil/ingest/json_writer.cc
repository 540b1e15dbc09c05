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

// Members left out when empty (account_id is never empty for the originator and the
// beneficiary; an ultimate party may have none).
void AppendParty(const Party& p, std::string* out) {
  out->push_back('{');
  bool first = true;
  const auto member = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    if (!first) out->push_back(',');
    first = false;
    AppendKey(key, out);
    AppendJsonString(value, out);
  };
  member("account_id", p.account_id);
  member("name", p.name);
  member("bank_id", p.bank_id);
  member("country", p.country);
  if (!p.address.empty()) {
    if (!first) out->push_back(',');
    out->append("\"address\":[");
    for (size_t i = 0; i < p.address.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendJsonString(p.address[i], out);
    }
    out->push_back(']');
  }
  out->push_back('}');
}

// ,"key":"value" when value is not empty.
void AppendOptionalString(std::string_view key, std::string_view value, std::string* out) {
  if (value.empty()) return;
  out->push_back(',');
  AppendKey(key, out);
  AppendJsonString(value, out);
}

void AppendAgent(const Agent& a, std::string* out) {
  out->append("{\"role\":");
  AppendJsonString(ingest_internal::ToStd(AgentRoleName(a.role)), out);
  AppendOptionalString("bic", a.bic, out);
  AppendOptionalString("account_id", a.account_id, out);
  AppendOptionalString("name", a.name, out);
  AppendOptionalString("country", a.country, out);
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
  AppendOptionalString("message_type", tx.message_type, out);
  AppendOptionalString("reference", tx.reference, out);
  AppendOptionalString("uetr", tx.uetr, out);
  AppendOptionalString("value_date", tx.value_date, out);
  AppendOptionalString("charges", tx.charges, out);
  AppendOptionalString("purpose", tx.purpose, out);
  AppendOptionalString("ack_reference", tx.ack_reference, out);
  AppendOptionalString("ack_time", tx.ack_time, out);
  if (!tx.agents.empty()) {
    out->append(",\"agents\":[");
    for (size_t i = 0; i < tx.agents.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendAgent(tx.agents[i], out);
    }
    out->push_back(']');
  }
  if (tx.ultimate_originator) {
    out->append(",\"ultimate_originator\":");
    AppendParty(*tx.ultimate_originator, out);
  }
  if (tx.ultimate_beneficiary) {
    out->append(",\"ultimate_beneficiary\":");
    AppendParty(*tx.ultimate_beneficiary, out);
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
