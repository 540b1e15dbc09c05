#include "vigil/audit/merkle_tree.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil::audit {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::IsOk;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

constexpr HashAlgorithm kAlgorithms[] = {HashAlgorithm::kSha256, HashAlgorithm::kSm3};
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::string Name(HashAlgorithm algorithm) { return std::string(HashAlgorithmName(algorithm)); }

Hash Hex(const std::string& hex) {
  absl::StatusOr<Hash> hash = ParseHashHex(hex);
  EXPECT_TRUE(hash.ok()) << hash.status();
  return hash.ok() ? *hash : Hash{};
}

std::vector<Hash> Hexes(const nlohmann::json& list) {
  std::vector<Hash> out;
  for (const auto& hex : list) out.push_back(Hex(hex.get<std::string>()));
  return out;
}

// Leaf i of the oracle's tree: the bytes "leaf-<i>" (tools/audit/merkle_vectors.py).
Hash Leaf(HashAlgorithm algorithm, uint64_t i) {
  return LeafHash(algorithm, absl::StrCat("leaf-", i));
}

std::vector<Hash> Leaves(HashAlgorithm algorithm, uint64_t n) {
  std::vector<Hash> leaves;
  for (uint64_t i = 0; i < n; ++i) leaves.push_back(Leaf(algorithm, i));
  return leaves;
}

Hash Flip(Hash hash, std::mt19937_64& rng) {
  const size_t bit = rng() % (8 * hash.size());
  hash[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  return hash;
}

// A SubtreeSource filled from MerkleFrontier::Append's callbacks, as a log's storage is.
class StoredSubtrees final : public SubtreeSource {
 public:
  // Subtrees arrive in order within each level; anything else is a frontier bug.
  void Put(int level, uint64_t index, const Hash& hash) {
    if (levels_.size() <= static_cast<size_t>(level)) levels_.resize(level + 1);
    EXPECT_EQ(index, levels_[level].size()) << "level " << level;
    levels_[level].push_back(hash);
  }
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override {
    if (level < 0 || static_cast<size_t>(level) >= levels_.size() ||
        index >= levels_[level].size()) {
      return absl::NotFoundError(absl::StrCat("no subtree ", level, "/", index));
    }
    return levels_[level][index];
  }

 private:
  std::vector<std::vector<Hash>> levels_;
};

// A log of n oracle leaves: the frontier, its stored subtrees, and the root at every size.
struct Log {
  explicit Log(HashAlgorithm algorithm, uint64_t n) : frontier(algorithm) {
    leaves = Leaves(algorithm, n);
    roots.push_back(frontier.Root());
    for (const Hash& leaf : leaves) {
      frontier.Append(leaf, [&](int level, uint64_t index, const Hash& hash) {
        store.Put(level, index, hash);
      });
      roots.push_back(frontier.Root());
    }
  }
  MerkleFrontier frontier;
  StoredSubtrees store;
  std::vector<Hash> leaves;
  std::vector<Hash> roots;  // roots[s] = MTH(D[0:s])
};

// RFC 9162's k, written as the RFC says it ("the largest power of two smaller than n"),
// independently of the library's bit arithmetic. For test sizes only.
uint64_t LargestPowerOfTwoBelow(uint64_t n) {
  uint64_t k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// Which side each hash of PATH(index, D[0:size]) is on (true: the left sibling), in proof
// order, from the recursion of RFC 9162 2.1.3.1. Two (index, size) pairs with equal shapes
// make VerifyInclusion do the same hashing, so a proof for one verifies as the other.
std::vector<bool> InclusionShape(uint64_t index, uint64_t size) {
  if (size <= 1) return {};
  const uint64_t k = LargestPowerOfTwoBelow(size);
  std::vector<bool> shape =
      index < k ? InclusionShape(index, k) : InclusionShape(index - k, size - k);
  shape.push_back(index >= k);
  return shape;
}

// The role of each hash of PROOF(m, D[0:n]) from the recursion of RFC 9162 2.1.4.1: the seed
// (a node both trees share, listed when b is false), a left sibling (in both trees) or a right
// one (only in the new tree). Equal shapes make VerifyConsistency do the same hashing.
enum class Role { kSeed, kLeft, kRight };
void Subproof(uint64_t m, uint64_t n, bool b, std::vector<Role>& out) {
  if (m == n) {
    if (!b) out.push_back(Role::kSeed);
    return;
  }
  const uint64_t k = LargestPowerOfTwoBelow(n);
  if (m <= k) {
    Subproof(m, k, b, out);
    out.push_back(Role::kRight);
  } else {
    Subproof(m - k, n - k, false, out);
    out.push_back(Role::kLeft);
  }
}
std::vector<Role> ConsistencyShape(uint64_t m, uint64_t n) {
  std::vector<Role> shape;
  if (0 < m && m <= n) Subproof(m, n, true, shape);
  return shape;
}

// ---------------------------------------------------------------------------------------------
// RFC 6962 reference vectors: google/certificate-transparency, cpp/merkletree/merkle_tree_test.cc
// (testdata/audit/PROVENANCE.md). That file numbers leaves from 1; the indices below are 0-based.

std::vector<Hash> Rfc6962Leaves() {
  std::vector<Hash> leaves;
  for (const char* hex : {"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                          "606162636465666768696a6b6c6d6e6f"}) {
    std::string bytes;
    for (const char* p = hex; *p != '\0'; p += 2) {
      bytes.push_back(static_cast<char>(std::stoi(std::string(p, 2), nullptr, 16)));
    }
    leaves.push_back(LeafHash(HashAlgorithm::kSha256, bytes));
  }
  return leaves;
}

const char* const kRfc6962Roots[] = {
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // empty: SHA-256("")
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

TEST(MerkleRfc6962, RootsMatchTheReferenceVectors) {
  const std::vector<Hash> leaves = Rfc6962Leaves();
  const InMemorySubtreeSource source(HashAlgorithm::kSha256, leaves);
  MerkleFrontier frontier(HashAlgorithm::kSha256);
  EXPECT_EQ(HashHex(frontier.Root()), kRfc6962Roots[0]);
  for (uint64_t size = 0; size <= leaves.size(); ++size) {
    EXPECT_THAT(RootHash(HashAlgorithm::kSha256, source, size),
                IsOkAndHolds(Hex(kRfc6962Roots[size])))
        << "size " << size;
    if (size > 0) {
      frontier.Append(leaves[size - 1], [](int, uint64_t, const Hash&) {});
      EXPECT_EQ(HashHex(frontier.Root()), kRfc6962Roots[size]) << "size " << size;
    }
  }
}

TEST(MerkleRfc6962, ProofsMatchTheReferenceVectors) {
  const std::vector<Hash> leaves = Rfc6962Leaves();
  const InMemorySubtreeSource source(HashAlgorithm::kSha256, leaves);
  const struct {
    uint64_t index, size;
    std::vector<const char*> path;
  } kPaths[] = {
      {0, 1, {}},
      {0,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {5,
       8,
       {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2, 3, {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
      {1,
       5,
       {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
  };
  for (const auto& c : kPaths) {
    std::vector<Hash> want;
    for (const char* hex : c.path) want.push_back(Hex(hex));
    EXPECT_THAT(InclusionProof(HashAlgorithm::kSha256, source, c.index, c.size),
                IsOkAndHolds(ElementsAreArray(want)))
        << "leaf " << c.index << " of " << c.size;
    EXPECT_OK(VerifyInclusion(HashAlgorithm::kSha256, c.index, c.size, leaves[c.index], want,
                              Hex(kRfc6962Roots[c.size])));
  }
  const struct {
    uint64_t old_size, new_size;
    std::vector<const char*> proof;
  } kProofs[] = {
      {1, 1, {}},
      {1,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {6,
       8,
       {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2,
       5,
       {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
  };
  for (const auto& c : kProofs) {
    std::vector<Hash> want;
    for (const char* hex : c.proof) want.push_back(Hex(hex));
    EXPECT_THAT(ConsistencyProof(HashAlgorithm::kSha256, source, c.old_size, c.new_size),
                IsOkAndHolds(ElementsAreArray(want)))
        << c.old_size << " -> " << c.new_size;
    EXPECT_OK(VerifyConsistency(HashAlgorithm::kSha256, c.old_size, c.new_size,
                                Hex(kRfc6962Roots[c.old_size]), Hex(kRfc6962Roots[c.new_size]),
                                want));
  }
}

// ---------------------------------------------------------------------------------------------
// The Python oracle: testdata/audit/merkle_vectors.json from tools/audit/merkle_vectors.py.

// Parameterized by the algorithm's name, the oracle's key (and a readable ctest name).
class MerkleOracle : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    const std::string path = vigil::testing::TestDataPath("audit/merkle_vectors.json");
    std::ifstream in(path);
    if (in) oracle_ = new nlohmann::json(nlohmann::json::parse(in));
  }
  static void TearDownTestSuite() {
    delete oracle_;
    oracle_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(oracle_, nullptr) << "cannot read testdata/audit/merkle_vectors.json (set "
                                   "VIGIL_SOURCE_DIR, or see testdata/audit/PROVENANCE.md)";
    ASSERT_OK_AND_ASSIGN(algorithm_, ParseHashAlgorithm(GetParam()));
    ASSERT_TRUE(oracle_->at("algorithms").contains(GetParam()))
        << "the oracle skipped " << GetParam() << ": regenerate it with a Python whose "
        << "hashlib has it";
  }
  const nlohmann::json& Vectors() const { return oracle_->at("algorithms").at(GetParam()); }

  // The largest tree size the oracle mentions, and a source over that many leaves.
  uint64_t MaxSize() const {
    uint64_t n = 0;
    for (const auto& r : Vectors().at("roots")) n = std::max(n, r.at("size").get<uint64_t>());
    for (const auto& r : Vectors().at("inclusion")) n = std::max(n, r.at("size").get<uint64_t>());
    for (const auto& r : Vectors().at("consistency")) {
      n = std::max(n, r.at("new_size").get<uint64_t>());
    }
    return n;
  }

  HashAlgorithm algorithm_ = HashAlgorithm::kSha256;
  static nlohmann::json* oracle_;
};
nlohmann::json* MerkleOracle::oracle_ = nullptr;

TEST_P(MerkleOracle, UsesTheSameLeaves) {
  EXPECT_EQ(oracle_->at("leaf_format").get<std::string>(), "leaf-%d");
  EXPECT_EQ(oracle_->at("skipped").size(), 0u) << oracle_->at("skipped").dump();
  const std::vector<Hash> want = Hexes(Vectors().at("leaf_hashes"));
  ASSERT_FALSE(want.empty());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(Leaf(algorithm_, i), want[i]) << i;
}

TEST_P(MerkleOracle, RootsMatch) {
  const HashAlgorithm algorithm = algorithm_;
  const std::vector<Hash> leaves = Leaves(algorithm, MaxSize());
  const InMemorySubtreeSource source(algorithm, leaves);
  std::map<uint64_t, Hash> want;
  for (const auto& r : Vectors().at("roots")) {
    want[r.at("size").get<uint64_t>()] = Hex(r.at("root").get<std::string>());
  }
  ASSERT_GE(want.size(), 71u);
  for (const auto& [size, root] : want) {
    EXPECT_THAT(RootHash(algorithm, source, size), IsOkAndHolds(root)) << "size " << size;
  }
  MerkleFrontier frontier(algorithm);
  for (const auto& [size, root] : want) {
    while (frontier.size() < size) {
      frontier.Append(leaves[frontier.size()], [](int, uint64_t, const Hash&) {});
    }
    EXPECT_EQ(frontier.Root(), root) << "size " << size;
  }
}

TEST_P(MerkleOracle, InclusionProofsMatchAndVerify) {
  const HashAlgorithm algorithm = algorithm_;
  const std::vector<Hash> leaves = Leaves(algorithm, MaxSize());
  const InMemorySubtreeSource source(algorithm, leaves);
  ASSERT_GE(Vectors().at("inclusion").size(), 200u);
  for (const auto& r : Vectors().at("inclusion")) {
    const uint64_t index = r.at("index"), size = r.at("size");
    const std::vector<Hash> want = Hexes(r.at("proof"));
    EXPECT_THAT(InclusionProof(algorithm, source, index, size),
                IsOkAndHolds(ElementsAreArray(want)))
        << "leaf " << index << " of " << size;
    ASSERT_OK_AND_ASSIGN(const Hash root, RootHash(algorithm, source, size));
    EXPECT_OK(VerifyInclusion(algorithm, index, size, leaves[index], want, root))
        << "leaf " << index << " of " << size;
  }
}

TEST_P(MerkleOracle, ConsistencyProofsMatchAndVerify) {
  const HashAlgorithm algorithm = algorithm_;
  const std::vector<Hash> leaves = Leaves(algorithm, MaxSize());
  const InMemorySubtreeSource source(algorithm, leaves);
  ASSERT_GE(Vectors().at("consistency").size(), 200u);
  for (const auto& r : Vectors().at("consistency")) {
    const uint64_t old_size = r.at("old_size"), new_size = r.at("new_size");
    const std::vector<Hash> want = Hexes(r.at("proof"));
    EXPECT_THAT(ConsistencyProof(algorithm, source, old_size, new_size),
                IsOkAndHolds(ElementsAreArray(want)))
        << old_size << " -> " << new_size;
    ASSERT_OK_AND_ASSIGN(const Hash old_root, RootHash(algorithm, source, old_size));
    ASSERT_OK_AND_ASSIGN(const Hash new_root, RootHash(algorithm, source, new_size));
    EXPECT_OK(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, want))
        << old_size << " -> " << new_size;
  }
}

std::string AlgorithmParamName(const ::testing::TestParamInfo<std::string>& param) {
  return param.param;
}
INSTANTIATE_TEST_SUITE_P(Algorithms, MerkleOracle, ::testing::Values("sha256", "sm3"),
                         AlgorithmParamName);

// ---------------------------------------------------------------------------------------------
// Round trips and tampering over logs built by the frontier.

TEST(MerkleTree, EveryInclusionProofVerifiesAtRandomSizes) {
  std::mt19937_64 rng(9162);
  for (HashAlgorithm algorithm : kAlgorithms) {
    const Log log(algorithm, 4000);
    std::vector<uint64_t> sizes = {1, 2, 3, 4, 5, 1023, 1024, 1025, 4000};
    for (int i = 0; i < 6; ++i) sizes.push_back(1 + rng() % 4000);
    for (uint64_t size : sizes) {
      for (uint64_t index = 0; index < size; ++index) {
        ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof,
                             InclusionProof(algorithm, log.store, index, size));
        EXPECT_EQ(proof.size(), InclusionShape(index, size).size());
        ASSERT_OK(
            VerifyInclusion(algorithm, index, size, log.leaves[index], proof, log.roots[size]))
            << Name(algorithm) << " leaf " << index << " of " << size;
      }
    }
  }
}

TEST(MerkleTree, EveryConsistencyProofVerifiesAtRandomSizes) {
  std::mt19937_64 rng(6962);
  for (HashAlgorithm algorithm : kAlgorithms) {
    const Log log(algorithm, 3000);
    std::vector<uint64_t> sizes = {1, 2, 3, 4, 5, 511, 512, 513, 3000};
    for (int i = 0; i < 6; ++i) sizes.push_back(1 + rng() % 3000);
    for (uint64_t new_size : sizes) {
      for (uint64_t old_size = 1; old_size <= new_size; ++old_size) {
        ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof,
                             ConsistencyProof(algorithm, log.store, old_size, new_size));
        EXPECT_EQ(proof.size(), ConsistencyShape(old_size, new_size).size());
        ASSERT_OK(VerifyConsistency(algorithm, old_size, new_size, log.roots[old_size],
                                    log.roots[new_size], proof))
            << Name(algorithm) << " " << old_size << " -> " << new_size;
      }
    }
  }
}

TEST(MerkleTree, TamperedInclusionProofsFail) {
  std::mt19937_64 rng(1);
  int same_shape = 0;
  for (HashAlgorithm algorithm : kAlgorithms) {
    const Log log(algorithm, 3000);
    for (int trial = 0; trial < 300; ++trial) {
      const uint64_t size = 1 + rng() % 3000, index = rng() % size;
      const Hash& leaf = log.leaves[index];
      const Hash& root = log.roots[size];
      SCOPED_TRACE(absl::StrCat(Name(algorithm), " leaf ", index, " of ", size));
      ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof,
                           InclusionProof(algorithm, log.store, index, size));
      ASSERT_OK(VerifyInclusion(algorithm, index, size, leaf, proof, root));

      for (size_t j = 0; j < proof.size(); ++j) {
        std::vector<Hash> bad = proof;
        bad[j] = Flip(bad[j], rng);
        EXPECT_THAT(VerifyInclusion(algorithm, index, size, leaf, bad, root),
                    StatusIs(absl::StatusCode::kDataLoss));
      }
      EXPECT_THAT(VerifyInclusion(algorithm, index, size, Flip(leaf, rng), proof, root),
                  StatusIs(absl::StatusCode::kDataLoss));
      EXPECT_THAT(VerifyInclusion(algorithm, index, size, leaf, proof, Flip(root, rng)),
                  StatusIs(absl::StatusCode::kDataLoss));
      // Another leaf's position: each index of a tree has its own path shape, so either the
      // length or the hashing differs.
      if (size > 1) {
        const uint64_t other = (index + 1 + rng() % (size - 1)) % size;
        EXPECT_FALSE(VerifyInclusion(algorithm, other, size, leaf, proof, root).ok())
            << "as leaf " << other;
      }
      // Another size: a proof does not pin the size on its own (the signed tree head does).
      // It verifies exactly when RFC 9162's recursion gives the same path shape, since the
      // verifier then does the same hashing.
      const uint64_t other_size = index + 1 + rng() % (2 * size);
      if (other_size != size) {
        const bool same = InclusionShape(index, other_size) == InclusionShape(index, size);
        same_shape += same;
        EXPECT_EQ(VerifyInclusion(algorithm, index, other_size, leaf, proof, root).ok(), same)
            << "as a tree of size " << other_size;
      }
      std::vector<Hash> longer = proof;
      longer.push_back(root);
      EXPECT_THAT(VerifyInclusion(algorithm, index, size, leaf, longer, root),
                  StatusIs(absl::StatusCode::kInvalidArgument));
      if (!proof.empty()) {
        const std::vector<Hash> shorter(proof.begin(), proof.end() - 1);
        EXPECT_THAT(VerifyInclusion(algorithm, index, size, leaf, shorter, root),
                    StatusIs(absl::StatusCode::kInvalidArgument));
      }
    }
  }
  EXPECT_GT(same_shape, 0) << "the seed never tried a size with an equivalent path";
}

TEST(MerkleTree, TamperedConsistencyProofsFail) {
  std::mt19937_64 rng(2);
  int same_shape = 0;
  for (HashAlgorithm algorithm : kAlgorithms) {
    const Log log(algorithm, 3000);
    for (int trial = 0; trial < 300; ++trial) {
      const uint64_t new_size = 2 + rng() % 2999, old_size = 1 + rng() % (new_size - 1);
      const Hash& old_root = log.roots[old_size];
      const Hash& new_root = log.roots[new_size];
      SCOPED_TRACE(absl::StrCat(Name(algorithm), " ", old_size, " -> ", new_size));
      ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof,
                           ConsistencyProof(algorithm, log.store, old_size, new_size));
      ASSERT_OK(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, proof));

      for (size_t j = 0; j < proof.size(); ++j) {
        std::vector<Hash> bad = proof;
        bad[j] = Flip(bad[j], rng);
        EXPECT_THAT(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, bad),
                    StatusIs(absl::StatusCode::kDataLoss));
      }
      EXPECT_THAT(
          VerifyConsistency(algorithm, old_size, new_size, Flip(old_root, rng), new_root, proof),
          StatusIs(absl::StatusCode::kDataLoss));
      EXPECT_THAT(
          VerifyConsistency(algorithm, old_size, new_size, old_root, Flip(new_root, rng), proof),
          StatusIs(absl::StatusCode::kDataLoss));
      EXPECT_FALSE(
          VerifyConsistency(algorithm, old_size, new_size, new_root, old_root, proof).ok());
      // Other sizes: as for inclusion, the proof verifies exactly when the recursion gives the
      // same shape (e.g. 4 -> 6 and 4 -> 7: the old tree and the one right sibling are the same
      // nodes), because the roots, not the sizes, are what the hashes commit to.
      const uint64_t other_old = 1 + rng() % new_size;
      if (other_old != old_size) {
        const bool same =
            ConsistencyShape(other_old, new_size) == ConsistencyShape(old_size, new_size);
        same_shape += same;
        EXPECT_EQ(VerifyConsistency(algorithm, other_old, new_size, old_root, new_root, proof).ok(),
                  same)
            << "from size " << other_old;
      }
      const uint64_t other_new = old_size + rng() % (2 * new_size);
      if (other_new != new_size) {
        const bool same =
            ConsistencyShape(old_size, other_new) == ConsistencyShape(old_size, new_size);
        same_shape += same;
        EXPECT_EQ(VerifyConsistency(algorithm, old_size, other_new, old_root, new_root, proof).ok(),
                  same)
            << "to size " << other_new;
      }
      std::vector<Hash> longer = proof;
      longer.push_back(proof.back());
      EXPECT_THAT(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, longer),
                  StatusIs(absl::StatusCode::kInvalidArgument));
      const std::vector<Hash> shorter(proof.begin(), proof.end() - 1);
      EXPECT_THAT(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, shorter),
                  StatusIs(absl::StatusCode::kInvalidArgument));
      EXPECT_THAT(VerifyConsistency(algorithm, old_size, new_size, old_root, new_root, {}),
                  StatusIs(absl::StatusCode::kInvalidArgument));
    }
  }
  EXPECT_GT(same_shape, 0) << "the seed never tried sizes with an equivalent proof";
}

TEST(MerkleTree, RejectsSizesOutsideTheTree) {
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const InMemorySubtreeSource source(a, Leaves(a, 5));
  const Hash h = Leaf(a, 0);
  const struct {
    uint64_t index, size;
    const char* why;
  } kInclusion[] = {
      {0, 0, "the empty tree has no leaves"},
      {5, 5, "leaves are numbered from 0: a tree of 5 ends at leaf 4"},
      {kMax, 5, "far past the end"},
      {kMax, kMax, "index == size at the largest size"},
  };
  for (const auto& c : kInclusion) {
    EXPECT_THAT(InclusionProof(a, source, c.index, c.size),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << c.why;
    EXPECT_THAT(VerifyInclusion(a, c.index, c.size, h, {}, h),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(absl::StrCat(c.index))))
        << c.why;
  }
  const struct {
    uint64_t old_size, new_size;
    const char* why;
  } kConsistency[] = {
      {0, 0, "RFC 9162 defines PROOF for 0 < m only"},
      {0, 5, "the empty tree: PROOF is undefined, and the contract says so"},
      {5, 4, "a log never shrinks"},
      {kMax, 1, "a log never shrinks, at the extremes"},
  };
  for (const auto& c : kConsistency) {
    EXPECT_THAT(ConsistencyProof(a, source, c.old_size, c.new_size),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << c.why;
    EXPECT_THAT(VerifyConsistency(a, c.old_size, c.new_size, h, h, {}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat(c.old_size, " to ", c.new_size))))
        << c.why;
  }
}

TEST(MerkleTree, VerificationErrorsSayWhatIsWrong) {
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const Log log(a, 100);
  ASSERT_OK_AND_ASSIGN(std::vector<Hash> proof, InclusionProof(a, log.store, 0, 100));
  ASSERT_EQ(proof.size(), 7u);  // leaf 0 sits 7 levels below the root of 100 leaves
  EXPECT_THAT(
      VerifyInclusion(a, 0, 100, log.leaves[0], absl::MakeSpan(proof).first(5), log.roots[100]),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("inclusion proof has 5 hashes, leaf 0 of a tree of size 100 "
                         "needs 7")));
  EXPECT_THAT(
      VerifyInclusion(a, 0, 100, log.leaves[1], proof, log.roots[100]),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr(absl::StrCat("differs from the tree head's ", HashHex(log.roots[100])))));

  ASSERT_OK_AND_ASSIGN(proof, ConsistencyProof(a, log.store, 6, 100));
  EXPECT_THAT(VerifyConsistency(a, 6, 100, log.roots[6], log.roots[100], {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("consistency proof has 0 hashes, trees of sizes 6 "
                                              "and 100 need ",
                                              proof.size()))));
  EXPECT_THAT(VerifyConsistency(a, 6, 100, log.roots[7], log.roots[100], proof),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("old tree head's")));
  EXPECT_THAT(VerifyConsistency(a, 6, 100, log.roots[6], log.roots[99], proof),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("the tree of size 100 does not extend the tree of size 6")));
}

TEST(MerkleTree, EqualSizesNeedAnEmptyProofAndEqualRoots) {
  const HashAlgorithm a = HashAlgorithm::kSm3;
  const Log log(a, 9);
  for (uint64_t size = 1; size <= 9; ++size) {
    EXPECT_THAT(ConsistencyProof(a, log.store, size, size), IsOkAndHolds(IsEmpty()));
    EXPECT_OK(VerifyConsistency(a, size, size, log.roots[size], log.roots[size], {}));
    EXPECT_THAT(VerifyConsistency(a, size, size, log.roots[size], log.roots[size - 1], {}),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("forked")));
    const Hash extra[] = {log.roots[size]};
    EXPECT_THAT(VerifyConsistency(a, size, size, log.roots[size], log.roots[size], extra),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(MerkleTree, SingleLeafTreeHasAnEmptyPathAndTheLeafAsRoot) {
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const Log log(a, 1);
  EXPECT_EQ(log.roots[1], log.leaves[0]);
  EXPECT_THAT(InclusionProof(a, log.store, 0, 1), IsOkAndHolds(IsEmpty()));
  EXPECT_OK(VerifyInclusion(a, 0, 1, log.leaves[0], {}, log.roots[1]));
  EXPECT_THAT(VerifyInclusion(a, 0, 1, Leaf(a, 1), {}, log.roots[1]),
              StatusIs(absl::StatusCode::kDataLoss));
}

// A source whose reads all fail, as a corrupt store would.
class FailingSource final : public SubtreeSource {
 public:
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override {
    return absl::DataLossError(absl::StrCat("checksum mismatch in subtree ", level, "/", index));
  }
};

TEST(MerkleTree, SourceErrorsPassThrough) {
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const FailingSource source;
  const auto data_loss = StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch"));
  EXPECT_THAT(RootHash(a, source, 5), data_loss);
  EXPECT_THAT(InclusionProof(a, source, 3, 5), data_loss);
  EXPECT_THAT(ConsistencyProof(a, source, 2, 5), data_loss);
  EXPECT_THAT(MerkleFrontier::Restore(a, source, 5), data_loss);
  // Nothing to read: the empty tree and a proof between equal sizes.
  EXPECT_THAT(RootHash(a, source, 0), IsOkAndHolds(EmptyRootHash(a)));
  EXPECT_THAT(ConsistencyProof(a, source, 5, 5), IsOkAndHolds(IsEmpty()));
  ASSERT_OK_AND_ASSIGN(const MerkleFrontier empty, MerkleFrontier::Restore(a, source, 0));
  EXPECT_EQ(empty.Root(), EmptyRootHash(a));
}

TEST(MerkleTree, InMemorySourceServesOnlyCompleteSubtrees) {
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const std::vector<Hash> l = Leaves(a, 5);
  const InMemorySubtreeSource source(a, l);
  EXPECT_EQ(source.size(), 5u);
  EXPECT_THAT(source.Subtree(0, 4), IsOkAndHolds(l[4]));
  EXPECT_THAT(source.Subtree(1, 1), IsOkAndHolds(NodeHash(a, l[2], l[3])));
  EXPECT_THAT(source.Subtree(2, 0),
              IsOkAndHolds(NodeHash(a, NodeHash(a, l[0], l[1]), NodeHash(a, l[2], l[3]))));
  EXPECT_THAT(source.Subtree(0, 5), StatusIs(absl::StatusCode::kNotFound));  // past the end
  EXPECT_THAT(source.Subtree(1, 2), StatusIs(absl::StatusCode::kNotFound));  // only leaf 4 there
  EXPECT_THAT(source.Subtree(3, 0), StatusIs(absl::StatusCode::kNotFound));  // 8 > 5 leaves
  EXPECT_THAT(source.Subtree(64, 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(source.Subtree(-1, 0), StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---------------------------------------------------------------------------------------------
// Huge trees: O(log n) reads.

// A consistent tree of up to 2^64 - 1 leaves that is cheap to query: every leaf is the same
// filler except a few marked ones, so a subtree without a marked leaf has one hash per level
// and any other is computed by recursion into the marked part only. Counts reads, and fails the
// test on a read of a subtree that is not complete in a tree of `size` leaves.
class SparseTree final : public SubtreeSource {
 public:
  SparseTree(HashAlgorithm algorithm, uint64_t size, std::map<uint64_t, Hash> marked)
      : algorithm_(algorithm), size_(size), marked_(std::move(marked)) {
    filler_.push_back(LeafHash(algorithm, "filler"));
    for (int level = 1; level < 64; ++level) {
      filler_.push_back(NodeHash(algorithm, filler_.back(), filler_.back()));
    }
  }
  absl::StatusOr<Hash> Subtree(int level, uint64_t index) const override {
    ++reads_;
    if (level < 0 || level > 63 || index >= (size_ >> level)) {
      ADD_FAILURE() << "read of subtree " << level << "/" << index << " in a tree of " << size_;
      return absl::NotFoundError("outside the tree");
    }
    return Compute(level, index << level);
  }
  Hash Leaf(uint64_t index) const {
    const auto it = marked_.find(index);
    return it == marked_.end() ? filler_[0] : it->second;
  }
  int TakeReads() const { return std::exchange(reads_, 0); }

 private:
  Hash Compute(int level, uint64_t begin) const {
    const uint64_t last = begin + ((uint64_t{1} << level) - 1);
    const auto it = marked_.lower_bound(begin);
    if (it == marked_.end() || it->first > last) return filler_[level];
    if (level == 0) return it->second;
    const uint64_t half = uint64_t{1} << (level - 1);
    return NodeHash(algorithm_, Compute(level - 1, begin), Compute(level - 1, begin + half));
  }

  const HashAlgorithm algorithm_;
  const uint64_t size_;
  const std::map<uint64_t, Hash> marked_;
  std::vector<Hash> filler_;  // filler_[L]: a level-L subtree of filler leaves
  mutable int reads_ = 0;
};

TEST(MerkleTree, ProofsOfHugeTreesReadLogarithmicallyManySubtrees) {
  // Inclusion: at most 64 levels, one read each, plus one incomplete right-edge sibling of up to
  // 63 perfect subtrees, which only the first step left off the right edge meets. Consistency
  // adds one read for the seed.
  constexpr int kReadBound = 2 * 64;
  const HashAlgorithm a = HashAlgorithm::kSha256;
  std::mt19937_64 rng(40);
  int most_reads = 0;
  for (const uint64_t size :
       {(uint64_t{1} << 40) + uint64_t{0x5a5a5a5a5}, uint64_t{1} << 40, (uint64_t{1} << 40) - 1,
        (uint64_t{1} << 63) + (rng() >> 2), uint64_t{1} << 63, kMax - 1, kMax}) {
    SCOPED_TRACE(absl::StrCat("size ", size));
    std::vector<uint64_t> indices = {0, 1, size / 3, size / 2, size - 2, size - 1};
    for (int i = 0; i < 4; ++i) indices.push_back(rng() % size);
    std::map<uint64_t, Hash> marked;
    for (uint64_t i : indices) marked[i] = LeafHash(a, absl::StrCat("marked-", i));
    const SparseTree tree(a, size, marked);

    ASSERT_OK_AND_ASSIGN(const Hash root, RootHash(a, tree, size));
    EXPECT_EQ(tree.TakeReads(), std::popcount(size));
    ASSERT_OK_AND_ASSIGN(const MerkleFrontier frontier, MerkleFrontier::Restore(a, tree, size));
    EXPECT_EQ(tree.TakeReads(), std::popcount(size));
    EXPECT_EQ(frontier.Root(), root);

    for (uint64_t index : indices) {
      ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof, InclusionProof(a, tree, index, size));
      const int reads = tree.TakeReads();
      most_reads = std::max(most_reads, reads);
      EXPECT_LE(reads, kReadBound) << "leaf " << index;
      EXPECT_LE(proof.size(), 64u);
      EXPECT_OK(VerifyInclusion(a, index, size, tree.Leaf(index), proof, root)) << index;
      const uint64_t neighbour = index == 0 ? 1 : index - 1;
      EXPECT_FALSE(VerifyInclusion(a, neighbour, size, tree.Leaf(index), proof, root).ok());
    }
    for (uint64_t old_size : {uint64_t{1}, uint64_t{1} << 20, size / 2 + 1, size - 1, size}) {
      ASSERT_OK_AND_ASSIGN(const std::vector<Hash> proof,
                           ConsistencyProof(a, tree, old_size, size));
      const int reads = tree.TakeReads();
      most_reads = std::max(most_reads, reads);
      EXPECT_LE(reads, kReadBound) << "from " << old_size;
      ASSERT_OK_AND_ASSIGN(const Hash old_root, RootHash(a, tree, old_size));
      tree.TakeReads();
      EXPECT_OK(VerifyConsistency(a, old_size, size, old_root, root, proof)) << old_size;
    }
  }
  EXPECT_GT(most_reads, 64) << "no case reached a deep incomplete right edge";
}

// ---------------------------------------------------------------------------------------------
// The frontier.

using Completed = std::tuple<int, uint64_t, Hash>;

std::vector<Completed> AppendRecording(MerkleFrontier& frontier, const Hash& leaf) {
  std::vector<Completed> completed;
  frontier.Append(leaf, [&](int level, uint64_t index, const Hash& hash) {
    completed.emplace_back(level, index, hash);
  });
  return completed;
}

TEST(MerkleFrontier, StartsEmpty) {
  for (HashAlgorithm a : kAlgorithms) {
    const MerkleFrontier frontier(a);
    EXPECT_EQ(frontier.size(), 0u);
    EXPECT_EQ(frontier.algorithm(), a);
    EXPECT_EQ(frontier.Root(), EmptyRootHash(a));
    EXPECT_THAT(frontier.subtree_roots(), IsEmpty());
  }
}

TEST(MerkleFrontier, CompletesExactlyTheSubtreesThatBecomeComplete) {
  for (HashAlgorithm a : kAlgorithms) {
    const std::vector<Hash> leaves = Leaves(a, 1100);
    const InMemorySubtreeSource reference(a, leaves);
    MerkleFrontier frontier(a);
    for (uint64_t i = 0; i < leaves.size(); ++i) {
      // (L, j) covers [j * 2^L, (j + 1) * 2^L): it completes when the size reaches its end.
      const uint64_t new_size = i + 1;
      std::vector<Completed> want;
      for (int level = 0; level < 64 && new_size % (uint64_t{1} << level) == 0; ++level) {
        const uint64_t index = new_size / (uint64_t{1} << level) - 1;
        ASSERT_OK_AND_ASSIGN(const Hash hash, reference.Subtree(level, index));
        want.emplace_back(level, index, hash);
      }
      ASSERT_EQ(AppendRecording(frontier, leaves[i]), want) << Name(a) << " leaf " << i;
      EXPECT_EQ(frontier.size(), new_size);
      EXPECT_EQ(frontier.subtree_roots().size(), static_cast<size_t>(std::popcount(new_size)));
    }
  }
}

TEST(MerkleFrontier, RestoredFrontierHasTheSameStateAndContinuesIdentically) {
  std::mt19937_64 rng(7);
  for (HashAlgorithm a : kAlgorithms) {
    const Log log(a, 2100);
    std::vector<uint64_t> sizes = {0, 1, 2, 3, 1024, 2047, 2048};
    for (int i = 0; i < 10; ++i) sizes.push_back(rng() % 2048);
    for (uint64_t size : sizes) {
      SCOPED_TRACE(absl::StrCat(Name(a), " size ", size));
      MerkleFrontier reference(a);
      for (uint64_t i = 0; i < size; ++i) AppendRecording(reference, log.leaves[i]);
      ASSERT_OK_AND_ASSIGN(MerkleFrontier restored, MerkleFrontier::Restore(a, log.store, size));
      EXPECT_EQ(restored.size(), size);
      EXPECT_EQ(restored.Root(), log.roots[size]);
      EXPECT_THAT(restored.subtree_roots(), ElementsAreArray(reference.subtree_roots()));
      for (uint64_t i = size; i < size + 52; ++i) {
        ASSERT_EQ(AppendRecording(restored, log.leaves[i]),
                  AppendRecording(reference, log.leaves[i]))
            << "leaf " << i;
        ASSERT_EQ(restored.Root(), log.roots[i + 1]) << "leaf " << i;
      }
    }
  }
}

TEST(MerkleFrontier, PersistsAsSizeAndSubtreeRoots) {
  const HashAlgorithm a = HashAlgorithm::kSm3;
  const Log log(a, 700);
  MerkleFrontier frontier(a);
  for (uint64_t size = 0; size < 700; ++size) {
    ASSERT_OK_AND_ASSIGN(MerkleFrontier copy,
                         MerkleFrontier::FromSubtreeRoots(a, size, frontier.subtree_roots()));
    EXPECT_EQ(copy.Root(), log.roots[size]);
    EXPECT_EQ(AppendRecording(copy, log.leaves[size]), AppendRecording(frontier, log.leaves[size]));
    EXPECT_EQ(copy.Root(), frontier.Root());
  }
  // 700 = 0b1010111100: six subtrees.
  ASSERT_EQ(frontier.subtree_roots().size(), 6u);
  EXPECT_THAT(MerkleFrontier::FromSubtreeRoots(a, 700, frontier.subtree_roots().first(5)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has 6 subtree roots")));
  EXPECT_THAT(MerkleFrontier::FromSubtreeRoots(a, 0, frontier.subtree_roots()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MerkleFrontier, AppendsAtTheTopOfTheSizeRange) {
  // Restored one leaf short of 2^63, the next append completes subtrees at all 64 levels.
  const HashAlgorithm a = HashAlgorithm::kSha256;
  const uint64_t last = (uint64_t{1} << 63) - 1;
  const Hash leaf = LeafHash(a, "last");
  const SparseTree tree(a, last + 1, {{last, leaf}, {12345, LeafHash(a, "early")}});
  ASSERT_OK_AND_ASSIGN(MerkleFrontier frontier, MerkleFrontier::Restore(a, tree, last));
  EXPECT_EQ(frontier.subtree_roots().size(), 63u);
  const std::vector<Completed> completed = AppendRecording(frontier, leaf);
  ASSERT_EQ(completed.size(), 64u);
  for (int level = 0; level < 64; ++level) {
    EXPECT_EQ(std::get<0>(completed[level]), level);
    EXPECT_EQ(std::get<1>(completed[level]), (last >> level));
    EXPECT_THAT(tree.Subtree(level, last >> level), IsOkAndHolds(std::get<2>(completed[level])));
  }
  EXPECT_EQ(frontier.size(), uint64_t{1} << 63);
  EXPECT_THAT(RootHash(a, tree, uint64_t{1} << 63), IsOkAndHolds(frontier.Root()));

  // The largest size a frontier can reach: 2^64 - 1 leaves, 64 subtrees.
  const SparseTree full(a, kMax, {{kMax - 1, leaf}});
  ASSERT_OK_AND_ASSIGN(frontier, MerkleFrontier::Restore(a, full, kMax - 1));
  const std::vector<Completed> only_leaf = AppendRecording(frontier, leaf);
  EXPECT_EQ(only_leaf, std::vector<Completed>({{0, kMax - 1, leaf}}));
  EXPECT_EQ(frontier.subtree_roots().size(), 64u);
  EXPECT_THAT(RootHash(a, full, kMax), IsOkAndHolds(frontier.Root()));
}

}  // namespace
}  // namespace vigil::audit
