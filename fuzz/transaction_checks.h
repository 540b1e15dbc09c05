// Checks shared by the fuzz targets of the transaction parsers (JSON, AMLworld CSV).
//
// Thread safety: pure functions.
#ifndef VIGIL_FUZZ_TRANSACTION_CHECKS_H_
#define VIGIL_FUZZ_TRANSACTION_CHECKS_H_

#include "vigil/core/transaction.h"
#include "vigil/ingest/json_parser.h"

namespace vigil::fuzz {

// A transaction with every field set to a value no parser produces from the seeds, to parse
// into: a parser that reuses the Transaction's storage must still fill every field, so the
// result must equal a parse into a default Transaction.
Transaction DirtyTransaction();

// FUZZ_CHECKs the invariants of transaction.h that ingest promises after a successful parse:
// a non-empty id and account ids, known currencies.
void CheckParsedTransaction(const Transaction& tx);

// FUZZ_CHECKs json_writer.h's round trip: "parser" reads TransactionToJson(tx) back to a
// transaction equal to tx. Skipped when the JSON holds U+FFFD (raw or as "\ufffd"), which the
// writer puts in place of bytes that are not UTF-8: such a transaction cannot round-trip, by
// design.
void CheckJsonRoundTrip(const Transaction& tx, JsonTransactionParser& parser);

}  // namespace vigil::fuzz

#endif  // VIGIL_FUZZ_TRANSACTION_CHECKS_H_
