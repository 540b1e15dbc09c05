#include "vigil/model/cuda/testing_forest_kernels.h"

#include <variant>

#include "vigil/model/cuda/forest_predict_kernels.cuh"

namespace vigil::cuda {
namespace {

// kRows4 with the rows staged plain whatever their width (to weigh occupancy against
// instructions per step on models the expanded row would take).
cudaError_t LaunchRowsPlain(const ForestView& f, const float* rows, uint32_t n, float* margins,
                            cudaStream_t stream) {
  const uint32_t blocks = (n + kRowsBlock - 1) / kRowsBlock;
  const size_t bytes = size_t{f.num_inputs} * kRowsBlock * sizeof(float);
  if (bytes > kMaxStagedBytes) return LaunchRows<4>(f, rows, n, margins, stream);
  return Launch(PredictRowsKernel<4, Staging::kPlain>, blocks, kRowsBlock, bytes, stream, f, rows,
                n, margins);
}


const char* ComparisonVariantName(ComparisonVariant v) {
  switch (v) {
    case ComparisonVariant::kRows1: return "rows1";
    case ComparisonVariant::kRows2: return "rows2";
    case ComparisonVariant::kRows4: return "rows4";
    case ComparisonVariant::kRows4Plain: return "rows4plain";
    case ComparisonVariant::kTrees1024: return "trees1024";
    case ComparisonVariant::kRows4Ranked: return "rows4ranked";
    case ComparisonVariant::kRows8Ranked: return "rows8ranked";
  }
  return "?";
}

cudaError_t LaunchComparison(const ForestView& f, const float* rows, uint32_t n, float* margins,
                             ComparisonVariant variant, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (variant) {
    case ComparisonVariant::kRows1: return LaunchRows<1>(f, rows, n, margins, stream);
    case ComparisonVariant::kRows2: return LaunchRows<2>(f, rows, n, margins, stream);
    case ComparisonVariant::kRows4: return LaunchRows<4>(f, rows, n, margins, stream);
    case ComparisonVariant::kRows4Plain: return LaunchRowsPlain(f, rows, n, margins, stream);
    case ComparisonVariant::kTrees1024:
      return LaunchTrees<1024, 1024>(f, rows, n, margins, stream);
    case ComparisonVariant::kRows4Ranked: return LaunchRanked<4>(f, rows, n, margins, stream);
    case ComparisonVariant::kRows8Ranked: return LaunchRanked<8>(f, rows, n, margins, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

const char* PredictVariantName(AnyPredictVariant v) {
  if (const PredictVariant* production = std::get_if<PredictVariant>(&v)) {
    return PredictVariantName(*production);
  }
  return ComparisonVariantName(std::get<ComparisonVariant>(v));
}

cudaError_t LaunchPredict(const ForestView& forest, const float* rows, uint32_t n,
                          float* margins, AnyPredictVariant variant, cudaStream_t stream) {
  if (const PredictVariant* production = std::get_if<PredictVariant>(&variant)) {
    return LaunchPredict(forest, rows, n, margins, *production, stream);
  }
  return LaunchComparison(forest, rows, n, margins, std::get<ComparisonVariant>(variant), stream);
}

}  // namespace vigil::cuda
