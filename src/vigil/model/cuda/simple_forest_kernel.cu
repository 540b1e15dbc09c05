#include "vigil/model/cuda/simple_forest_kernel.h"

namespace vigil::cuda {
namespace {

__global__ void SimplePredictKernel(SimpleForest f, const float* rows, uint32_t n,
                                    float* margins) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  const float* x = rows + static_cast<size_t>(r) * f.num_inputs;
  float margin = f.base_margin;
  for (uint32_t t = 0; t < f.num_trees; ++t) {
    int32_t i = static_cast<int32_t>(f.root[t]);
    while (f.feature[i] >= 0) {
      const float v = x[f.feature[i]];
      const bool left = v != v ? f.default_left[i] != 0 : v < f.threshold[i];
      i = left ? f.left[i] : f.right[i];
    }
    margin += f.value[i];
  }
  margins[r] = margin;
}

}  // namespace

cudaError_t LaunchSimplePredict(const SimpleForest& forest, const float* rows, uint32_t n,
                                float* margins, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  SimplePredictKernel<<<(n + 255) / 256, 256, 0, stream>>>(forest, rows, n, margins);
  return cudaGetLastError();
}

}  // namespace vigil::cuda
