#include "vigil/model/cuda/forest_kernels.h"

#include <algorithm>
#include <utility>

#include "vigil/model/cuda/forest_predict_kernels.cuh"
#include "vigil/model/cuda/ranked_forest.h"

namespace vigil::cuda {
namespace {

// ---- TreeSHAP ----

constexpr int kShapMaxStagedBytes = 160 * 1024;

struct QuadratureArgs {
  double t[32], w[32];
};

// Whether a row whose value of element k's input is v follows all of element k's edges.
__device__ __forceinline__ bool FollowsElement(const ForestView& f, float v, uint32_t k) {
  bool follows = true;
  const uint32_t edge_end = __ldg(f.element_edge_begin + k + 1);
  for (uint32_t e = __ldg(f.element_edge_begin + k); e < edge_end; ++e) {
    const uint2 raw = __ldg(reinterpret_cast<const uint2*>(f.edges) + e);
    ShapEdge edge;
    edge.threshold = __uint_as_float(raw.x);
    edge.goes_left = static_cast<uint8_t>(raw.y & 0xFF);
    edge.default_left = static_cast<uint8_t>((raw.y >> 8) & 0xFF);
    follows = follows && Follows(v, edge);
  }
  return follows;
}

// Paths of width W have at most 2W elements (forest_layout.h); up to kShapUnrolledElements the
// kernel holds a path's elements in registers and forms each element's integrand, the product of
// the other elements' factors, from prefix and suffix products: no division, and the elements'
// loads issued together. Wider paths divide the product of all factors by the element's own.
constexpr int kShapUnrolledElements = 8;

// One thread per row, one block per (rows, slice of a width group's paths). Per path the thread
// reads its row's one-fractions, forms at each quadrature node the product of the other
// elements' factors for each element, integrates, and adds v (o - z) times that integral to the
// element's contribution in shared memory. The block's contributions go to "out" with one atomic
// add per (row, feature).
template <int W>
__global__ void ShapKernel(ForestView f, const float* __restrict__ rows, uint32_t n,
                           uint32_t rows_per_block, uint32_t path_begin, uint32_t path_end,
                           uint32_t paths_per_slice, QuadratureArgs quadrature,
                           double* __restrict__ out) {
  extern __shared__ double shared[];
  const uint32_t inputs = f.num_inputs;
  double* phi = shared;                                           // [inputs][rows_per_block]
  float* x = reinterpret_cast<float*>(phi + inputs * rows_per_block);  // [inputs][rows]
  const uint32_t first = blockIdx.x * rows_per_block;
  const uint32_t count = min(rows_per_block, n - first);
  StageRows(rows, first, count, inputs, rows_per_block, x);
  for (uint32_t k = threadIdx.x; k < inputs * rows_per_block; k += blockDim.x) phi[k] = 0;
  __syncthreads();
  const uint32_t r = threadIdx.x;
  const uint32_t p_begin = path_begin + blockIdx.y * paths_per_slice;
  const uint32_t p_end = min(path_end, p_begin + paths_per_slice);
  if (r < count) {
    for (uint32_t p = p_begin; p < p_end; ++p) {
      const uint32_t e_begin = __ldg(f.path_element_begin + p);
      const uint32_t e_end = __ldg(f.path_element_begin + p + 1);
      const double value = __ldg(f.path_value + p);
      if constexpr (2 * W <= kShapUnrolledElements) {
        constexpr int kE = 2 * W;
        // Elements past the path's end are padding with z = o = 1: a factor of 1 and no
        // contribution.
        uint32_t input[kE];
        double z[kE], o[kE], integral[kE];
#pragma unroll
        for (int k = 0; k < kE; ++k) {
          const bool real = e_begin + k < e_end;
          const uint32_t e = real ? e_begin + k : e_begin;
          input[k] = real ? __ldg(f.element_input + e) : 0;
          z[k] = real ? __ldg(f.element_zero + e) : 1.0;
          o[k] = !real || FollowsElement(f, x[input[k] * rows_per_block + r], e) ? 1.0 : 0.0;
          integral[k] = 0;
        }
#pragma unroll
        for (int q = 0; q < W; ++q) {
          double factor[kE], others[kE];
#pragma unroll
          for (int k = 0; k < kE; ++k) factor[k] = fma(o[k] - z[k], quadrature.t[q], z[k]);
          double prefix = 1;
#pragma unroll
          for (int k = 0; k < kE; ++k) {
            others[k] = prefix;
            prefix *= factor[k];
          }
          double suffix = 1;
#pragma unroll
          for (int k = kE - 1; k >= 0; --k) {
            others[k] *= suffix;
            suffix *= factor[k];
          }
#pragma unroll
          for (int k = 0; k < kE; ++k) integral[k] = fma(quadrature.w[q], others[k], integral[k]);
        }
#pragma unroll
        for (int k = 0; k < kE; ++k) {
          if (e_begin + k < e_end && o[k] != z[k]) {
            phi[input[k] * rows_per_block + r] += value * (o[k] - z[k]) * integral[k];
          }
        }
      } else {
        double product[W];
#pragma unroll
        for (int q = 0; q < W; ++q) product[q] = 1;
        uint64_t one = 0;
        for (uint32_t k = e_begin; k < e_end; ++k) {
          const uint32_t input = __ldg(f.element_input + k);
          const bool follows = FollowsElement(f, x[input * rows_per_block + r], k);
          if (follows) one |= uint64_t{1} << (k - e_begin);
          const double z = __ldg(f.element_zero + k), o = follows ? 1.0 : 0.0;
#pragma unroll
          for (int q = 0; q < W; ++q) product[q] *= fma(o - z, quadrature.t[q], z);
        }
        for (uint32_t k = e_begin; k < e_end; ++k) {
          const double z = __ldg(f.element_zero + k);
          const double o = (one >> (k - e_begin)) & 1 ? 1.0 : 0.0;
          if (o == z) continue;  // no contribution (and a zero factor when both are 0)
          double sum = 0;
#pragma unroll
          for (int q = 0; q < W; ++q) {
            sum += quadrature.w[q] * product[q] / fma(o - z, quadrature.t[q], z);
          }
          phi[__ldg(f.element_input + k) * rows_per_block + r] += value * (o - z) * sum;
        }
      }
    }
  }
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < inputs * count; k += blockDim.x) {
    const uint32_t row = k / inputs, input = k - row * inputs;
    const double v = phi[input * rows_per_block + row];
    if (v != 0) atomicAdd(out + static_cast<size_t>(first + row) * (inputs + 1) + input, v);
  }
}

template <int W>
cudaError_t LaunchShapGroup(const ForestView& f, const float* rows, uint32_t n, double* out,
                            size_t g, int multiprocessors, cudaStream_t stream) {
  const uint32_t path_begin = f.group_begin[g], path_end = f.group_begin[g + 1];
  if (path_begin == path_end || n == 0) return cudaSuccess;
  const uint32_t rows_per_block = ShapRowsPerBlock(f.num_inputs);
  const uint32_t row_blocks = (n + rows_per_block - 1) / rows_per_block;
  // Enough slices of the paths that the grid fills the device four times over, each slice long
  // enough (64 paths) that staging the rows is amortized.
  const uint32_t paths = path_end - path_begin;
  const uint32_t wanted = std::max<uint32_t>(1, 4u * static_cast<uint32_t>(multiprocessors) / row_blocks);
  const uint32_t slices = std::min(wanted, std::max<uint32_t>(1, paths / 64));
  const uint32_t per_slice = (paths + slices - 1) / slices;
  const size_t shared = size_t{f.num_inputs} * rows_per_block * (sizeof(double) + sizeof(float));
  if (shared > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        ShapKernel<W>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  QuadratureArgs q{};
  const ShapQuadrature& table = ShapQuadrature::Get();
  for (int i = 0; i < 32; ++i) {
    q.t[i] = table.t[g][static_cast<size_t>(i)];
    q.w[i] = table.w[g][static_cast<size_t>(i)];
  }
  const dim3 grid(row_blocks, (paths + per_slice - 1) / per_slice);
  ShapKernel<W><<<grid, rows_per_block, shared, stream>>>(f, rows, n, rows_per_block, path_begin,
                                                          path_end, per_slice, q, out);
  return cudaGetLastError();
}

template <size_t... G>
cudaError_t LaunchShapGroups(const ForestView& f, const float* rows, uint32_t n, double* out,
                             int multiprocessors, cudaStream_t stream, std::index_sequence<G...>) {
  cudaError_t result = cudaSuccess;
  ((result = result == cudaSuccess
                 ? LaunchShapGroup<kShapWidths[G]>(f, rows, n, out, G, multiprocessors, stream)
                 : result),
   ...);
  return result;
}

}  // namespace

const char* PredictVariantName(PredictVariant v) {
  switch (v) {
    case PredictVariant::kTrees4: return "trees4";
    case PredictVariant::kTrees16: return "trees16";
    case PredictVariant::kTrees64: return "trees64";
    case PredictVariant::kTrees256: return "trees256";
    case PredictVariant::kRows16Ranked: return "rows16ranked";
  }
  return "?";
}

PredictVariant ChoosePredictVariant(uint32_t n, uint32_t num_trees, int multiprocessors) {
  // Enough rows for the one-thread-per-row kernel to fill every SM with 8 warps: it wins, over
  // the ranked nodes sixteen trees at a time where the forest has them (it runs kRows4 where not).
  const uint64_t full = static_cast<uint64_t>(multiprocessors) * 8 * 32;
  if (n >= full) return PredictVariant::kRows16Ranked;
  // Fewer rows: spread each row's trees over threads until the device has that many threads.
  const uint64_t per_row = (full + n - 1) / std::max<uint32_t>(n, 1);
  if (per_row <= 4 || num_trees < 64) return PredictVariant::kTrees4;
  if (per_row <= 16) return PredictVariant::kTrees16;
  if (per_row <= 64) return PredictVariant::kTrees64;
  return PredictVariant::kTrees256;
}

cudaError_t LaunchPredict(const ForestView& f, const float* rows, uint32_t n, float* margins,
                          PredictVariant variant, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (variant) {
    case PredictVariant::kTrees4: return LaunchTrees<4>(f, rows, n, margins, stream);
    case PredictVariant::kTrees16: return LaunchTrees<16>(f, rows, n, margins, stream);
    case PredictVariant::kTrees64: return LaunchTrees<64>(f, rows, n, margins, stream);
    case PredictVariant::kTrees256: return LaunchTrees<256>(f, rows, n, margins, stream);
    case PredictVariant::kRows16Ranked: return LaunchRanked<16>(f, rows, n, margins, stream);
  }
  return cudaErrorInvalidValue;
}

uint32_t ShapRowsPerBlock(uint32_t num_inputs) {
  const size_t per_row = size_t{std::max<uint32_t>(num_inputs, 1)} * (sizeof(double) + sizeof(float));
  const size_t fit = kShapMaxStagedBytes / per_row;
  if (fit >= 128) return 128;
  return static_cast<uint32_t>(fit / 32 * 32);
}

cudaError_t LaunchShap(const ForestView& f, const float* rows, uint32_t n, double* out,
                       int multiprocessors, cudaStream_t stream) {
  if (ShapRowsPerBlock(f.num_inputs) == 0) return cudaErrorInvalidValue;
  return LaunchShapGroups(f, rows, n, out, multiprocessors, stream,
                          std::make_index_sequence<kShapWidths.size()>());
}

}  // namespace vigil::cuda
