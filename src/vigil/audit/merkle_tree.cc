#include "vigil/audit/merkle_tree.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil::audit {
namespace {

constexpr int kMaxLevel = 63;

// The largest power of two strictly below n (RFC 9162's k). REQUIRES: n >= 2.
uint64_t Split(uint64_t n) { return uint64_t{1} << (std::bit_width(n - 1) - 1); }

bool IsPowerOfTwo(uint64_t n) { return std::has_single_bit(n); }

// MTH(D[begin:end]) for a node of the RFC tree: REQUIRES begin < end and begin a multiple of
// the smallest power of two >= end - begin, which holds for every node the RFC's recursion
// visits (left children are perfect; a right child starts where a perfect sibling ends).
// end - begin then decomposes into perfect subtrees, one per set bit, largest first and each
// aligned; the RFC's split nests them to the right, so they are folded right to left.
// Reads popcount(end - begin) subtrees.
absl::StatusOr<Hash> RangeHash(HashAlgorithm algorithm, const SubtreeSource& source, uint64_t begin,
                               uint64_t end) {
  uint64_t remaining = end - begin;
  uint64_t right = end;
  Hash acc{};
  bool have_acc = false;
  while (remaining != 0) {
    const int level = std::countr_zero(remaining);
    const uint64_t width = uint64_t{1} << level;
    right -= width;
    VIGIL_ASSIGN_OR_RETURN(const Hash piece, source.Subtree(level, right >> level));
    acc = have_acc ? NodeHash(algorithm, piece, acc) : piece;
    have_acc = true;
    remaining -= width;
  }
  return acc;
}

// One step of the bit walk of RFC 9162 2.1.3.2 step 4 (and 2.1.4.2 step 6), over fn (the
// position on the path at the current level) and sn (the last position at that level). Returns
// true when this step's proof hash p is the left sibling, so r = HASH(0x01 || p || r): "if
// LSB(fn) is set, or if fn is equal to sn", i.e. a right child, or the last node of its level,
// which has no right sibling and rises unchanged to the level where it is a right child ("right-
// shift both fn and sn equally until either LSB(fn) is set or fn is 0"). Otherwise p is the right
// sibling. Then both move up one level.
bool WalkStepIsLeft(uint64_t& fn, uint64_t& sn) {
  const bool left = (fn & 1) != 0 || fn == sn;
  if (left && (fn & 1) == 0) {
    while ((fn & 1) == 0 && fn != 0) {
      fn >>= 1;
      sn >>= 1;
    }
  }
  fn >>= 1;
  sn >>= 1;
  return left;
}

// The number of steps the walk takes from (fn, sn) until sn is 0: the number of proof hashes
// the RFC's algorithm consumes without failing step 4a (too many hashes) or step 5 (too few).
size_t WalkLength(uint64_t fn, uint64_t sn) {
  size_t steps = 0;
  while (sn != 0) {
    WalkStepIsLeft(fn, sn);
    ++steps;
  }
  return steps;
}

}  // namespace

absl::StatusOr<Hash> RootHash(HashAlgorithm algorithm, const SubtreeSource& source, uint64_t size) {
  if (size == 0) return EmptyRootHash(algorithm);
  return RangeHash(algorithm, source, 0, size);
}

absl::StatusOr<std::vector<Hash>> InclusionProof(HashAlgorithm algorithm,
                                                 const SubtreeSource& source, uint64_t index,
                                                 uint64_t size) {
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat("no inclusion proof for leaf ", index,
                                                   " in a tree of size ", size,
                                                   ": leaves are numbered 0 to size - 1"));
  }
  // PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) when m < k, else
  // PATH(m - k, D[k:n]) : MTH(D[0:k]). Descend from the root collecting the sibling at each
  // level; the recursion lists the deepest sibling first, so the result is reversed. Only the
  // first step left from the right edge meets an incomplete sibling (up to 63 reads); every
  // other sibling is one perfect subtree.
  std::vector<Hash> proof;
  uint64_t begin = 0, end = size;  // the node that contains the leaf
  while (end - begin > 1) {
    const uint64_t mid = begin + Split(end - begin);
    if (index < mid) {
      VIGIL_ASSIGN_OR_RETURN(Hash sibling, RangeHash(algorithm, source, mid, end));
      proof.push_back(sibling);
      end = mid;
    } else {
      VIGIL_ASSIGN_OR_RETURN(Hash sibling, RangeHash(algorithm, source, begin, mid));
      proof.push_back(sibling);
      begin = mid;
    }
  }
  std::reverse(proof.begin(), proof.end());
  return proof;
}

absl::StatusOr<std::vector<Hash>> ConsistencyProof(HashAlgorithm algorithm,
                                                   const SubtreeSource& source, uint64_t old_size,
                                                   uint64_t new_size) {
  if (old_size == 0 || old_size > new_size) {
    return absl::InvalidArgumentError(absl::StrCat("no consistency proof from tree size ", old_size,
                                                   " to ", new_size,
                                                   ": needs 0 < old size <= new size"));
  }
  // SUBPROOF(m, D[n], b) with m < n: SUBPROOF(m, D[0:k], b) : MTH(D[k:n]) when m <= k, else
  // SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k]); it ends at a node the old tree covers
  // exactly, whose hash is listed unless b is still true (that node is then the old root
  // itself, which the verifier has). Descend as in InclusionProof with old_size as the
  // boundary, then reverse.
  std::vector<Hash> proof;
  uint64_t begin = 0, end = new_size;  // begin < old_size <= end
  bool old_root_is_node = true;        // the RFC's b
  while (old_size < end) {
    const uint64_t mid = begin + Split(end - begin);
    if (old_size <= mid) {
      VIGIL_ASSIGN_OR_RETURN(Hash right, RangeHash(algorithm, source, mid, end));
      proof.push_back(right);
      end = mid;
    } else {
      VIGIL_ASSIGN_OR_RETURN(Hash left, RangeHash(algorithm, source, begin, mid));
      proof.push_back(left);
      begin = mid;
      old_root_is_node = false;
    }
  }
  if (!old_root_is_node) {
    VIGIL_ASSIGN_OR_RETURN(Hash seed, RangeHash(algorithm, source, begin, end));
    proof.push_back(seed);
  }
  std::reverse(proof.begin(), proof.end());
  return proof;
}

absl::Status VerifyInclusion(HashAlgorithm algorithm, uint64_t index, uint64_t size,
                             const Hash& leaf_hash, absl::Span<const Hash> proof,
                             const Hash& root) {
  // Step 1.
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat("inclusion proof claims leaf ", index,
                                                   " of a tree of size ", size,
                                                   ", which has no such leaf"));
  }
  // Checking the length first turns the RFC's failures at steps 4a and 5 (sn reaching 0 too
  // early or not at all) into a message that says what was expected.
  const size_t want = WalkLength(index, size - 1);
  if (proof.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("inclusion proof has ", proof.size(),
                                                   " hashes, leaf ", index, " of a tree of size ",
                                                   size, " needs ", want));
  }
  // Steps 2 to 4.
  uint64_t fn = index, sn = size - 1;
  Hash r = leaf_hash;
  for (const Hash& p : proof) {
    r = WalkStepIsLeft(fn, sn) ? NodeHash(algorithm, p, r) : NodeHash(algorithm, r, p);
  }
  VIGIL_DCHECK(sn == 0);
  // Step 5.
  if (r != root) {
    return absl::DataLossError(absl::StrCat(
        "recomputed root ", HashHex(r), " differs from the tree head's ", HashHex(root), ": leaf ",
        index, " with hash ", HashHex(leaf_hash), " is not in that tree of size ", size,
        ", or the proof, the leaf hash or the tree head is corrupt"));
  }
  return absl::OkStatus();
}

absl::Status VerifyConsistency(HashAlgorithm algorithm, uint64_t old_size, uint64_t new_size,
                               const Hash& old_root, const Hash& new_root,
                               absl::Span<const Hash> proof) {
  if (old_size == 0 || old_size > new_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("consistency proof from tree size ", old_size, " to ", new_size,
                     ": consistency is defined only for 0 < old size <= new size"));
  }
  if (old_size == new_size) {
    // Not covered by the RFC's algorithm (its step 1 rejects the empty proof): the same tree
    // needs no proof, but the two heads must then agree.
    if (!proof.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("consistency proof has ", proof.size(),
                                                     " hashes, two trees of the same size ",
                                                     old_size, " need 0"));
    }
    if (old_root != new_root) {
      return absl::DataLossError(absl::StrCat(
          "two tree heads of size ", old_size, " have different roots ", HashHex(old_root), " and ",
          HashHex(new_root), ": the log has forked or one head is corrupt"));
    }
    return absl::OkStatus();
  }
  // Step 2: a power-of-two old tree is a node of the new one and its root starts the path.
  const bool old_is_node = IsPowerOfTwo(old_size);
  // Steps 3 and 4.
  uint64_t fn = old_size - 1, sn = new_size - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  // Step 1 and the length: as for inclusion, steps 6a and 7 (sn == 0) become an upfront check.
  const size_t want = WalkLength(fn, sn) + (old_is_node ? 0 : 1);
  if (proof.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("consistency proof has ", proof.size(),
                                                   " hashes, trees of sizes ", old_size, " and ",
                                                   new_size, " need ", want));
  }
  // Step 5.
  const Hash seed = old_is_node ? old_root : proof.front();
  Hash fr = seed, sr = seed;
  // Step 6.
  for (const Hash& c : proof.subspan(old_is_node ? 0 : 1)) {
    if (WalkStepIsLeft(fn, sn)) {
      fr = NodeHash(algorithm, c, fr);
      sr = NodeHash(algorithm, c, sr);
    } else {
      sr = NodeHash(algorithm, sr, c);
    }
  }
  VIGIL_DCHECK(sn == 0);
  // Step 7.
  if (fr != old_root) {
    return absl::DataLossError(absl::StrCat(
        "recomputed old root ", HashHex(fr), " differs from the old tree head's ",
        HashHex(old_root), " (size ", old_size, "): the proof or the old head is corrupt"));
  }
  if (sr != new_root) {
    return absl::DataLossError(absl::StrCat("recomputed new root ", HashHex(sr),
                                            " differs from the new tree head's ", HashHex(new_root),
                                            " (size ", new_size, "): the tree of size ", new_size,
                                            " does not extend the tree of size ", old_size,
                                            ", or the proof or the new head is corrupt"));
  }
  return absl::OkStatus();
}

MerkleFrontier::MerkleFrontier(HashAlgorithm algorithm) : algorithm_(algorithm) {}

absl::StatusOr<MerkleFrontier> MerkleFrontier::Restore(HashAlgorithm algorithm,
                                                       const SubtreeSource& source, uint64_t size) {
  MerkleFrontier frontier(algorithm);
  uint64_t begin = 0;
  for (int level = kMaxLevel; level >= 0; --level) {
    const uint64_t width = uint64_t{1} << level;
    if ((size & width) == 0) continue;
    VIGIL_ASSIGN_OR_RETURN(Hash root, source.Subtree(level, begin >> level));
    frontier.roots_.push_back(root);
    begin += width;
  }
  frontier.size_ = size;
  return frontier;
}

absl::StatusOr<MerkleFrontier> MerkleFrontier::FromSubtreeRoots(HashAlgorithm algorithm,
                                                                uint64_t size,
                                                                absl::Span<const Hash> roots) {
  const int want = std::popcount(size);
  if (roots.size() != static_cast<size_t>(want)) {
    return absl::InvalidArgumentError(absl::StrCat("a Merkle frontier of size ", size, " has ",
                                                   want, " subtree roots (one per set bit), got ",
                                                   roots.size()));
  }
  MerkleFrontier frontier(algorithm);
  frontier.roots_.assign(roots.begin(), roots.end());
  frontier.size_ = size;
  return frontier;
}

void MerkleFrontier::Append(const Hash& leaf, CompletedFn completed) {
  // 2^64 - 1 leaves is beyond any log; no input can get here.
  VIGIL_CHECK(size_ != std::numeric_limits<uint64_t>::max());
  const uint64_t new_size = size_ + 1;
  completed(0, size_, leaf);
  // Binary increment: each set low bit of the old size is a perfect subtree of that level on
  // the right end, which the new one of equal size completes into one a level up.
  Hash carry = leaf;
  int level = 0;
  while (((size_ >> level) & 1) != 0) {
    carry = NodeHash(algorithm_, roots_.back(), carry);
    roots_.pop_back();
    ++level;
    completed(level, (new_size >> level) - 1, carry);
  }
  roots_.push_back(carry);
  size_ = new_size;
}

Hash MerkleFrontier::Root() const {
  if (roots_.empty()) return EmptyRootHash(algorithm_);
  // The subtrees nest to the right (RangeHash above): fold right to left.
  Hash acc = roots_.back();
  for (size_t i = roots_.size() - 1; i-- > 0;) acc = NodeHash(algorithm_, roots_[i], acc);
  return acc;
}

InMemorySubtreeSource::InMemorySubtreeSource(HashAlgorithm algorithm, std::vector<Hash> leaf_hashes)
    : algorithm_(algorithm), leaves_(std::move(leaf_hashes)) {}

absl::StatusOr<Hash> InMemorySubtreeSource::Subtree(int level, uint64_t index) const {
  if (level < 0 || level > kMaxLevel) {
    return absl::InvalidArgumentError(
        absl::StrCat("subtree level ", level, " is outside [0, ", kMaxLevel, "]"));
  }
  if (index >= (size() >> level)) {
    return absl::NotFoundError(absl::StrCat("subtree at level ", level, ", index ", index,
                                            " is not complete in a tree of ", size(), " leaves"));
  }
  return Compute(level, index << level);
}

Hash InMemorySubtreeSource::Compute(int level, uint64_t begin) const {
  if (level == 0) return leaves_[begin];
  const uint64_t half = uint64_t{1} << (level - 1);
  return NodeHash(algorithm_, Compute(level - 1, begin), Compute(level - 1, begin + half));
}

}  // namespace vigil::audit
