#include "fuzz/transaction_checks.h"

#include <cstdio>
#include <string>

#include "fuzz/fuzz_check.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/record_error.h"

namespace vigil::fuzz {

Transaction DirtyTransaction() {
  Transaction tx;
  tx.id = "dirty-id-from-an-earlier-record";
  tx.event_time = FromUnixMicros(1234567890123456);
  tx.originator = {"dirty-orig-account", "Dirty Orig Name", "DIRTYBNK", "ZZ"};
  tx.beneficiary = {"dirty-bene-account", "Dirty Bene Name", "DIRTYBN2", "YY"};
  tx.amount = *Money::Parse("987654.321", *Currency::FromCode("BHD"));
  tx.settled_amount = *Money::Parse("123.45", *Currency::FromCode("CHF"));
  tx.payment_format = PaymentFormat::kCheque;
  tx.channel = "dirty-channel";
  tx.remittance = "dirty remittance text from an earlier record";
  tx.priority = Priority::kP0;
  tx.label = Label{true, "dirty-typology"};
  return tx;
}

void CheckParsedTransaction(const Transaction& tx) {
  FUZZ_CHECK(!tx.id.empty());
  FUZZ_CHECK(!tx.originator.account_id.empty());
  FUZZ_CHECK(!tx.beneficiary.account_id.empty());
  FUZZ_CHECK(!tx.amount.currency().empty());
  FUZZ_CHECK(!tx.settled_amount || !tx.settled_amount->currency().empty());
}

void CheckJsonRoundTrip(const Transaction& tx, JsonTransactionParser& parser) {
  const std::string json = TransactionToJson(tx);
  if (json.find("\\ufffd") != std::string::npos || json.find("\xEF\xBF\xBD") != std::string::npos) {
    return;
  }
  Transaction back;
  RecordError error;
  // The texts go to stderr first: FUZZ_CHECK only names the condition.
  if (!parser.Parse(json, &back, &error)) {
    std::fprintf(stderr, "written: %s\nrefused: %s\n", json.c_str(), error.ToString().c_str());
    FUZZ_CHECK(false && "the parser refuses what the writer wrote");
  }
  if (!(back == tx)) {
    std::fprintf(stderr, "written: %s\nread back: %s\n", json.c_str(),
                 TransactionToJson(back).c_str());
    FUZZ_CHECK(false && "the transaction read back differs");
  }
}

}  // namespace vigil::fuzz
