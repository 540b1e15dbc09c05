// ReadFeatureRows: reads back the feature rows FeatureRowWriter writes (`vigil replay
// --features-out`), the training and evaluation sets of `vigil model train` and `vigil model
// evaluate`: tx_id, timestamp, the features, label, typology (feature_row_writer.h).
//
// Thread safety: a pure function.
#ifndef VIGIL_EVALUATION_FEATURE_ROW_READER_H_
#define VIGIL_EVALUATION_FEATURE_ROW_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/common/clock.h"

namespace vigil::evaluation {

struct FeatureRows {
  std::vector<std::string> names;  // the feature columns, in the file's order
  std::vector<std::string> ids;
  std::vector<UtcTime> times;  // each row's event time
  // The parties' account ids ("" in a file without those columns).
  std::vector<std::string> originators, beneficiaries;
  // 1 laundering, 0 not, -1 when the source carries no label for the row.
  std::vector<int8_t> labels;
  std::vector<std::string> typologies;  // "" for none
  std::vector<double> values;           // row-major; NaN for an empty cell (a missing value)

  size_t rows() const { return ids.size(); }
};

// Errors: the file cannot be read (kNotFound, kPermissionDenied ...); kInvalidArgument naming
// the file, the line and the column for a header that is not FeatureRowWriter's, a row of
// another width, a timestamp, number or label that does not parse.
absl::StatusOr<FeatureRows> ReadFeatureRows(const std::string& path);

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_FEATURE_ROW_READER_H_
