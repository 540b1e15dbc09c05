// The scoring-kernel variants kept for comparison beside the ones production launches
// (PredictVariant, forest_kernels.h): cuda_scorer_benchmark times every variant
// (variant/M/N/V) against the production choice, and cuda_scorer_test checks that each gives
// the production kernels' bits. Test and benchmark code only: the target model_cuda_testing,
// which production does not link, builds it, and tools/check_layering.py refuses this header in
// production code.
//
// Thread safety: the launchers are as LaunchPredict's (enqueue on the stream, never
// synchronize); MarginsWithVariant is as safe as the scorer's own calls.
#ifndef VIGIL_MODEL_CUDA_TESTING_FOREST_KERNELS_H_
#define VIGIL_MODEL_CUDA_TESTING_FOREST_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <variant>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "vigil/model/cuda/forest_kernels.h"

namespace vigil {
class CudaScorer;
}  // namespace vigil

namespace vigil::cuda {

// kRowsN: one thread per row, walking all trees in order, N trees at a time over the float
// nodes (production runs kRows4 only inside kRows16Ranked, for a forest without ranked nodes).
// kRows4Plain: kRows4 with its rows staged plain (half the shared memory of the expanded row,
// more instructions a step). kTrees1024: a block of 1,024 threads for one row, a tree each.
// kRows4Ranked and kRows8Ranked: kRows16Ranked's walk four and eight trees at a time (kRows4
// where the forest has no ranked nodes).
enum class ComparisonVariant : int {
  kRows1,
  kRows2,
  kRows4,
  kRows4Plain,
  kTrees1024,
  kRows4Ranked,
  kRows8Ranked,
};

// Any scoring kernel variant: production's or a comparison's.
using AnyPredictVariant = std::variant<PredictVariant, ComparisonVariant>;

// Every variant, in the order the benchmark lists them.
inline constexpr AnyPredictVariant kAllPredictVariants[] = {
    ComparisonVariant::kRows1,       ComparisonVariant::kRows2,
    ComparisonVariant::kRows4,       PredictVariant::kTrees4,
    PredictVariant::kTrees16,        PredictVariant::kTrees64,
    PredictVariant::kTrees256,       ComparisonVariant::kRows4Plain,
    ComparisonVariant::kTrees1024,   ComparisonVariant::kRows4Ranked,
    ComparisonVariant::kRows8Ranked, PredictVariant::kRows16Ranked};

// As the PredictVariant overloads of forest_kernels.h, for any variant.
const char* PredictVariantName(AnyPredictVariant v);
cudaError_t LaunchPredict(const ForestView& forest, const float* rows, uint32_t n, float* margins,
                          AnyPredictVariant variant, cudaStream_t stream);

// The margins of the first n of "rows" (the scorer's columns, as Margins takes them) through
// one variant, launched directly on device buffers made for the call, into out[0, n).
absl::Status MarginsWithVariant(const CudaScorer& scorer, absl::Span<const double> rows, size_t n,
                                AnyPredictVariant variant, absl::Span<float> out);

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_TESTING_FOREST_KERNELS_H_
