// Fuzz target: JsonTransactionParser (vigil's JSON schema, the HTTP API's and JSON Lines' input).

#include <string_view>

#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/transaction_checks.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/record_error.h"

namespace vigil::fuzz {

int FuzzJsonTransaction(const uint8_t* data, size_t size) {
  // One parser for the process, as a server thread keeps one: its simdjson buffers are reused
  // across documents of every size, which is the state worth exercising.
  static JsonTransactionParser& parser = *new JsonTransactionParser();
  const std::string_view json(reinterpret_cast<const char*>(data), size);

  Transaction fresh;
  RecordError fresh_error;
  const bool ok = parser.Parse(json, &fresh, &fresh_error);
  // The same document into a Transaction left over from another record: same outcome.
  Transaction reused = DirtyTransaction();
  RecordError reused_error;
  FUZZ_CHECK(parser.Parse(json, &reused, &reused_error) == ok);
  if (!ok) {
    FUZZ_CHECK(!fresh_error.reason.empty());
    FUZZ_CHECK(fresh_error.line == 0);
    FUZZ_CHECK(fresh_error.source == parser.options().source_name);
    FUZZ_CHECK(fresh_error.reason == reused_error.reason);
    FUZZ_CHECK(fresh_error.field == reused_error.field);
    (void)fresh_error.ToStatus();
    return 0;
  }
  FUZZ_CHECK(reused == fresh);
  CheckParsedTransaction(fresh);
  CheckJsonRoundTrip(fresh, parser);
  return 0;
}

}  // namespace vigil::fuzz
