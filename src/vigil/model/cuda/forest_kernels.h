// The CUDA kernels of the GPU forest (scoring and TreeSHAP) and their launchers. Internal to
// model/cuda: nothing outside it includes this header (CUDA types stay inside the module).
//
// All launchers enqueue on "stream" and return the launch's error (cudaGetLastError); they
// never synchronize.
#ifndef VIGIL_MODEL_CUDA_FOREST_KERNELS_H_
#define VIGIL_MODEL_CUDA_FOREST_KERNELS_H_

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "absl/types/span.h"
#include "vigil/model/cuda/forest_layout.h"
#include "vigil/model/cuda/forest_node.h"

namespace vigil::cuda {

// Device pointers to an uploaded ForestLayout (DeviceForest owns them).
struct ForestView {
  const ForestNode* nodes = nullptr;
  const uint32_t* tree_root = nullptr;
  const uint8_t* tree_depth = nullptr;
  uint32_t num_trees = 0;
  uint32_t num_inputs = 0;
  float base_margin = 0;

  const double* path_value = nullptr;
  const uint32_t* path_element_begin = nullptr;
  const uint32_t* element_input = nullptr;
  const double* element_zero = nullptr;
  const uint32_t* element_edge_begin = nullptr;
  const ShapEdge* edges = nullptr;
  std::array<uint32_t, kShapWidths.size() + 1> group_begin{};

  // RankedForest (ranked_forest.h); ranked_words is null when the model's nodes do not fit.
  const uint32_t* ranked_words = nullptr;
  const uint32_t* ranked_trees = nullptr;  // RankedForest::tree_header (16-byte aligned)
  const uint32_t* ranked_roots = nullptr;  // RankedForest::root_word (16-byte aligned)
  const float* leaf_value = nullptr;
  const uint32_t* threshold_begin = nullptr;
  const float* search = nullptr;
  const uint32_t* search_begin = nullptr;
  const uint32_t* search_height = nullptr;
  uint32_t offset_bits = 0, slot_bits = 0;
};

// How a scoring launch spreads the work: the variants production launches (ChoosePredictVariant
// picks one per batch). kTreesN: N threads per row, each walking every N-th tree; the row's leaf
// values meet in shared memory and one thread sums them in tree order. kRows16Ranked: one thread
// per row, walking all trees in order, sixteen at a time (independent walks overlap), over
// RankedForest's 4-byte nodes and per-row bins; where the forest has no ranked nodes (not
// uploaded, or the model's do not fit 4 bytes) it runs the same walk four trees at a time over
// the float nodes. Every variant sums in tree order: the margins are the same bits. The variants
// kept only for the benchmark's comparisons and the parity tests are in
// testing_forest_kernels.h.
enum class PredictVariant : int { kTrees4, kTrees16, kTrees64, kTrees256, kRows16Ranked };
const char* PredictVariantName(PredictVariant v);

// The variant for n rows on a device with "multiprocessors" SMs (measured: docs/gpu.md).
PredictVariant ChoosePredictVariant(uint32_t n, uint32_t num_trees, int multiprocessors);

// margins[i] = the margin of row i; rows: n rows of num_inputs float32 values, row-major.
cudaError_t LaunchPredict(const ForestView& forest, const float* rows, uint32_t n,
                          float* margins, PredictVariant variant, cudaStream_t stream);

// Rows per block of the SHAP kernel for this many inputs; 0 when they do not fit.
uint32_t ShapRowsPerBlock(uint32_t num_inputs);

// Adds each row's SHAP contributions (no bias) to out[i * (num_inputs + 1) + feature]; out must
// be zeroed first. "multiprocessors" sizes the grid.
cudaError_t LaunchShap(const ForestView& forest, const float* rows, uint32_t n, double* out,
                       int multiprocessors, cudaStream_t stream);

}  // namespace vigil::cuda

namespace vigil {

class CudaScorer;

// The CudaScorer's device state, for the module's own tests and benchmarks.
struct CudaScorerTesting {
  static const cuda::ForestView& Forest(const CudaScorer& scorer);
  // Rows [first, first + count) of "rows" as the device reads them (float32 model inputs).
  static void Gather(const CudaScorer& scorer, absl::Span<const double> rows, size_t first,
                     size_t count, float* out);
};

}  // namespace vigil

#endif  // VIGIL_MODEL_CUDA_FOREST_KERNELS_H_
