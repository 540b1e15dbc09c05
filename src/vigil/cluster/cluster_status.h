// ClusterStatus: a cluster as `vigil cluster status` shows it (docs/cluster.md, "Operations"),
// read from its log and buckets without changing anything: the layout the nodes agreed on, the
// log's extent, the live nodes with how far each has applied the log (its lag), and each
// partition's lease holder and when its lease expires unless renewed.
//
// Thread safety: a function over a connection (NatsConnection's).
#ifndef VIGIL_CLUSTER_CLUSTER_STATUS_H_
#define VIGIL_CLUSTER_CLUSTER_STATUS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/cluster/cluster_layout.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cluster {

struct NodeReport {
  std::string node_id;
  uint64_t position = 0;    // the last message of the log it applied
  uint64_t lag = 0;         // messages of the log it has not applied yet
  int partitions = 0;       // partitions it decides
  int64_t seen_ms_ago = 0;  // since its registration was last renewed
};

struct PartitionReport {
  int partition = 0;
  std::string holder;         // "" when no node holds its lease (it waits for one)
  int64_t expires_in_ms = 0;  // unless renewed; 0 without a holder
};

struct ClusterReport {
  ClusterLayout layout;
  std::chrono::milliseconds lease_ttl{0};
  StreamStatus log;
  std::vector<NodeReport> nodes;            // by node id
  std::vector<PartitionReport> partitions;  // by partition

  // As text: one line for the log, one per node, one per partition.
  std::string ToText() const;
  // As one JSON object (docs/cluster.md gives its members).
  std::string ToJson() const;
};

// The cluster named "name" (kNotFound, naming it, when it was never created there).
absl::StatusOr<ClusterReport> ReadClusterStatus(NatsConnection& nats, std::string_view name);

// What a node writes in its registration (the nodes bucket), and reading it back: its log
// position and the number of partitions it decides ("position=N partitions=K").
std::string EncodeRegistration(uint64_t position, int partitions);
bool DecodeRegistration(std::string_view value, uint64_t* position, int* partitions);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_CLUSTER_STATUS_H_
