// The node format of the GPU forest and the one step of a walk, shared by the CUDA kernels and
// the host-side reference walk (ForestLayout::Margin), so that the layout is checked on any
// machine and the kernels run exactly the step the host checks.
//
// A node is 8 bytes: a float32 and a 32-bit word. The float is an internal node's split
// threshold (XGBoost's float32, unchanged) or a leaf's value. The word holds the offset of the
// left child from the node (bits 0-15; the right child follows the left one: each tree is laid
// out breadth-first with siblings adjacent) and the slot of the expanded row the node compares
// (bits 16-31).
//
// The expanded row resolves missing values once per row instead of at every step: input f has
// two slots, 2f with NaN read as -inf (for nodes that send missing values left: -inf is below
// every finite threshold) and 2f + 1 with NaN read as +inf (for nodes that send them right); the
// last slot, 2 * inputs, holds -inf and is the slot of every leaf, whose offset is 0, so that a
// step from a leaf stays on it and a walk may run its tree's depth in steps without a test. A
// step is then one float32 comparison: right when not (x < threshold), as XGBoost decides
// (thresholds and leaf values are finite: TreeEnsemble::Validate).
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

inline constexpr int kSlotShift = 16;
inline constexpr uint32_t kMaxInputs = 16384;  // 2 * inputs + 1 slots fit 16 bits
inline constexpr uint32_t kMaxChildOffset = (1u << 16) - 1;

VIGIL_HOST_DEVICE uint32_t NodeSlot(uint32_t word) { return word >> kSlotShift; }

// The word of an internal node splitting "input", and of a leaf in a model of "inputs" inputs.
constexpr uint32_t InternalWord(uint32_t input, bool default_left, uint32_t offset) {
  return ((2 * input + (default_left ? 0u : 1u)) << kSlotShift) | offset;
}
constexpr uint32_t LeafWord(uint32_t inputs) { return (2 * inputs) << kSlotShift; }

// Slot "slot" of the expanded row of x (input f at x[f * stride], NaN when missing).
VIGIL_HOST_DEVICE float ExpandedSlot(const float* x, uint32_t inputs, uint32_t slot,
                                     uint32_t stride = 1) {
  if (slot >= 2 * inputs) return -__builtin_huge_valf();
  const float v = x[(slot >> 1) * stride];
  return v != v ? ((slot & 1) ? __builtin_huge_valf() : -__builtin_huge_valf()) : v;
}

// The index of the node after "node" (at index i) for e, the expanded row's value at the node's
// slot.
VIGIL_HOST_DEVICE uint32_t StepFrom(uint32_t i, ForestNode node, float e) {
  return i + (node.word & 0xFFFFu) + (e < node.value ? 0u : 1u);
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
