// Fuzz target: ParseIso20022, the ISO 20022 pacs.008 / pacs.009 reader (XML through pugixml).

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/transaction_checks.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/iso20022.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/swift_syntax.h"

namespace vigil::fuzz {
namespace {

bool IsCountry(std::string_view c) {
  return c.empty() || (c.size() == 2 && c[0] >= 'A' && c[0] <= 'Z' && c[1] >= 'A' && c[1] <= 'Z');
}

bool IsLowerUuid(std::string_view u) {
  if (u.size() != 36) return false;
  for (size_t i = 0; i < u.size(); ++i) {
    const char c = u[i];
    const bool ok = (i == 8 || i == 13 || i == 18 || i == 23)
                        ? c == '-'
                        : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!ok) return false;
  }
  return true;
}

void CheckAmount(const Money& m) {
  FUZZ_CHECK(m.currency().is_iso());
  FUZZ_CHECK(!m.is_negative());
  FUZZ_CHECK(m.CheckIsoExponent().ok());
}

// What iso20022.h promises of each transaction beyond transaction.h's invariants.
void CheckIsoTransaction(const Transaction& tx) {
  CheckParsedTransaction(tx);
  FUZZ_CHECK(tx.message_type.size() == 15);
  FUZZ_CHECK(tx.message_type.rfind("pacs.008.001.", 0) == 0 ||
             tx.message_type.rfind("pacs.009.001.", 0) == 0);
  FUZZ_CHECK(tx.payment_format == PaymentFormat::kWire);
  FUZZ_CHECK(tx.channel.empty());
  CheckAmount(tx.amount);
  if (tx.settled_amount) {
    CheckAmount(*tx.settled_amount);
    FUZZ_CHECK(!(*tx.settled_amount == tx.amount));
  }
  if (!tx.uetr.empty()) {
    FUZZ_CHECK(IsLowerUuid(tx.uetr));
    FUZZ_CHECK(tx.id == tx.uetr);
  }
  FUZZ_CHECK(tx.value_date.empty() || CheckIsoDate(tx.value_date).ok());
  FUZZ_CHECK(tx.charges.empty() || tx.charges == "OUR" || tx.charges == "BEN" ||
             tx.charges == "SHA");
  FUZZ_CHECK(tx.priority == Priority::kP0 || tx.priority == Priority::kP1);
  FUZZ_CHECK(IsCountry(tx.originator.country) && IsCountry(tx.beneficiary.country));
  for (const auto& ultimate : {tx.ultimate_originator, tx.ultimate_beneficiary}) {
    if (ultimate) FUZZ_CHECK(IsCountry(ultimate->country));
  }
  // Agents come in role order, each BIC checked.
  for (size_t i = 0; i < tx.agents.size(); ++i) {
    const Agent& a = tx.agents[i];
    if (i > 0) FUZZ_CHECK(tx.agents[i - 1].role <= a.role);
    FUZZ_CHECK(a.bic.empty() || CheckBic(a.bic).ok());
    FUZZ_CHECK(IsCountry(a.country));
  }
}

}  // namespace

int FuzzIso20022(const uint8_t* data, size_t size) {
  static JsonTransactionParser& json = *new JsonTransactionParser();
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<std::vector<Transaction>> txs = ParseIso20022(xml);
  if (!txs.ok()) {
    const absl::StatusCode code = txs.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
               code == absl::StatusCode::kUnimplemented);
    FUZZ_CHECK(!txs.status().message().empty());
    if (code == absl::StatusCode::kUnimplemented) {
      FUZZ_CHECK(txs.status().message().find("unsupported message type ") == 0);
    }
    return 0;
  }
  FUZZ_CHECK(size <= kMaxIso20022Bytes);
  FUZZ_CHECK(LooksLikeXml(xml));
  FUZZ_CHECK(!txs->empty());
  // Deterministic: the same bytes, the same transactions.
  const absl::StatusOr<std::vector<Transaction>> again = ParseIso20022(xml);
  FUZZ_CHECK(again.ok() && *again == *txs);
  for (const Transaction& tx : *txs) {
    CheckIsoTransaction(tx);
    CheckJsonRoundTrip(tx, json);
  }
  return 0;
}

}  // namespace vigil::fuzz
