// RecordError: why one input record was refused, precise enough to fix the record.
//
// Replay keeps going after a RecordError, counts rejects by `reason` and can write them to a
// rejects file; nothing is silently dropped or coerced. docs/ingest.md lists every reason code.
//
// Thread safety: plain value type.
#ifndef VIGIL_INGEST_RECORD_ERROR_H_
#define VIGIL_INGEST_RECORD_ERROR_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace vigil {

struct RecordError {
  std::string source;  // file name, or "<request>"
  int64_t line = 0;    // 1-based line in the source; 0 when not line-oriented
  std::string field;   // column name ("Amount Paid") or JSON path ("$.amount.value")
  // Stable, low-cardinality category used to count rejects: "missing_field", "invalid_amount",
  // "unknown_currency", "invalid_timestamp", "malformed_record", "invalid_value", ...
  std::string reason;
  std::string message;  // human-readable detail, e.g. "amount '12,5' has invalid character ','"
  // Byte offset of a syntax error within the record (JSON); -1 when not applicable.
  int64_t byte_offset = -1;

  // "HI-Small.csv:17: Amount Paid: amount '12,5' has invalid character ','"
  // (line and field are left out when 0 / empty).
  std::string ToString() const;
  // InvalidArgument whose message is ToString() followed by " [reason]", for APIs that return
  // absl::Status ("<request>: $.amount.value: ... [invalid_amount]").
  absl::Status ToStatus() const;
  // Resets every field (keeps string capacity).
  void Clear();
};

}  // namespace vigil

#endif  // VIGIL_INGEST_RECORD_ERROR_H_
