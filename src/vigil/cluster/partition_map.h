// PartitionMap: which of the cluster's partitions an account belongs to (docs/cluster.md,
// "Partitions"). A payment belongs to its originator's partition.
//
//   partition = u64 big-endian of the first 8 bytes of
//               SHA-256("vigil.partition.v1" 0x00 bank_id 0x00 account_id), mod partitions
//
// The hash is named ("sha256-v1", part of the ClusterLayout) and never changes for that name:
// every node, every version, and anyone with `sha256sum` computes the same partition. Bank id
// and account id are the party's own (core/transaction.h), unnormalized.
//
// Thread safety: immutable value type.
#ifndef VIGIL_CLUSTER_PARTITION_MAP_H_
#define VIGIL_CLUSTER_PARTITION_MAP_H_

#include <cstdint>
#include <string_view>

namespace vigil::cluster {

class PartitionMap {
 public:
  static constexpr std::string_view kHashName = "sha256-v1";
  static constexpr int kMaxPartitions = 4096;

  // REQUIRES: 1 <= partitions <= kMaxPartitions (ClusterLayout checks it first).
  explicit PartitionMap(int partitions);

  int Of(std::string_view bank_id, std::string_view account_id) const;
  int size() const { return partitions_; }

 private:
  int partitions_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_PARTITION_MAP_H_
