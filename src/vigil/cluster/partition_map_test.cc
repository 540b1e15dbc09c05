#include "vigil/cluster/partition_map.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace vigil::cluster {
namespace {

// The expected partitions were computed independently with Python's hashlib:
//   h = hashlib.sha256(b"vigil.partition.v1\0" + bank + b"\0" + account).digest()
//   int.from_bytes(h[:8], "big") % partitions
TEST(PartitionMapTest, MatchesTheDocumentedHash) {
  EXPECT_EQ(PartitionMap(64).Of("B1", "A1"), 32);
  EXPECT_EQ(PartitionMap(7).Of("B1", "A1"), 2);
  EXPECT_EQ(PartitionMap(4096).Of("B1", "A1"), 2720);
  EXPECT_EQ(PartitionMap(64).Of("BANK0001", "ACC-000042"), 1);
  EXPECT_EQ(PartitionMap(4096).Of("BANK0001", "ACC-000042"), 3073);
  EXPECT_EQ(PartitionMap(7).Of("011000015", "8000123456"), 5);
  EXPECT_EQ(PartitionMap(64).Of("", ""), 25);
}

TEST(PartitionMapTest, BankAndAccountAreSeparateFields) {
  // "B1"+"1A" and "B11"+"A" would collide if the fields were only concatenated.
  const PartitionMap map(4096);
  EXPECT_NE(map.Of("B1", "1A"), map.Of("B11", "A"));
}

TEST(PartitionMapTest, SpreadsAccountsEvenly) {
  const PartitionMap map(64);
  std::vector<int> counts(64, 0);
  constexpr int kAccounts = 64'000;
  for (int k = 0; k < kAccounts; ++k) ++counts[map.Of("B1", absl::StrCat("ACC", k))];
  // Chi-square with 63 degrees of freedom: 110 is beyond its 99.9th percentile (103.4).
  double chi2 = 0;
  for (const int c : counts) chi2 += std::pow(c - kAccounts / 64.0, 2) / (kAccounts / 64.0);
  EXPECT_LT(chi2, 110.0);
}

TEST(PartitionMapTest, OnePartitionHoldsEverything) {
  EXPECT_EQ(PartitionMap(1).Of("B1", "A1"), 0);
}

}  // namespace
}  // namespace vigil::cluster
