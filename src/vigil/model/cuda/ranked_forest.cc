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
  uint32_t max_offset = 0;
  for (const ForestNode& node : layout.nodes) {
    const uint32_t slot = NodeSlot(node.word);
    if (slot == leaf_slot) continue;
    per_input[slot >> 1].push_back(node.value);
    max_offset = std::max(max_offset, node.word & 0xFFFFu);
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
  if (layout.nodes.size() >= (size_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ranked trees' headers take roots below 2^24; this forest has ", layout.nodes.size(),
        " nodes"));
  }
  const uint32_t shift = r.offset_bits + r.slot_bits;
  r.words.resize(layout.nodes.size());
  r.leaf_value.resize(layout.nodes.size(), 0.0f);
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    const ForestNode node = layout.nodes[i];
    const uint32_t slot = NodeSlot(node.word);
    if (slot == leaf_slot) {
      r.words[i] = (1u << shift) | (inputs << r.offset_bits);
      r.leaf_value[i] = node.value;
      continue;
    }
    const uint32_t f = slot >> 1;
    const float* begin = r.thresholds.data() + r.threshold_begin[f];
    const float* end = r.thresholds.data() + r.threshold_begin[f + 1];
    const auto k = static_cast<uint32_t>(std::lower_bound(begin, end, node.value) - begin);
    // Slot 2f sends a missing value left (it reads -inf), 2f + 1 right.
    r.words[i] = ((slot & 1) ? 0u : kRankedMissingLeft) | ((k + 1) << shift) |
                 (f << r.offset_bits) | (node.word & 0xFFFFu);
  }
  for (size_t t = 0; t < layout.num_trees(); ++t) {
    r.tree_header.push_back(layout.tree_root[t] << 8 | layout.tree_depth[t]);
    r.root_word.push_back(r.words[layout.tree_root[t]]);
  }
  r.tree_header.resize((r.tree_header.size() + 15) / 16 * 16, 0);
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
    uint32_t i = tree_header[t] >> 8, word = root_word[t];
    for (uint32_t d = tree_header[t] & 0xFF; d > 0; --d) {
      i = RankedStep(i, word, Staged(x, layout.num_inputs, RankedInput(word, offset_bits,
                                                                       slot_bits)),
                     offset_bits);
      word = words[i];
    }
    margin += leaf_value[i];
  }
  return margin;
}

}  // namespace vigil::cuda
