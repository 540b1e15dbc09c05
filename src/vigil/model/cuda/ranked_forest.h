// RankedForest: the GPU forest's nodes again at 4 bytes each, comparing threshold ranks instead
// of thresholds, for the `rows4ranked`, `rows8ranked` and `rows16ranked` kernels.
//
// Why: the row kernel is bound by L1 wavefronts (docs/benchmarks.md, "CUDA backend"), and a
// warp's load of the nodes on one level of a tree costs one wavefront per 128-byte line the
// level's touched nodes span. Half the bytes a node is half the lines on the wide levels; the
// leaf values, read once a walk, sit in their own 4-byte array. Each input's distinct split
// thresholds, ascending, give every threshold a rank; a row's value x becomes its bin, the
// number of thresholds at or below x, once per row, and x < t_k exactly when bin(x) < k + 1, so
// the walk decides as the float comparison does, bit for bit.
//
// Node i of ForestLayout::nodes is word i; the walk, its depths and roots are the layout's. A
// word packs, from the low bits, the offset of the left child from the node (offset_bits; the
// right child follows it), the input it splits (slot_bits; the slot num_inputs for leaves), the
// rank k + 1 (bits up to 30) and in bit 31 whether a missing value goes left.
//
// The kernel stages one 32-bit value a row and input, with shift = offset_bits + slot_bits: bin
// << shift with the low shift bits all ones, or kMissingStaged for a missing value. The node's
// test is then one unsigned comparison of the staged value, its bit 31 flipped by the word's,
// with the word itself: right when not
//   (staged ^ (word & 1 << 31)) < word.
// For a present value both sides carry the word's bit 31, and (bin << shift | ones) < (rank <<
// shift | low bits) exactly when bin < rank, whatever the low bits. A missing value is
// 0x7FFFFFFF < (1 << 31 | ...) (left) when bit 31 is set, and 0xFFFFFFFF < word (never: right)
// when it is not. The leaves' slot is staged as bin 0, and a leaf's word has rank 1 and offset 0:
// it steps to itself, so that a walk may run more steps than its tree is deep.
//
// The staged values of one input take 2^offset_bits bytes (the kernel's kRankedRowsBlock rows of
// 4 bytes, then unused space), so that the word's input field masked in place, input <<
// offset_bits, is the byte offset of the input's values, and one AND-OR gives the address a
// thread reads (RankedStagedOffset): offset_bits is at least kRankedMinOffsetBits for that.
// One value a row and input, 4 bytes wide, keeps a warp's reads of the staged row on 32 distinct
// banks (16-bit values two to a bank cost two wavefronts a read: measured, docs/gpu.md).
//
// Host-only and CUDA-free: Margin below is the kernel's reference, checked on any machine.
#ifndef VIGIL_MODEL_CUDA_RANKED_FOREST_H_
#define VIGIL_MODEL_CUDA_RANKED_FOREST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/model/cuda/forest_layout.h"
#include "vigil/model/cuda/forest_node.h"

namespace vigil::cuda {

inline constexpr uint32_t kMissingStaged = 0xFFFFFFFFu;  // the staged value of a missing input
inline constexpr uint32_t kRankedMissingLeft = 1u << 31;  // the word's "missing goes left" bit
inline constexpr uint32_t kRankedRowsBlock = 128;  // rows a block of the ranked kernels stages
// 2^9 bytes: kRankedRowsBlock staged values of 4 bytes.
inline constexpr uint32_t kRankedMinOffsetBits = 9;
static_assert(kRankedRowsBlock * 4 <= 1u << kRankedMinOffsetBits);

// The search of a threshold tree (RankedForest::search) for the count of its n thresholds at or
// below v (not NaN): from position i = 1, height steps of EytzingerStep, then EytzingerCountAt.
// Each step goes right when the node is at or below v, so the final position's bits below the
// leading one are the path, which counts the entries at or below v; the +inf padding counts
// only for v = +inf, hence the cap at n. Split in two so that the kernel can interleave several
// searches (their loads overlap).
VIGIL_HOST_DEVICE uint32_t EytzingerStep(const float* tree, uint32_t i, float v) {
#if defined(__CUDA_ARCH__)
  const float node = __ldg(tree + i - 1);
#else
  const float node = tree[i - 1];
#endif
  return 2 * i + (node <= v ? 1u : 0u);
}

VIGIL_HOST_DEVICE uint32_t EytzingerCountAt(uint32_t i, uint32_t height, uint32_t n) {
  const uint32_t count = i - (1u << height);
  return count < n ? count : n;
}

VIGIL_HOST_DEVICE uint32_t EytzingerCount(const float* tree, uint32_t height, uint32_t n,
                                          float v) {
  uint32_t i = 1;
  for (uint32_t s = 0; s < height; ++s) i = EytzingerStep(tree, i, v);
  return EytzingerCountAt(i, height, n);
}

// The input node "word" splits (num_inputs for a leaf).
VIGIL_HOST_DEVICE uint32_t RankedInput(uint32_t word, uint32_t offset_bits, uint32_t slot_bits) {
  return (word >> offset_bits) & ((1u << slot_bits) - 1u);
}

// The byte offset of the staged values of the input "word" splits: RankedInput << offset_bits.
VIGIL_HOST_DEVICE uint32_t RankedStagedOffset(uint32_t word, uint32_t offset_bits,
                                              uint32_t slot_bits) {
  return word & (((1u << slot_bits) - 1u) << offset_bits);
}

// The value staged for a present input whose value has "bin" thresholds at or below it.
VIGIL_HOST_DEVICE uint32_t RankedStagedBin(uint32_t bin, uint32_t offset_bits,
                                           uint32_t slot_bits) {
  const uint32_t shift = offset_bits + slot_bits;
  return bin << shift | ((1u << shift) - 1u);
}

// Whether a walk at a node with this word goes right (1) or left (0), for its input's staged
// value.
VIGIL_HOST_DEVICE uint32_t RankedSide(uint32_t word, uint32_t staged) {
  return (staged ^ (word & kRankedMissingLeft)) < word ? 0u : 1u;
}

// The node after the one at index i with this word, for its input's staged value.
VIGIL_HOST_DEVICE uint32_t RankedStep(uint32_t i, uint32_t word, uint32_t staged,
                                      uint32_t offset_bits) {
  return i + (word & ((1u << offset_bits) - 1u)) + RankedSide(word, staged);
}

struct RankedForest {
  // Input f's distinct split thresholds, ascending: [threshold_begin[f], threshold_begin[f + 1]).
  std::vector<float> thresholds;
  std::vector<uint32_t> threshold_begin;  // num_inputs + 1
  // The same thresholds for the kernel's search, per input in breadth-first (Eytzinger) order of
  // the complete binary search tree of height search_height[f] over them, padded with +inf to
  // 2^height - 1 entries, from search_begin[f]: the first five levels share one 128-byte line, so
  // the 32 rows of a warp searching one input take one pass through L1 for each of them, where a
  // search of the sorted array would touch a line per row from the fifth step on.
  std::vector<float> search;
  std::vector<uint32_t> search_begin, search_height;  // num_inputs each
  std::vector<uint32_t> words;      // per node of the layout
  std::vector<float> leaf_value;    // per node: a leaf's value, 0 for internal nodes
  // Per tree, root << 8 | depth, padded with 0 to a multiple of 16 entries: the kernel reads four
  // trees' headers in one 16-byte load, 4, 8 or 16 trees at a time.
  std::vector<uint32_t> tree_header;
  // Per tree, its root's word, padded as tree_header: every thread of a block starts a tree at
  // its root, so the kernel loads four roots' words in one 16-byte load beside their headers,
  // not each on its own after them.
  std::vector<uint32_t> root_word;
  uint32_t offset_bits = 0, slot_bits = 0;

  // Fails (kInvalidArgument, naming what does not fit) when offset (at least
  // kRankedMinOffsetBits), slot and rank take more than 31 bits together, or the forest has 2^24
  // nodes or more.
  static absl::StatusOr<RankedForest> Build(const ForestLayout& layout);

  // The value the kernel stages for input "input" (num_inputs: the leaves' slot) of the row x
  // (float32 model inputs, NaN when missing).
  uint32_t Staged(const float* x, uint32_t num_inputs, uint32_t input) const;
  // The count of input f's thresholds at or below the number v (not NaN), by the kernel's search.
  uint32_t SearchBin(uint32_t f, float v) const {
    return EytzingerCount(search.data() + search_begin[f], search_height[f],
                          threshold_begin[f + 1] - threshold_begin[f], v);
  }
  // The kernel's walk on the host: equal to layout.Margin(x) bit for bit.
  float Margin(const ForestLayout& layout, const float* x) const;
};

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_RANKED_FOREST_H_
