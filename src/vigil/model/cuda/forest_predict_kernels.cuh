// The scoring kernels of the GPU forest and the templates that launch them, shared by
// forest_kernels.cu (the variants production launches, PredictVariant) and
// testing_forest_kernels.cu (those kept for the benchmark's comparisons and the parity tests).
// Device code: only .cu files of model/cuda include it.
#ifndef VIGIL_MODEL_CUDA_FOREST_PREDICT_KERNELS_CUH_
#define VIGIL_MODEL_CUDA_FOREST_PREDICT_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "vigil/model/cuda/forest_kernels.h"
#include "vigil/model/cuda/forest_node.h"
#include "vigil/model/cuda/ranked_forest.h"

namespace vigil::cuda {
// An unnamed namespace in a header, against the usual rule, so that each .cu has its own copy
// of the kernels it instantiates: whole-program CUDA compilation registers a translation unit's
// kernels with the runtime from that unit, and an instantiation with external linkage made in
// two units would be one host function registered by both.
namespace {

constexpr int kRowsBlock = 128;  // rows per block of the kRowsN kernels
constexpr int kTreesBlock = 256;  // threads per block of the kTreesN kernels
// Leaf values staged per block by the kTreesN kernels (32 KiB).
constexpr int kLeafBuffer = 8192;
// How a block stages its rows in shared memory: expanded (2 * inputs + 1 slots a row: a step
// reads its slot directly) while that takes at most kMaxExpandedBytes, else plain (inputs values a
// row, the slot's NaN resolved at each step: fewer bytes, more instructions) up to
// kMaxStagedBytes, else not at all (read from global memory through L1). Shared memory taken by
// rows is occupancy lost: the demo model (62 inputs) runs 1.6 times faster plain than expanded.
enum class Staging { kExpanded, kPlain, kNone };
constexpr size_t kMaxExpandedBytes = 40 * 1024;
constexpr size_t kMaxStagedBytes = 96 * 1024;

inline Staging ChooseStaging(uint32_t inputs, uint32_t rows_per_block, size_t& bytes) {
  bytes = (2 * size_t{inputs} + 1) * rows_per_block * sizeof(float);
  if (bytes <= kMaxExpandedBytes) return Staging::kExpanded;
  bytes = size_t{inputs} * rows_per_block * sizeof(float);
  if (bytes <= kMaxStagedBytes) return Staging::kPlain;
  bytes = 0;
  return Staging::kNone;
}

// Copies rows [first, first + count) into shared memory feature-major (x[f * stride + r]), so
// that threads of a warp reading one feature of their own rows hit distinct banks.
__device__ __forceinline__ void StageRows(const float* __restrict__ rows, uint32_t first,
                                          uint32_t count, uint32_t inputs, uint32_t stride,
                                          float* x) {
  const uint32_t total = count * inputs;
  for (uint32_t k = threadIdx.x; k < total; k += blockDim.x) {
    const uint32_t r = k / inputs, f = k - r * inputs;
    x[f * stride + r] = rows[static_cast<size_t>(first) * inputs + k];
  }
}

// The same, expanded (forest_node.h): slots 2f and 2f + 1 of each input, and the -inf slot, at
// e[slot * stride + r] for rows r < stride.
__device__ __forceinline__ void StageExpanded(const float* __restrict__ rows, uint32_t first,
                                              uint32_t count, uint32_t inputs, uint32_t stride,
                                              float* e) {
  const uint32_t total = count * inputs;
  for (uint32_t k = threadIdx.x; k < total; k += blockDim.x) {
    const uint32_t r = k / inputs, f = k - r * inputs;
    const float x = rows[static_cast<size_t>(first) * inputs + k];
    const bool missing = x != x;
    e[(2 * f) * stride + r] = missing ? -__builtin_huge_valf() : x;
    e[(2 * f + 1) * stride + r] = missing ? __builtin_huge_valf() : x;
  }
  for (uint32_t r = threadIdx.x; r < stride; r += blockDim.x) {
    e[(2 * inputs) * stride + r] = -__builtin_huge_valf();
  }
}

// Walks ILP trees [t, t + ILP) of one row together; returns their leaf values in tree order
// through "leaf". x(f) reads input f of the row.
template <int ILP, typename Input>
__device__ __forceinline__ void WalkTrees(const ForestView& f, uint32_t t, Input x,
                                          float (&leaf)[ILP]) {
  uint32_t idx[ILP];
  int depth = 0;
#pragma unroll
  for (int k = 0; k < ILP; ++k) {
    const uint32_t tree = t + k < f.num_trees ? t + k : t;
    idx[k] = __ldg(f.tree_root + tree);
    depth = max(depth, static_cast<int>(__ldg(f.tree_depth + tree)));
  }
  for (int d = 0; d < depth; ++d) {
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const uint2 raw = __ldg(reinterpret_cast<const uint2*>(f.nodes) + idx[k]);
      const ForestNode node{__uint_as_float(raw.x), raw.y};
      idx[k] = StepFrom(idx[k], node, x(NodeSlot(node.word)));
    }
  }
#pragma unroll
  for (int k = 0; k < ILP; ++k) leaf[k] = __ldg(&f.nodes[idx[k]].value);
}

template <int ILP, Staging kStage>
__global__ void __launch_bounds__(kRowsBlock)
    PredictRowsKernel(ForestView f, const float* __restrict__ rows, uint32_t n,
                      float* __restrict__ margins) {
  extern __shared__ float staged[];
  const uint32_t first = blockIdx.x * kRowsBlock;
  const uint32_t count = min(static_cast<uint32_t>(kRowsBlock), n - first);
  if constexpr (kStage == Staging::kExpanded) {
    StageExpanded(rows, first, count, f.num_inputs, kRowsBlock, staged);
    __syncthreads();
  } else if constexpr (kStage == Staging::kPlain) {
    StageRows(rows, first, count, f.num_inputs, kRowsBlock, staged);
    __syncthreads();
  }
  const uint32_t r = threadIdx.x;
  if (r >= count) return;
  const float* row = rows + static_cast<size_t>(first + r) * f.num_inputs;
  const auto x = [&](uint32_t slot) {
    if constexpr (kStage == Staging::kExpanded) {
      return staged[slot * kRowsBlock + r];
    } else if constexpr (kStage == Staging::kPlain) {
      return ExpandedSlot(staged + r, f.num_inputs, slot, kRowsBlock);
    } else {
      return ExpandedSlot(row, f.num_inputs, slot);
    }
  };
  float margin = f.base_margin;
  for (uint32_t t = 0; t < f.num_trees; t += ILP) {
    float leaf[ILP];
    WalkTrees<ILP>(f, t, x, leaf);
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      if (t + k < f.num_trees) margin += leaf[k];  // tree order: float sums are order-sensitive
    }
  }
  margins[first + r] = margin;
}

template <int TG, Staging kStage, int kBlock = kTreesBlock>
__global__ void __launch_bounds__(kBlock)
    PredictTreesKernel(ForestView f, const float* __restrict__ rows, uint32_t n,
                       float* __restrict__ margins) {
  constexpr int kRows = kBlock / TG;              // rows per block
  constexpr int kChunk = kLeafBuffer / kRows;     // trees per round
  static_assert(kChunk % 4 == 0);
  __shared__ __align__(16) float leaves[kRows * kChunk];
  extern __shared__ float staged[];
  const uint32_t first = blockIdx.x * kRows;
  const uint32_t count = min(static_cast<uint32_t>(kRows), n - first);
  if constexpr (kStage == Staging::kExpanded) {
    StageExpanded(rows, first, count, f.num_inputs, kRows, staged);
    __syncthreads();
  } else if constexpr (kStage == Staging::kPlain) {
    StageRows(rows, first, count, f.num_inputs, kRows, staged);
    __syncthreads();
  }
  const uint32_t r = threadIdx.x / TG, g = threadIdx.x % TG;
  const bool active = r < count;
  const float* row = rows + static_cast<size_t>(first + (active ? r : 0)) * f.num_inputs;
  const auto x = [&](uint32_t slot) {
    if constexpr (kStage == Staging::kExpanded) {
      return staged[slot * kRows + r];
    } else if constexpr (kStage == Staging::kPlain) {
      return ExpandedSlot(staged + r, f.num_inputs, slot, kRows);
    } else {
      return ExpandedSlot(row, f.num_inputs, slot);
    }
  };
  float margin = f.base_margin;
  for (uint32_t c = 0; c < f.num_trees; c += kChunk) {
    const uint32_t chunk = min(static_cast<uint32_t>(kChunk), f.num_trees - c);
    if (active) {
      // This thread's trees g, g + TG, ...: four walks at a time, so that their loads overlap.
      for (uint32_t k = g; k < chunk; k += 4 * TG) {
        uint32_t idx[4];
        int depth = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t local = k + j * TG < chunk ? k + j * TG : k;
          idx[j] = __ldg(f.tree_root + c + local);
          depth = max(depth, static_cast<int>(__ldg(f.tree_depth + c + local)));
        }
        for (int d = 0; d < depth; ++d) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint2 raw = __ldg(reinterpret_cast<const uint2*>(f.nodes) + idx[j]);
            const ForestNode node{__uint_as_float(raw.x), raw.y};
            idx[j] = StepFrom(idx[j], node, x(NodeSlot(node.word)));
          }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (k + j * TG < chunk) leaves[r * kChunk + k + j * TG] = __ldg(&f.nodes[idx[j]].value);
        }
      }
    }
    __syncthreads();
    if (active && g == 0) {
      // In tree order, one add after another (float sums are order-sensitive): the chain of
      // dependent adds is the floor, so the next 16 values are loaded while these 16 are added.
      const float4* leaf4 = reinterpret_cast<const float4*>(leaves + r * kChunk);
      const float* leaf = leaves + r * kChunk;
      uint32_t k = 0;
      if (chunk >= 16) {
        float4 v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = leaf4[j];
        for (; k + 16 <= chunk; k += 16) {
          float4 next[4];
          if (k + 32 <= chunk) {
#pragma unroll
            for (int j = 0; j < 4; ++j) next[j] = leaf4[(k + 16) / 4 + j];
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            margin += v[j].x;
            margin += v[j].y;
            margin += v[j].z;
            margin += v[j].w;
          }
#pragma unroll
          for (int j = 0; j < 4; ++j) v[j] = next[j];
        }
      }
      for (; k < chunk; ++k) margin += leaf[k];
    }
    __syncthreads();
  }
  if (active && g == 0) margins[first + r] = margin;
}

template <typename Kernel>
cudaError_t Launch(Kernel kernel, uint32_t blocks, uint32_t threads, size_t shared,
                   cudaStream_t stream, const ForestView& f, const float* rows, uint32_t n,
                   float* margins) {
  if (shared > 0) {
    // Static and dynamic shared memory together may pass 48 KiB: opt in to the size.
    const cudaError_t e = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  kernel<<<blocks, threads, shared, stream>>>(f, rows, n, margins);
  return cudaGetLastError();
}

template <int ILP>
cudaError_t LaunchRows(const ForestView& f, const float* rows, uint32_t n, float* margins,
                       cudaStream_t stream) {
  const uint32_t blocks = (n + kRowsBlock - 1) / kRowsBlock;
  size_t bytes = 0;
  switch (ChooseStaging(f.num_inputs, kRowsBlock, bytes)) {
    case Staging::kExpanded:
      return Launch(PredictRowsKernel<ILP, Staging::kExpanded>, blocks, kRowsBlock, bytes, stream,
                    f, rows, n, margins);
    case Staging::kPlain:
      return Launch(PredictRowsKernel<ILP, Staging::kPlain>, blocks, kRowsBlock, bytes, stream, f,
                    rows, n, margins);
    case Staging::kNone:
      break;
  }
  return Launch(PredictRowsKernel<ILP, Staging::kNone>, blocks, kRowsBlock, 0, stream, f, rows, n,
                margins);
}

template <int TG, int kBlock = kTreesBlock>
cudaError_t LaunchTrees(const ForestView& f, const float* rows, uint32_t n, float* margins,
                        cudaStream_t stream) {
  constexpr uint32_t kRows = kBlock / TG;
  const uint32_t blocks = (n + kRows - 1) / kRows;
  size_t bytes = 0;
  switch (ChooseStaging(f.num_inputs, kRows, bytes)) {
    case Staging::kExpanded:
      return Launch(PredictTreesKernel<TG, Staging::kExpanded, kBlock>, blocks, kBlock, bytes,
                    stream, f, rows, n, margins);
    case Staging::kPlain:
      return Launch(PredictTreesKernel<TG, Staging::kPlain, kBlock>, blocks, kBlock, bytes,
                    stream, f, rows, n, margins);
    case Staging::kNone:
      break;
  }
  return Launch(PredictTreesKernel<TG, Staging::kNone, kBlock>, blocks, kBlock, 0, stream, f,
                rows, n, margins);
}

// ---- Ranked nodes (ranked_forest.h) ----

// Stages rows [first, first + count) for the ranked walk, input-major with 2^offset_bits bytes an
// input (ranked_forest.h): each value's bin (by a search of its input's threshold tree) as
// RankedStagedBin, kMissingStaged for a missing value, and bin 0 in the leaves' slot. Consecutive
// threads take one input of consecutive rows, so that a warp's searches share their first steps'
// lines; each thread runs four searches in step, so that their dependent loads overlap (one
// search at a time left blocks staging for tens of microseconds, out of step with the others).
__device__ __forceinline__ void StageRanked(const ForestView& f, const float* __restrict__ rows,
                                            uint32_t first, uint32_t count, uint32_t* staged) {
  constexpr int kInFlight = 4;
  const uint32_t inputs = f.num_inputs, total = count * inputs;
  const uint32_t ob = f.offset_bits, sb = f.slot_bits, stride = 1u << (ob - 2);
  for (uint32_t base = threadIdx.x; base < total; base += kInFlight * blockDim.x) {
    uint32_t slot[kInFlight], height[kInFlight], n[kInFlight], pos[kInFlight];
    const float* tree[kInFlight];
    float x[kInFlight];
    uint32_t steps = 0;
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const uint32_t k = base + j * blockDim.x;
      const uint32_t input = k < total ? k / count : 0, r = k < total ? k - input * count : 0;
      slot[j] = k < total ? input * stride + r : ~0u;
      x[j] = rows[static_cast<size_t>(first + r) * inputs + input];
      n[j] = __ldg(f.threshold_begin + input + 1) - __ldg(f.threshold_begin + input);
      tree[j] = f.search + __ldg(f.search_begin + input);
      height[j] = x[j] != x[j] ? 0 : __ldg(f.search_height + input);  // a missing value: none
      pos[j] = 1;
      steps = max(steps, height[j]);
    }
    for (uint32_t step = 0; step < steps; ++step) {
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) {
        if (step < height[j]) pos[j] = EytzingerStep(tree[j], pos[j], x[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      if (slot[j] == ~0u) continue;
      staged[slot[j]] = x[j] != x[j]
                            ? kMissingStaged
                            : RankedStagedBin(EytzingerCountAt(pos[j], height[j], n[j]), ob, sb);
    }
  }
  for (uint32_t r = threadIdx.x; r < kRankedRowsBlock; r += blockDim.x) {
    staged[inputs * stride + r] = RankedStagedBin(0, ob, sb);
  }
}

// The block's threads meet at a barrier every kRankedSyncTrees trees, so that its warps stay on
// the same trees and share the deep levels' lines in L1 (hit rate 62% against 25% without, on
// the 1000-tree model: docs/gpu.md); threads past the batch's last row walk row 0 to reach the
// barriers and write nothing. Measured and not kept: 256 and 512 rows a block, with and without
// the barrier (at 512 with it, an L1 hit rate of 85% and no faster).
// ILP trees a thread at once: 16 (four times the independent load chains a warp of 4, at 56
// registers against 40) ran the 1000-tree model at 213M rows/s against 185M at 8 and 206M at 4,
// and was the fastest of the three on both models at 65,536 and 1M rows (docs/gpu.md). The
// barrier comes every kRankedSyncTrees trees, or every ILP trees where that is more.
// Measured and not kept: loading both children of a node as one 8-byte pair while reading the
// row, so that a step waits on one memory latency, not two: the 8-byte loads doubled the L1
// wavefronts (1.45G against 0.97G, L1 94% busy), 175M against 188M rows/s at 8 trees.
constexpr uint32_t kRankedSyncTrees = 8;

template <int ILP>
__global__ void __launch_bounds__(kRankedRowsBlock)
    PredictRankedKernel(ForestView f, const float* __restrict__ rows, uint32_t n,
                        float* __restrict__ margins) {
  static_assert(ILP % 4 == 0 && ILP <= 16 && (ILP % kRankedSyncTrees == 0 ||
                                              kRankedSyncTrees % ILP == 0));
  extern __shared__ uint32_t staged_ranked[];
  const uint32_t first = blockIdx.x * kRankedRowsBlock;
  const uint32_t count = min(kRankedRowsBlock, n - first);
  StageRanked(f, rows, first, count, staged_ranked);
  __syncthreads();
  const bool active = threadIdx.x < count;
  const uint32_t r = active ? threadIdx.x : 0;
  const uint32_t ob = f.offset_bits, sb = f.slot_bits;
  // The address of this row's staged value of a node's input is one AND-OR of the word: the
  // input's byte offset (RankedStagedOffset) with the row's (below 2^offset_bits).
  const uint32_t input_mask = RankedStagedOffset(~0u, ob, sb), row_byte = r * sizeof(uint32_t);
  const char* staged_bytes = reinterpret_cast<const char*>(staged_ranked);
  float margin = f.base_margin;
  for (uint32_t t = 0; t < f.num_trees; t += ILP) {
    if (t % kRankedSyncTrees == 0) __syncthreads();  // t is the same in every thread
    // Four trees' roots and depths a load, and their roots' words (padding: 0, 0, 0).
    uint32_t idx[ILP], word[ILP], depth = 0;
#pragma unroll
    for (int q = 0; q < ILP / 4; ++q) {
      const uint4 h = __ldg(reinterpret_cast<const uint4*>(f.ranked_trees + t) + q);
      const uint4 w = __ldg(reinterpret_cast<const uint4*>(f.ranked_roots + t) + q);
      idx[4 * q] = h.x >> 8;
      idx[4 * q + 1] = h.y >> 8;
      idx[4 * q + 2] = h.z >> 8;
      idx[4 * q + 3] = h.w >> 8;
      word[4 * q] = w.x;
      word[4 * q + 1] = w.y;
      word[4 * q + 2] = w.z;
      word[4 * q + 3] = w.w;
      depth = max(depth, max(max(h.x & 0xFF, h.y & 0xFF), max(h.z & 0xFF, h.w & 0xFF)));
    }
    for (uint32_t d = 0; d < depth; ++d) {
#pragma unroll
      for (int k = 0; k < ILP; ++k) {
        const uint32_t x = *reinterpret_cast<const uint32_t*>(
            staged_bytes + ((word[k] & input_mask) | row_byte));
        idx[k] = RankedStep(idx[k], word[k], x, ob);
      }
#pragma unroll
      for (int k = 0; k < ILP; ++k) word[k] = __ldg(f.ranked_words + idx[k]);
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const float leaf = __ldg(f.leaf_value + idx[k]);
      if (t + k < f.num_trees) margin += leaf;  // tree order: float sums are order-sensitive
    }
  }
  if (active) margins[first + r] = margin;
}

// The ranked kernel's shared memory: 2^offset_bits bytes for each input and the leaves' slot.
inline size_t RankedStagedBytes(const ForestView& f) {
  return (size_t{f.num_inputs} + 1) << f.offset_bits;
}

template <int ILP>
cudaError_t LaunchRanked(const ForestView& f, const float* rows, uint32_t n, float* margins,
                         cudaStream_t stream) {
  const size_t bytes = f.ranked_words == nullptr ? 0 : RankedStagedBytes(f);
  if (f.ranked_words == nullptr || bytes > kMaxStagedBytes) {
    return LaunchRows<4>(f, rows, n, margins, stream);
  }
  const uint32_t blocks = (n + kRankedRowsBlock - 1) / kRankedRowsBlock;
  return Launch(PredictRankedKernel<ILP>, blocks, kRankedRowsBlock, bytes, stream, f, rows, n,
                margins);
}

}  // namespace
}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_FOREST_PREDICT_KERNELS_CUH_
