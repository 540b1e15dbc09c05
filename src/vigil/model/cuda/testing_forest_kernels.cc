#include "vigil/model/cuda/testing_forest_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/cuda/cuda_scorer.h"

namespace vigil::cuda {
namespace {

absl::Status Check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("CUDA ", call, ": ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")"));
}

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};

template <typename T>
absl::Status Allocate(size_t count, std::unique_ptr<T, DeviceFree>* out) {
  void* p = nullptr;
  if (absl::Status s = Check(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)), "cudaMalloc");
      !s.ok()) {
    return s;
  }
  out->reset(static_cast<T*>(p));
  return absl::OkStatus();
}

}  // namespace

absl::Status MarginsWithVariant(const CudaScorer& scorer, absl::Span<const double> rows, size_t n,
                                AnyPredictVariant variant, absl::Span<float> out) {
  const ForestView& forest = CudaScorerTesting::Forest(scorer);
  VIGIL_RETURN_IF_ERROR(Check(cudaSetDevice(scorer.device().ordinal), "cudaSetDevice"));
  std::vector<float> x(n * forest.num_inputs);
  CudaScorerTesting::Gather(scorer, rows, 0, n, x.data());
  std::unique_ptr<float, DeviceFree> device_rows, device_margins;
  VIGIL_RETURN_IF_ERROR(Allocate(x.size(), &device_rows));
  VIGIL_RETURN_IF_ERROR(Allocate(n, &device_margins));
  VIGIL_RETURN_IF_ERROR(Check(
      cudaMemcpy(device_rows.get(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice),
      "cudaMemcpy"));
  VIGIL_RETURN_IF_ERROR(Check(LaunchPredict(forest, device_rows.get(), static_cast<uint32_t>(n),
                                            device_margins.get(), variant, nullptr),
                              "LaunchPredict"));
  return Check(
      cudaMemcpy(out.data(), device_margins.get(), n * sizeof(float), cudaMemcpyDeviceToHost),
      "cudaMemcpy");
}

}  // namespace vigil::cuda
