// FeatureRowWriter: writes feature vectors as CSV, the training set for the model.
//
// Columns: tx_id, timestamp (RFC 3339 UTC), originator and beneficiary (the parties' account
// ids, for account-level evaluation), every feature of the schema in order, label (1/0, empty
// when the source has none), typology. Numbers use the shortest text that reads
// back to the same double; NaN (a missing value) is an empty cell. Ids and typologies are quoted
// when they contain a comma, quote or line break (RFC 4180).
//
// The writer tracks how many bytes it has written so a replay can record a durable offset in a
// checkpoint and, after a crash, truncate the file to exactly that offset and append.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_EVALUATION_FEATURE_ROW_WRITER_H_
#define VIGIL_EVALUATION_FEATURE_ROW_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/feature_schema.h"
#include "vigil/core/transaction.h"

namespace vigil::evaluation {

class FeatureRowWriter {
 public:
  // Creates "path" (replacing it) and writes the header.
  static absl::StatusOr<std::unique_ptr<FeatureRowWriter>> Create(const std::string& path,
                                                                   const FeatureSchema& schema);
  // Opens an existing file written by this class, truncates it to "offset" bytes (the end of a
  // row recorded by a checkpoint) and continues after it.
  static absl::StatusOr<std::unique_ptr<FeatureRowWriter>> ResumeAt(const std::string& path,
                                                                     int64_t offset);
  ~FeatureRowWriter();

  // Buffers one row; writes to the file when the buffer fills.
  absl::Status Append(const Transaction& tx, absl::Span<const double> values);
  // Writes the buffer and fdatasyncs the file: every byte before offset() is durable.
  absl::Status Sync();
  // Bytes of the file including buffered ones.
  int64_t offset() const { return offset_; }

 private:
  FeatureRowWriter(int fd, std::string path, int64_t offset);
  absl::Status FlushBuffer();

  int fd_;
  std::string path_;
  int64_t offset_;
  std::string buffer_;
};

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_FEATURE_ROW_WRITER_H_
