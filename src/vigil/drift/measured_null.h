// MeasuredNull: how large each subject's drift score was, window by window, over a stream the
// model was trained on — the no-drift distribution of a real stream, for the monitor's
// calibration.
//
// Why: the simulated null (null_calibration.h) knows sampling noise and, through the profile's
// dispersion, the average extra variation of the training stream; real streams are bursty
// (payroll runs, batch files, campaigns), so their windows have heavier tails than either. A
// window is drift only if it is unusual both against sampling noise at its size and against the
// windows of the training stream: with a measured null the monitor takes the larger of the two
// no-drift probabilities. `vigil replay TRAIN --drift-null-out FILE` measures it with the
// monitor's own windows, weights and smoothing; a monitor refuses one measured with others.
//
//   {"format": "vigil.drift-null.v1", "feature_schema_version": "vigil.features.v1",
//    "weights": {"kl": 0.4, "js": 0.35, "psi": 0.25}, "pseudo_count": 0.5,
//    "windows": [{"name": "short", "size_s": 60, "slide_s": 10, "half_life_s": 0,
//                 "evaluations": 86000, "subjects": {"amount_reporting": [sorted scores], ...}}]}
//
// Each subject's scores are kept as at most 2,000 evenly spaced order statistics (the minimum
// and maximum included).
//
// Thread safety: immutable after Parse/Load.
#ifndef VIGIL_DRIFT_MEASURED_NULL_H_
#define VIGIL_DRIFT_MEASURED_NULL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/drift/drift_config.h"

namespace vigil::drift {

class MeasuredNull {
 public:
  static constexpr size_t kMaxScores = 2000;

  struct Window {
    DriftWindowSpec spec;
    uint64_t evaluations = 0;
    std::map<std::string, std::vector<double>> scores;  // per subject, sorted
  };

  std::string feature_schema_version;
  DriftScoreWeights weights;
  double pseudo_count = 0.5;
  std::vector<Window> windows;

  // Keeps at most kMaxScores evenly spaced order statistics of "scores" (sorted first).
  static std::vector<double> Compress(std::vector<double> scores);

  std::string ToJson() const;
  // Errors name the member.
  static absl::StatusOr<MeasuredNull> Parse(std::string_view json, std::string_view file);
  static absl::StatusOr<MeasuredNull> Load(const std::string& path);
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_MEASURED_NULL_H_
