// RFC 9162 Merkle tree math for the audit log at 1M leaves: the appender's frontier, inclusion
// and consistency proof generation, and verification. Build RelWithDebInfo or Release; the
// numbers of a Debug build mean nothing.
//
//   ninja -C build merkle_tree_benchmark && build/src/vigil/audit/merkle_tree_benchmark
//
// Input: a tree of 1,000,000 leaves ("leaf-<i>"; 65,536 under VIGIL_BENCH_SMOKE, the ctest smoke
// run), built once outside the timing, with every completed subtree kept in memory level by
// level the way a log's storage keeps them. Proofs are generated from that store, so the figures
// are hashing plus the algorithm, not I/O. The arg is the HashAlgorithm (1 = SHA-256, 2 = SM3).
// BM_InclusionProof_OnDemandSource is the baseline: the same proof from InMemorySubtreeSource,
// which recomputes subtrees from the leaves (O(n) hashes per proof), to show what storing
// subtrees buys.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/merkle_tree.h"

namespace vigil::audit {
namespace {

uint64_t TreeSize() { return std::getenv("VIGIL_BENCH_SMOKE") != nullptr ? 65'536 : 1'000'000; }

// Completed subtrees by level, as MerkleFrontier::Append reports them.
class StoredSubtrees final : public SubtreeSource {
 public:
  void Put(int level, uint64_t index, const Hash& hash) {
    if (levels_.size() <= static_cast<size_t>(level)) levels_.resize(level + 1);
    levels_[level].resize(index + 1);
    levels_[level][index] = hash;
  }
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override {
    if (static_cast<size_t>(level) >= levels_.size() || index >= levels_[level].size()) {
      return absl::NotFoundError("no such subtree");
    }
    return levels_[level][index];
  }

 private:
  std::vector<std::vector<Hash>> levels_;
};

struct Tree {
  std::vector<Hash> leaves;
  StoredSubtrees store;
  Hash root;
};

const Tree& GetTree(HashAlgorithm algorithm) {
  static auto* trees = new std::map<HashAlgorithm, Tree>;
  auto [it, inserted] = trees->try_emplace(algorithm);
  Tree& tree = it->second;
  if (inserted) {
    MerkleFrontier frontier(algorithm);
    for (uint64_t i = 0; i < TreeSize(); ++i) {
      tree.leaves.push_back(LeafHash(algorithm, absl::StrCat("leaf-", i)));
      frontier.Append(tree.leaves.back(), [&](int level, uint64_t index, const Hash& hash) {
        tree.store.Put(level, index, hash);
      });
    }
    tree.root = frontier.Root();
  }
  return tree;
}

HashAlgorithm Algorithm(const benchmark::State& state) {
  return static_cast<HashAlgorithm>(state.range(0));
}

// Amortized one node hash per append, plus the leaf's own callback.
void BM_MerkleFrontier_Append(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  std::vector<Hash> leaves;
  for (int i = 0; i < 4096; ++i) leaves.push_back(LeafHash(algorithm, absl::StrCat("leaf-", i)));
  MerkleFrontier frontier(algorithm);
  uint64_t stored = 0;
  size_t i = 0;
  for (auto _ : state) {
    frontier.Append(leaves[i], [&](int, uint64_t, const Hash&) { ++stored; });
    i = (i + 1) % leaves.size();
  }
  benchmark::DoNotOptimize(stored);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MerkleFrontier_Append)->Arg(1)->Arg(2);

// popcount(size) - 1 node hashes: 6 at 1,000,000 leaves.
void BM_MerkleFrontier_Root(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  auto frontier = MerkleFrontier::Restore(algorithm, tree.store, tree.leaves.size());
  if (!frontier.ok()) return state.SkipWithError("restore failed");
  for (auto _ : state) benchmark::DoNotOptimize(frontier->Root());
}
BENCHMARK(BM_MerkleFrontier_Root)->Arg(1)->Arg(2);

void BM_InclusionProof_Generate(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  std::mt19937_64 rng(1);
  std::vector<uint64_t> indices(1024);
  for (uint64_t& index : indices) index = rng() % tree.leaves.size();
  size_t i = 0;
  for (auto _ : state) {
    auto proof = InclusionProof(algorithm, tree.store, indices[i], tree.leaves.size());
    benchmark::DoNotOptimize(proof);
    i = (i + 1) % indices.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InclusionProof_Generate)->Arg(1)->Arg(2);

// The baseline: no stored subtrees, every sibling recomputed from the leaves.
void BM_InclusionProof_OnDemandSource(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  const InMemorySubtreeSource source(algorithm, tree.leaves);
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    auto proof = InclusionProof(algorithm, source, rng() % tree.leaves.size(), source.size());
    benchmark::DoNotOptimize(proof);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InclusionProof_OnDemandSource)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_VerifyInclusion(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  const uint64_t size = tree.leaves.size();
  std::mt19937_64 rng(2);
  std::vector<std::pair<uint64_t, std::vector<Hash>>> proofs;
  for (int i = 0; i < 1024; ++i) {
    const uint64_t index = rng() % size;
    auto proof = InclusionProof(algorithm, tree.store, index, size);
    if (!proof.ok()) return state.SkipWithError("proof generation failed");
    proofs.emplace_back(index, *std::move(proof));
  }
  size_t i = 0;
  for (auto _ : state) {
    const auto& [index, proof] = proofs[i];
    const absl::Status status =
        VerifyInclusion(algorithm, index, size, tree.leaves[index], proof, tree.root);
    if (!status.ok()) return state.SkipWithError("verification failed");
    i = (i + 1) % proofs.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VerifyInclusion)->Arg(1)->Arg(2);

void BM_ConsistencyProof_Generate(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  std::mt19937_64 rng(3);
  std::vector<uint64_t> old_sizes(1024);
  for (uint64_t& old_size : old_sizes) old_size = 1 + rng() % tree.leaves.size();
  size_t i = 0;
  for (auto _ : state) {
    auto proof = ConsistencyProof(algorithm, tree.store, old_sizes[i], tree.leaves.size());
    benchmark::DoNotOptimize(proof);
    i = (i + 1) % old_sizes.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConsistencyProof_Generate)->Arg(1);

void BM_VerifyConsistency(benchmark::State& state) {
  const HashAlgorithm algorithm = Algorithm(state);
  const Tree& tree = GetTree(algorithm);
  const uint64_t size = tree.leaves.size();
  std::mt19937_64 rng(4);
  struct Case {
    uint64_t old_size;
    Hash old_root;
    std::vector<Hash> proof;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 256; ++i) {
    const uint64_t old_size = 1 + rng() % size;
    auto old_root = RootHash(algorithm, tree.store, old_size);
    auto proof = ConsistencyProof(algorithm, tree.store, old_size, size);
    if (!old_root.ok() || !proof.ok()) return state.SkipWithError("proof generation failed");
    cases.push_back({old_size, *old_root, *std::move(proof)});
  }
  size_t i = 0;
  for (auto _ : state) {
    const Case& c = cases[i];
    const absl::Status status =
        VerifyConsistency(algorithm, c.old_size, size, c.old_root, tree.root, c.proof);
    if (!status.ok()) return state.SkipWithError("verification failed");
    i = (i + 1) % cases.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VerifyConsistency)->Arg(1);

}  // namespace
}  // namespace vigil::audit

BENCHMARK_MAIN();
