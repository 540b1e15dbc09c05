// The plain GPU forest walk the benchmark measures the tuned kernels against: one thread per
// row, the model's own node arrays (absolute child indices, one array per field), a loop to the
// leaf, rows read from global memory. Benchmark code only.
#ifndef VIGIL_MODEL_CUDA_SIMPLE_FOREST_KERNEL_H_
#define VIGIL_MODEL_CUDA_SIMPLE_FOREST_KERNEL_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace vigil::cuda {

struct SimpleForest {
  const int32_t* feature;  // -1 at a leaf
  const float* threshold;
  const int32_t* left;
  const int32_t* right;
  const uint8_t* default_left;
  const float* value;
  const uint32_t* root;
  uint32_t num_trees;
  uint32_t num_inputs;
  float base_margin;
};

cudaError_t LaunchSimplePredict(const SimpleForest& forest, const float* rows, uint32_t n,
                                float* margins, cudaStream_t stream);

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_SIMPLE_FOREST_KERNEL_H_
