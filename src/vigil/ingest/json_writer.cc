#include "vigil/ingest/json_writer.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "vigil/ingest/internal/string_view.h"

namespace vigil {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  const unsigned char b0 = byte(i);
  size_t extra;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    extra = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    extra = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    extra = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k <= extra; ++k) {
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return extra + 1;
}

void AppendString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void AppendKey(std::string_view key, std::string* out) {
  out->push_back('"');
  out->append(key);
  out->append("\":");
}

void AppendParty(const Party& p, std::string* out) {
  out->append("{\"account_id\":");
  AppendString(p.account_id, out);
  if (!p.name.empty()) {
    out->append(",\"name\":");
    AppendString(p.name, out);
  }
  if (!p.bank_id.empty()) {
    out->append(",\"bank_id\":");
    AppendString(p.bank_id, out);
  }
  if (!p.country.empty()) {
    out->append(",\"country\":");
    AppendString(p.country, out);
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
  AppendString(tx.id, out);
  out->append(",\"timestamp\":");
  AppendString(FormatUtc(tx.event_time), out);
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
  AppendString(ingest_internal::ToStd(PaymentFormatJsonName(tx.payment_format)), out);
  if (!tx.channel.empty()) {
    out->push_back(',');
    AppendKey("channel", out);
    AppendString(tx.channel, out);
  }
  if (!tx.remittance.empty()) {
    out->push_back(',');
    AppendKey("remittance", out);
    AppendString(tx.remittance, out);
  }
  out->push_back(',');
  AppendKey("priority", out);
  AppendString(ingest_internal::ToStd(PriorityName(tx.priority)), out);
  if (tx.label) {
    out->append(",\"label\":{\"is_laundering\":");
    out->append(tx.label->is_laundering ? "true" : "false");
    if (!tx.label->typology.empty()) {
      out->append(",\"typology\":");
      AppendString(tx.label->typology, out);
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
