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

}  // namespace vigil
