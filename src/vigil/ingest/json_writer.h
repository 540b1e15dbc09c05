// TransactionToJson: a Transaction as one line of vigil's JSON schema (the one
// JsonTransactionParser reads; docs/ingest.md), for JSON Lines output, rejects files and APIs.
//
// Compact (no spaces, no line breaks), members in schema order; optional members are written only
// when set (empty strings, absent settled_amount and label are left out); amounts are decimal
// strings with the scale the Money holds ("100.50"); the timestamp is RFC 3339 UTC with
// microseconds. Strings are escaped per RFC 8259; bytes that are not valid UTF-8 are written as
// U+FFFD, so the output is always valid JSON.
//
// Round trip: JsonTransactionParser().Parse(TransactionToJson(tx)) == tx for any valid tx (with
// enforce_iso_minor_units off when an amount has more decimals than its ISO minor unit).
//
// Thread safety: pure functions.
#ifndef VIGIL_INGEST_JSON_WRITER_H_
#define VIGIL_INGEST_JSON_WRITER_H_

#include <string>

#include "vigil/core/transaction.h"

namespace vigil {

std::string TransactionToJson(const Transaction& tx);
// Appends the same text to *out (reuse one string to avoid allocations).
void AppendTransactionJson(const Transaction& tx, std::string* out);

}  // namespace vigil

#endif  // VIGIL_INGEST_JSON_WRITER_H_
