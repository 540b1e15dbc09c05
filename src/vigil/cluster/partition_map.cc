#include "vigil/cluster/partition_map.h"

#include <array>
#include <string>

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
  const std::array<uint8_t, 32> digest = Sha256(input);
  uint64_t prefix = 0;
  for (int k = 0; k < 8; ++k) prefix = (prefix << 8) | digest[k];
  return static_cast<int>(prefix % static_cast<uint64_t>(partitions_));
}

}  // namespace vigil::cluster
