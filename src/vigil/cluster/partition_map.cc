#include "vigil/cluster/partition_map.h"

#include <string>

#include "absl/strings/numbers.h"
#include "vigil/common/check.h"
#include "vigil/common/sha256.h"

namespace vigil::cluster {

PartitionMap::PartitionMap(int partitions) : partitions_(partitions) {
  VIGIL_CHECK(partitions >= 1 && partitions <= kMaxPartitions);
}

int PartitionMap::Of(std::string_view bank_id, std::string_view account_id) const {
  std::string input("vigil.partition.v1");
  input.push_back('\0');
  input.append(bank_id);
  input.push_back('\0');
  input.append(account_id);
  const std::string hex = Sha256Hex(input);
  uint64_t prefix = 0;
  VIGIL_CHECK(absl::SimpleHexAtoi(absl::string_view(hex).substr(0, 16), &prefix));
  return static_cast<int>(prefix % static_cast<uint64_t>(partitions_));
}

}  // namespace vigil::cluster
