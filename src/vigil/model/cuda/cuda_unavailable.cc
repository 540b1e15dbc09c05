// The CUDA backend's entry points in a build without CUDA (VIGIL_ENABLE_CUDA=OFF, or no nvcc
// at build time): every way in answers kUnavailable, so that a configuration that asks for the
// GPU fails at start with the reason. No CudaScorer can exist in such a build.
#include "vigil/model/cuda/cuda_scorer.h"

namespace vigil {
namespace {

absl::Status NotBuilt() {
  return absl::UnavailableError(
      "this vigil was built without the CUDA backend (VIGIL_ENABLE_CUDA=OFF, or no nvcc at build "
      "time); rebuild with nvcc on PATH, or score on the CPU backend");
}

}  // namespace

struct CudaScorer::Impl {};

bool CudaBackendBuilt() { return false; }

absl::Status CudaScorerOptions::Validate() const { return absl::OkStatus(); }

absl::StatusOr<CudaDeviceInfo> ProbeCudaDevice(int) { return NotBuilt(); }

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(std::shared_ptr<const TreeEnsemble>,
                                                               const FeatureSchema&, std::string,
                                                               CudaScorerOptions) {
  return NotBuilt();
}
absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(
    std::shared_ptr<const TreeEnsemble>, const std::vector<std::string>&, std::string,
    CudaScorerOptions) {
  return NotBuilt();
}

// Unreachable: no instance is ever made in this build.
CudaScorer::CudaScorer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaScorer::~CudaScorer() = default;
const std::string& CudaScorer::model_version() const {
  static const std::string kNone;
  return kNone;
}
size_t CudaScorer::row_width() const { return 0; }
size_t CudaScorer::shap_width() const { return 0; }
const CudaDeviceInfo& CudaScorer::device() const {
  static const CudaDeviceInfo kNone;
  return kNone;
}
CudaScorer::Stats CudaScorer::stats() const { return {}; }
absl::Status CudaScorer::Score(absl::Span<const double>, size_t, absl::Span<double>,
                               const ScoreContext&) const {
  return NotBuilt();
}
absl::Status CudaScorer::Margins(absl::Span<const double>, size_t, absl::Span<float>,
                                 const ScoreContext&) const {
  return NotBuilt();
}
absl::StatusOr<std::vector<Reason>> CudaScorer::Explain(absl::Span<const double>, int) const {
  return NotBuilt();
}
absl::Status CudaScorer::ShapValues(absl::Span<const double>, size_t, absl::Span<double>) const {
  return NotBuilt();
}

}  // namespace vigil
