// The examiner's export of an audit log (docs/audit-cli.md, "export"): JSON Lines, one record
// per line, as the caller's RecordViewFn shows it (the view is made with the JSON writers of
// ingest and decision, which this module may not use: proof_bundle.h).
//
// Sealed personal fields (record_sealer.h): with a RecordOpener they are opened and shown like
// any other; without one, each is shown in its place as {"sealed": "<base64 of the sealed
// bytes>"}. Either way a record with sealed fields names its data key ("data_key_id", the last
// member). An export that holds sealed fields also holds, before the first record sealed under
// each data key, that key as the log stores it (wrapped): {"data_key": {WrappedDataKey JSON}}.
// So the file is self-contained: OpenExport opens it offline with the key-encryption key's
// private half, and what it writes is what an export with the key would have written.
//
//   VIGIL_ASSIGN_OR_RETURN(ExportSummary s,
//                          WriteExport(log, {.since = t0}, /*opener=*/nullptr, view, write_line));
//
// Thread safety: free functions; the log is read through its thread-safe accessors.
#ifndef VIGIL_AUDIT_AUDIT_EXPORT_H_
#define VIGIL_AUDIT_AUDIT_EXPORT_H_

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/proof_bundle.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/common/clock.h"
#include "vigil/crypto/envelope.h"

namespace vigil::audit {

// Which records: those decided in [since, until) (either bound may be left out), in log order;
// or, when transaction_id is set, only that transaction's record.
struct ExportRange {
  std::optional<UtcTime> since;
  std::optional<UtcTime> until;
  std::string transaction_id;
  // Paging (by time only): start at this sequence, and stop after max_records record lines
  // (0: no limit); ExportSummary::next_from then says where the next page starts.
  uint64_t from = 0;
  uint64_t max_records = 0;
};

struct ExportSummary {
  uint64_t examined = 0;  // records read (export) or lines read (OpenExport)
  uint64_t exported = 0;  // record lines written
  uint64_t sealed = 0;    // of them, records whose fields are shown sealed (export) or were opened
  uint64_t data_keys = 0; // data key lines written (export) or read (OpenExport)
  // Set when the export stopped at ExportRange::max_records with records left to examine: the
  // ExportRange::from of the next page.
  std::optional<uint64_t> next_from;
};

// Called with each line, without its line end; an error stops the export and is returned.
using ExportLineFn = absl::FunctionRef<absl::Status(std::string_view line)>;

// Writes the export of "range" of "log", each line through "line". "opener" (may be null):
// opens the sealed fields; "*opener" must remain live during the call. Errors: kNotFound when
// range.transaction_id is not in the log ("transaction X is not in the audit log"); kDataLoss
// for a damaged log (a record that does not decode, an index entry pointing at another record,
// a record sealed under a data key the log does not hold); the opener's errors, prefixed with
// the record's sequence; store errors; line's errors.
absl::StatusOr<ExportSummary> WriteExport(const AuditLog& log, const ExportRange& range,
                                          const RecordOpener* opener, RecordViewFn view,
                                          ExportLineFn line);

// One record's export line: "view" of it, its sealed fields (if any remain) shown as
// {"sealed": "<base64>"} in their places and, for a record with sealed fields, "data_key_id"
// added. Equal to view(record, leaf_hash) for a record written in the clear.
std::string ExportRecordLine(const AuditRecord& record, const Hash& leaf_hash, RecordViewFn view);

// The line that carries a data key in an export: {"data_key": {...}}.
std::string DataKeyLine(const crypto::WrappedDataKey& key);

// Reads an export from "in" and writes it through "line" with its sealed fields opened by
// "opener", which learns the export's data keys (AddDataKey) as it reads them; the data key
// lines are not written. Lines of records written in the clear are copied as they are.
// Errors: kInvalidArgument naming the line that is not an export line; the opener's errors
// (naming the line); line's errors.
absl::StatusOr<ExportSummary> OpenExport(std::istream& in, RecordOpener& opener,
                                         ExportLineFn line);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_AUDIT_EXPORT_H_
