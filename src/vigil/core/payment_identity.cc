#include "vigil/core/payment_identity.h"

#include <cstdint>
#include <string_view>

namespace vigil {
namespace {

// Encoding: a one-byte tag per member, then a varint length and the bytes for strings, or a
// fixed 8-byte little-endian value for numbers. Tags make the encoding unambiguous (an empty
// optional member differs from a present one with empty strings).
class Canonical {
 public:
  explicit Canonical(std::string* out) : out_(out) {}
  void String(char tag, std::string_view s) {
    out_->push_back(tag);
    Varint(s.size());
    out_->append(s);
  }
  void Number(char tag, uint64_t v) {
    out_->push_back(tag);
    for (int i = 0; i < 8; ++i) out_->push_back(static_cast<char>(v >> (8 * i)));
  }
  void Party(char tag, const vigil::Party& p) {
    out_->push_back(tag);
    String('a', p.account_id);
    String('n', p.name);
    String('b', p.bank_id);
    String('c', p.country);
    Number('l', p.address.size());
    for (const std::string& line : p.address) String('L', line);
  }
  // The exact amount in its shortest scale: 500, 500.0 and 500.00 encode alike.
  void Amount(char tag, const Money& m) {
    int64_t units = m.units();
    int scale = m.scale();
    while (scale > 0 && units % 10 == 0) {
      units /= 10;
      --scale;
    }
    out_->push_back(tag);
    String('c', m.currency().code());
    Number('u', static_cast<uint64_t>(units));
    Number('s', static_cast<uint64_t>(scale));
  }

 private:
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<char>(v));
  }
  std::string* out_;
};

// What kind of transfer a message type carries, whatever its syntax: the same payment sent as a
// SWIFT MT103 and as its ISO 20022 pacs.008 (one UETR, as in the MT/MX coexistence) is one
// payment; a bank-to-bank transfer (MT202, MT202COV, pacs.009) is another kind. A cover and a
// plain bank transfer differ in their ultimate parties, which are compared themselves.
std::string_view TransferKind(std::string_view message_type) {
  const auto starts = [&](std::string_view p) { return message_type.substr(0, p.size()) == p; };
  if (starts("MT103") || starts("pacs.008")) return "customer_credit_transfer";
  if (starts("MT202") || starts("pacs.009")) return "institution_credit_transfer";
  return message_type;
}

}  // namespace

std::string CanonicalPaymentBytes(const Transaction& tx, EventTimeSource time) {
  std::string out;
  out.reserve(512);  // one allocation for a typical payment's members
  out = "vigil.payment.v1";
  Canonical c(&out);
  c.String('i', tx.id);
  if (time == EventTimeSource::kSender) {
    c.Number('t', static_cast<uint64_t>(ToUnixMicros(tx.event_time)));
  }
  c.Party('O', tx.originator);
  c.Party('B', tx.beneficiary);
  c.Amount('A', tx.amount);
  if (tx.settled_amount.has_value()) c.Amount('S', *tx.settled_amount);
  c.Number('f', static_cast<uint64_t>(tx.payment_format));
  c.String('h', tx.channel);
  c.String('r', tx.remittance);
  c.String('m', TransferKind(tx.message_type));
  c.String('R', tx.reference);
  c.String('u', tx.uetr);
  c.String('v', tx.value_date);
  c.String('g', tx.charges);
  c.String('p', tx.purpose);
  c.Number('G', tx.agents.size());
  for (const Agent& a : tx.agents) {
    c.Number('k', static_cast<uint64_t>(a.role));
    c.String('x', a.bic);
    c.String('a', a.account_id);
    c.String('n', a.name);
    c.String('c', a.country);
  }
  if (tx.ultimate_originator.has_value()) c.Party('U', *tx.ultimate_originator);
  if (tx.ultimate_beneficiary.has_value()) c.Party('V', *tx.ultimate_beneficiary);
  return out;
}

}  // namespace vigil
