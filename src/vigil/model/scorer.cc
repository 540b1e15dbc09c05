#include "vigil/model/scorer.h"

namespace vigil {

std::string_view ScoreBackendName(ScoreBackend b) {
  switch (b) {
    case ScoreBackend::kNone: return "";
    case ScoreBackend::kCpu: return "cpu";
    case ScoreBackend::kGpu: return "gpu";
    case ScoreBackend::kCpuFallback: return "cpu-fallback";
  }
  return "";
}

absl::StatusOr<Attribution> Scorer::Attribute(absl::Span<const double>) const {
  return absl::UnimplementedError(
      "this scorer wraps another: attributions come from the scorer holding the model");
}

}  // namespace vigil
