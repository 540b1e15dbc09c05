// ReferenceProfile: what the model was trained on, per feature, as tools/train.py writes it
// (reference_profile.json): row and missing counts, the decile bins with their counts, mean and
// standard deviation, and a bounded sorted sample (evenly spaced order statistics) for the
// exact two-sample statistics.
//
//   {"feature_schema_version": "vigil.features.v1", "rows": 238735,
//    "features": {"amount_reporting": {"count": 238735, "missing": 0,
//        "bin_edges": [...11], "bin_counts": [...10], "mean": ..., "std": ..., "sample": [...]},
//     ...}}
//
// A feature with no present value has only "count" and "missing". An optional top-level
// "score" entry of the same form profiles the model's score (its probability on the
// validation rows) for the drift of the score distribution. An entry's optional
// "dispersion": {"60": 1.2, "300": 1.7, ...} maps window lengths in seconds to how much the
// training stream's windows varied beyond sampling noise (factors >= 1).
//
// Thread safety: immutable after Load.
#ifndef VIGIL_DRIFT_REFERENCE_PROFILE_H_
#define VIGIL_DRIFT_REFERENCE_PROFILE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/drift/binned.h"
#include "vigil/drift/two_sample.h"

namespace vigil::drift {

struct FeatureReference {
  uint64_t count = 0;    // rows
  uint64_t missing = 0;  // of which missing (NaN)
  // Present when the feature had values in training.
  std::optional<ReferenceBins> bins;
  std::optional<ReferenceSample> sample;
  double mean = 0, stddev = 0;
  // How much the training stream's own windows varied beyond sampling noise, by window length:
  // (seconds, factor >= 1), ascending. A window of n rows varies like an iid sample of
  // n / factor rows (tools/train.py, "dispersion"). Empty: not measured (treated as 1).
  std::vector<std::pair<double, double>> dispersion;

  // The factor for a window of "seconds": log-linear interpolation between measured lengths,
  // the nearest measured one outside their range, 1 when none was measured.
  double DispersionAt(double seconds) const;
};

class ReferenceProfile {
 public:
  // Reads a profile (JSON text; "file" names it in errors). Errors name the feature and the
  // member that is wrong.
  static absl::StatusOr<ReferenceProfile> Parse(std::string_view json, std::string_view file);
  static absl::StatusOr<ReferenceProfile> Load(const std::string& path);

  const std::string& feature_schema_version() const { return schema_version_; }
  uint64_t rows() const { return rows_; }
  const std::map<std::string, FeatureReference, std::less<>>& features() const {
    return features_;
  }
  const FeatureReference* Find(std::string_view feature) const;
  // The model score's reference, when the profile has one.
  const std::optional<FeatureReference>& score() const { return score_; }

 private:
  std::string schema_version_;
  uint64_t rows_ = 0;
  std::map<std::string, FeatureReference, std::less<>> features_;
  std::optional<FeatureReference> score_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_REFERENCE_PROFILE_H_
