// RFC 9162 (Certificate Transparency 2.0) section 2.1 Merkle tree math for the audit log: tree
// heads, inclusion and consistency proofs, their verification, and the appender's frontier.
//
// The tree over leaf hashes D[0:n] is RFC 9162's MTH (2.1.1): a tree of n > 1 leaves splits at k,
// the largest power of two below n, into MTH(D[0:k]) and MTH(D[k:n]). Every left subtree is
// therefore perfect, and the only incomplete nodes lie on the right edge. This file addresses
// storage by perfect ("complete") subtrees only: (level L, index i) covers leaves
// [i * 2^L, (i + 1) * 2^L), so level 0 is the leaf hashes themselves. Any right-edge node
// [a, n) is the binary decomposition of n - a into perfect subtrees, hashed together right to
// left, so roots and proofs need O(log n) subtree reads and never an incomplete node.
//
//   MerkleFrontier frontier(algorithm);  // the appender; `store` implements SubtreeSource
//   frontier.Append(LeafHash(algorithm, record),
//                   [&](int level, uint64_t index, const Hash& h) { store.Put(level, index, h); });
//   VIGIL_ASSIGN_OR_RETURN(auto proof, InclusionProof(algorithm, store, index, frontier.size()));
//   // ... and on the reader's side, against a signed tree head (size, root):
//   VIGIL_RETURN_IF_ERROR(VerifyInclusion(algorithm, index, size, leaf, proof, root));
//
// Sizes are uint64_t and every size up to 2^64 - 1 works (the arithmetic is exact bit
// arithmetic; no intermediate value overflows), so levels run from 0 to 63.
//
// Thread safety: the free functions are safe for concurrent use if the SubtreeSource they read
// is. MerkleFrontier is a value type, externally synchronized. InMemorySubtreeSource is
// immutable after construction and safe for concurrent use.
#ifndef VIGIL_AUDIT_MERKLE_TREE_H_
#define VIGIL_AUDIT_MERKLE_TREE_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/audit/log_hash.h"

namespace vigil::audit {

// Hashes of complete (perfect) subtrees: level L, index i covers leaves [i*2^L, (i+1)*2^L).
// Implemented by the log's storage. Implementations must be safe for concurrent calls if the
// functions below are called concurrently on one source.
class SubtreeSource {
 public:
  virtual ~SubtreeSource() = default;
  // REQUIRES: 0 <= level <= 63. The callers below only ask for subtrees that lie entirely
  // inside the tree size they were given. kNotFound/kDataLoss etc. pass through unchanged to
  // callers of the functions below.
  virtual absl::StatusOr<Hash> Subtree(int level, uint64_t index) const = 0;
};

// MTH(D[0:size]) (RFC 9162 2.1.1): EmptyRootHash for size 0, else computed from the
// popcount(size) perfect subtrees that make up the tree.
absl::StatusOr<Hash> RootHash(HashAlgorithm algorithm, const SubtreeSource& source, uint64_t size);

// RFC 9162 2.1.3.1 PATH(index, D[0:size]): sibling hashes from the leaf up to the root.
// kInvalidArgument when index >= size. Reads at most 2 * 64 subtrees.
absl::StatusOr<std::vector<Hash>> InclusionProof(HashAlgorithm algorithm,
                                                 const SubtreeSource& source, uint64_t index,
                                                 uint64_t size);

// RFC 9162 2.1.4.1 PROOF(old_size, D[0:new_size]). kInvalidArgument unless
// 0 < old_size <= new_size; old_size == new_size gives an empty proof. Reads at most 2 * 64
// subtrees.
absl::StatusOr<std::vector<Hash>> ConsistencyProof(HashAlgorithm algorithm,
                                                   const SubtreeSource& source, uint64_t old_size,
                                                   uint64_t new_size);

// RFC 9162 2.1.3.2: does `proof` show that `leaf_hash` (a LeafHash, not the record) is leaf
// `index` of the tree of `size` leaves whose root is `root`? Returns OK, or
//   kInvalidArgument: index >= size, or the proof has the wrong number of hashes for
//                     (index, size) (the message gives both counts);
//   kDataLoss:        the recomputed root differs from `root` (the message gives both): the
//                     leaf is not there, or the proof, leaf hash or tree head is corrupt.
// The proof alone does not pin `size`: the same hashes can verify for another size whose path
// has the same shape (leaf 0 of 3 and of 4, say). Take size and root together from one verified
// tree head, never size from the proof's sender and root from elsewhere.
absl::Status VerifyInclusion(HashAlgorithm algorithm, uint64_t index, uint64_t size,
                             const Hash& leaf_hash, absl::Span<const Hash> proof, const Hash& root);

// RFC 9162 2.1.4.2: does `proof` show that the tree of `old_size` leaves with root `old_root`
// is a prefix of the tree of `new_size` leaves with root `new_root`? Equal sizes need an empty
// proof and equal roots. Returns OK, or
//   kInvalidArgument: not 0 < old_size <= new_size, or the proof has the wrong number of
//                     hashes for (old_size, new_size);
//   kDataLoss:        a recomputed root differs from the one given (the message says which
//                     and gives both): the log rewrote history, or a proof or head is corrupt.
// As for inclusion, the sizes must come with their roots from verified tree heads: a proof can
// also verify for other sizes of the same shape (4 -> 6 and 4 -> 7, say).
absl::Status VerifyConsistency(HashAlgorithm algorithm, uint64_t old_size, uint64_t new_size,
                               const Hash& old_root, const Hash& new_root,
                               absl::Span<const Hash> proof);

// The appender's state: the roots of the perfect subtrees that make up the current tree, one
// per set bit of size() (so at most 64), from which the root follows in O(log n) hashes.
// Appending costs amortized one node hash.
//
// A copyable value type; externally synchronized.
class MerkleFrontier {
 public:
  // Called once per perfect subtree an append completes (see Append). `hash` is valid only
  // during the call. The callback must not call back into the frontier.
  using CompletedFn = absl::FunctionRef<void(int level, uint64_t index, const Hash& hash)>;

  // The empty tree.
  explicit MerkleFrontier(HashAlgorithm algorithm);

  // Rebuilds the frontier of a tree of `size` leaves from stored subtrees: reads the
  // popcount(size) subtrees of the decomposition, largest first. Source errors pass through.
  static absl::StatusOr<MerkleFrontier> Restore(HashAlgorithm algorithm,
                                                const SubtreeSource& source, uint64_t size);

  // Rebuilds a frontier persisted as (size(), subtree_roots()). kInvalidArgument unless
  // roots.size() == popcount(size).
  static absl::StatusOr<MerkleFrontier> FromSubtreeRoots(HashAlgorithm algorithm, uint64_t size,
                                                         absl::Span<const Hash> roots);

  // Appends leaf `size()` (a LeafHash). Calls completed(level, index, hash) for every perfect
  // subtree this append completes, level 0 (the leaf itself, index = old size()) first, then
  // upwards: those are exactly the subtrees (L, i) with (i + 1) * 2^L == size() + 1, i.e.
  // one per level from 0 to the number of trailing zero bits of the new size.
  // REQUIRES: size() < 2^64 - 1.
  void Append(const Hash& leaf, CompletedFn completed);

  HashAlgorithm algorithm() const { return algorithm_; }
  uint64_t size() const { return size_; }

  // MTH of the current tree: EmptyRootHash for size 0.
  Hash Root() const;

  // The perfect-subtree roots, largest (leftmost) first: the root of level L for each set bit L
  // of size(), from the highest bit down. With size() this is the whole state.
  absl::Span<const Hash> subtree_roots() const { return roots_; }

 private:
  HashAlgorithm algorithm_;
  uint64_t size_ = 0;
  std::vector<Hash> roots_;  // one per set bit of size_, highest bit first
};

// A SubtreeSource over a vector of leaf hashes (tests, verification of small logs). Computes each
// subtree on demand from the leaves, with no cache: Subtree(level, i) costs 2^level - 1 node
// hashes, so a proof over n leaves costs O(n) hashes. A log keeps its subtrees instead.
class InMemorySubtreeSource final : public SubtreeSource {
 public:
  // `leaf_hashes` are LeafHash values in log order.
  InMemorySubtreeSource(HashAlgorithm algorithm, std::vector<Hash> leaf_hashes);

  uint64_t size() const { return leaves_.size(); }

  // kNotFound when the subtree reaches past size() (it is not complete yet);
  // kInvalidArgument when level is outside [0, 63].
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override;

 private:
  Hash Compute(int level, uint64_t begin) const;

  const HashAlgorithm algorithm_;
  const std::vector<Hash> leaves_;
};

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_MERKLE_TREE_H_
