// The node format of the GPU forest and the one step of a walk, shared by the CUDA kernels and
// the host-side reference walk (ForestLayout::Margin), so that the layout is checked on any
// machine and the kernels run exactly the step the host checks.
//
// A node is 8 bytes: a float32 and a 32-bit word.
//  - Internal node: the float is the split threshold (XGBoost's float32, unchanged); the word
//    holds the input index (bits 16-29: up to 16,384 model features), the default side (bit 30:
//    1 = missing goes left) and the offset of the left child from the node (bits 0-15); the right
//    child follows the left one (each tree is laid out breadth-first with siblings adjacent).
//  - Leaf: the float is the leaf value; the word is kLeafBit alone, so a step from a leaf stays
//    on it and a walk may run a fixed number of steps (the tree's depth) without testing.
// The decision is XGBoost's: a missing input (NaN) goes to the default side, else left when
// x < threshold in float32 (inputs are rounded to float32 as XGBoost rounds them).
#ifndef VIGIL_MODEL_CUDA_FOREST_NODE_H_
#define VIGIL_MODEL_CUDA_FOREST_NODE_H_

#include <cstdint>

#if defined(__CUDACC__)
#define VIGIL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define VIGIL_HOST_DEVICE inline
#endif

namespace vigil::cuda {

struct ForestNode {
  float value;    // threshold (internal) or leaf value
  uint32_t word;  // see the file comment
};
static_assert(sizeof(ForestNode) == 8);

inline constexpr uint32_t kLeafBit = 1u << 31;
inline constexpr uint32_t kDefaultLeftBit = 1u << 30;
inline constexpr int kInputShift = 16;
inline constexpr uint32_t kInputMask = (1u << 14) - 1;
inline constexpr uint32_t kMaxInputs = kInputMask + 1;
inline constexpr uint32_t kMaxChildOffset = (1u << 16) - 1;

VIGIL_HOST_DEVICE uint32_t NodeInput(uint32_t word) { return (word >> kInputShift) & kInputMask; }

// XGBoost's rule: NaN to the default side, else left when x < threshold.
VIGIL_HOST_DEVICE bool GoesRight(float x, float threshold, uint32_t word) {
  return x != x ? (word & kDefaultLeftBit) == 0 : !(x < threshold);
}

// The index of the node after "node" (at index i) for input x (the input NodeInput names).
VIGIL_HOST_DEVICE uint32_t StepFrom(uint32_t i, ForestNode node, float x) {
  if (node.word & kLeafBit) return i;
  return i + (node.word & 0xFFFFu) + (GoesRight(x, node.value, node.word) ? 1u : 0u);
}

// The compact form (ForestLayout's compact_*): each tree a complete binary tree of its own depth
// with implicit children (2i + 1 left, 2i + 2 right) and 4-byte internal nodes: the rank of the
// threshold among its input's distinct thresholds (bits 0-15), the input (bits 16-29) and the
// default side (bit 30). A row's value x of an input is first turned into its bin, the number of
// that input's thresholds <= x (kBinMissing for NaN), so that x < threshold exactly when
// bin <= rank: the float32 decision, made with 16-bit integers.
inline constexpr uint32_t kBinMissing = 0xFFFF;
inline constexpr uint32_t kMaxRank = kBinMissing - 1;

VIGIL_HOST_DEVICE uint32_t CompactInput(uint32_t word) { return (word >> kInputShift) & kInputMask; }

VIGIL_HOST_DEVICE uint32_t CompactStep(uint32_t i, uint32_t word, uint32_t bin) {
  const bool right = bin == kBinMissing ? (word & kDefaultLeftBit) == 0 : bin > (word & 0xFFFFu);
  return 2 * i + 1 + (right ? 1u : 0u);
}

// One edge of a root-to-leaf path, for TreeSHAP: its parent's split and which side it is.
struct ShapEdge {
  float threshold;
  uint8_t goes_left;     // the edge is its parent's left side
  uint8_t default_left;  // the parent sends missing values left
};

// Whether a row whose split input is x takes this edge.
VIGIL_HOST_DEVICE bool Follows(float x, ShapEdge edge) {
  const bool left = x != x ? edge.default_left != 0 : x < edge.threshold;
  return left == (edge.goes_left != 0);
}

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_FOREST_NODE_H_
