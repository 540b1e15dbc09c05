#include "vigil/model/cuda/ranked_forest.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace vigil::cuda {
namespace {

uint32_t BitsFor(uint64_t max_value) {
  return std::max<uint32_t>(1, static_cast<uint32_t>(std::bit_width(max_value)));
}

}  // namespace

absl::StatusOr<RankedForest> RankedForest::Build(const ForestLayout& layout) {
  const uint32_t inputs = layout.num_inputs;
  const uint32_t leaf_slot = 2 * inputs;
  RankedForest r;
  // Each input's distinct thresholds.
  std::vector<std::vector<float>> per_input(inputs);
  for (const ForestNode& node : layout.nodes) {
    const uint32_t slot = NodeSlot(node.word);
    if (slot != leaf_slot) per_input[slot >> 1].push_back(node.value);
  }
  // Node j of tree t is word j + t + 1 (j + t for the root): each earlier tree's root took a
  // pair to itself. The trees' nodes are contiguous and in model order, their counts odd (a root
  // and sibling pairs), so every root lands on an even word and every pair of siblings on a pair.
  const size_t trees = layout.num_trees();
  std::vector<uint32_t> position(layout.nodes.size());
  for (size_t t = 0; t < trees; ++t) {
    const uint32_t root = layout.tree_root[t];
    const size_t end = t + 1 < trees ? layout.tree_root[t + 1] : layout.nodes.size();
    if ((end - root) % 2 == 0) {
      return absl::InternalError(absl::StrCat("tree ", t, " of the GPU layout has ", end - root,
                                              " nodes: a root and sibling pairs make an odd "
                                              "count"));
    }
    for (size_t j = root; j < end; ++j) {
      position[j] = static_cast<uint32_t>(j + t + (j == root ? 0 : 1));
    }
  }
  // Each node's children's pair, as an offset from its own.
  std::vector<uint32_t> child_offset(layout.nodes.size(), 0);
  uint32_t max_offset = 0;
  for (size_t j = 0; j < layout.nodes.size(); ++j) {
    const ForestNode node = layout.nodes[j];
    if (NodeSlot(node.word) == leaf_slot) continue;
    const uint32_t left = position[j + (node.word & 0xFFFFu)];
    child_offset[j] = left / 2 - position[j] / 2;
    max_offset = std::max(max_offset, child_offset[j]);
  }
  uint32_t max_rank = 1;
  r.threshold_begin.push_back(0);
  for (uint32_t f = 0; f < inputs; ++f) {
    std::vector<float>& t = per_input[f];
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    max_rank = std::max(max_rank, static_cast<uint32_t>(t.size()));
    r.thresholds.insert(r.thresholds.end(), t.begin(), t.end());
    r.threshold_begin.push_back(static_cast<uint32_t>(r.thresholds.size()));
    // Breadth-first order of the complete search tree: an in-order walk of positions 1..size
    // meets the sorted thresholds (then the padding) in order.
    const auto height = static_cast<uint32_t>(std::bit_width(t.size()));
    const size_t size = (size_t{1} << height) - 1;
    std::vector<float> tree(size, std::numeric_limits<float>::infinity());
    size_t next = 0;
    std::vector<size_t> stack;
    for (size_t i = 1; i <= size || !stack.empty();) {
      if (i <= size) {
        stack.push_back(i);
        i = 2 * i;
        continue;
      }
      i = stack.back();
      stack.pop_back();
      if (next < t.size()) tree[i - 1] = t[next];
      ++next;
      i = 2 * i + 1;
    }
    r.search_begin.push_back(static_cast<uint32_t>(r.search.size()));
    r.search_height.push_back(height);
    r.search.insert(r.search.end(), tree.begin(), tree.end());
  }
  r.offset_bits = std::max(BitsFor(max_offset), kRankedMinOffsetBits);
  r.slot_bits = BitsFor(inputs);  // inputs 0..inputs - 1, and the leaves' slot
  const uint32_t rank_bits = BitsFor(max_rank);
  // Bit 31 is the missing value's direction; a bin (at most max_rank) shifted by offset and slot
  // bits stays below it.
  if (r.offset_bits + r.slot_bits + rank_bits > 31) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ranked nodes need ", r.offset_bits, " offset bits, ", r.slot_bits, " slot bits and ",
        rank_bits, " rank bits: more than 31"));
  }
  const size_t words = layout.nodes.size() + trees;
  if (words / 2 >= (size_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ranked trees' headers take root pairs below 2^24; this forest has ", words / 2,
        " pairs"));
  }
  const uint32_t shift = r.offset_bits + r.slot_bits;
  r.words.assign(words, 0);
  r.leaf_value.assign(words, 0.0f);
  for (size_t j = 0; j < layout.nodes.size(); ++j) {
    const ForestNode node = layout.nodes[j];
    const uint32_t slot = NodeSlot(node.word), at = position[j];
    if (slot == leaf_slot) {
      // Rank 1 on side 0 goes left, rank 0 on side 1 right: back to itself.
      r.words[at] = ((at & 1) ? 0u : 1u << shift) | (inputs << r.offset_bits);
      r.leaf_value[at] = node.value;
      continue;
    }
    const uint32_t f = slot >> 1;
    const float* begin = r.thresholds.data() + r.threshold_begin[f];
    const float* end = r.thresholds.data() + r.threshold_begin[f + 1];
    const auto k = static_cast<uint32_t>(std::lower_bound(begin, end, node.value) - begin);
    // Slot 2f sends a missing value left (it reads -inf), 2f + 1 right.
    r.words[at] = ((slot & 1) ? 0u : kRankedMissingLeft) | ((k + 1) << shift) |
                  (f << r.offset_bits) | child_offset[j];
  }
  for (size_t t = 0; t < trees; ++t) {
    const uint32_t root = position[layout.tree_root[t]];
    r.tree_header.push_back(root / 2 << 8 | layout.tree_depth[t]);
    r.root_word.push_back(r.words[root]);
  }
  r.tree_header.resize((trees + 15) / 16 * 16, 0);
  r.root_word.resize(r.tree_header.size(), 0);
  return r;
}

uint32_t RankedForest::Staged(const float* x, uint32_t num_inputs, uint32_t input) const {
  if (input >= num_inputs) return RankedStagedBin(0, offset_bits, slot_bits);
  const float v = x[input];
  if (std::isnan(v)) return kMissingStaged;
  // The kernel's search (equal to upper_bound over the sorted thresholds).
  return RankedStagedBin(SearchBin(input, v), offset_bits, slot_bits);
}

float RankedForest::Margin(const ForestLayout& layout, const float* x) const {
  float margin = layout.base_margin;
  for (size_t t = 0; t < layout.num_trees(); ++t) {
    uint32_t pair = tree_header[t] >> 8, side = 0, word = root_word[t];
    for (uint32_t d = tree_header[t] & 0xFF; d > 0; --d) {
      pair = RankedChildPair(pair, word, offset_bits);
      side = RankedSide(word, Staged(x, layout.num_inputs, RankedInput(word, offset_bits,
                                                                       slot_bits)));
      word = words[2 * pair + side];
    }
    margin += leaf_value[2 * pair + side];
  }
  return margin;
}

}  // namespace vigil::cuda
