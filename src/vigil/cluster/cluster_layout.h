// ClusterLayout: what every node of one cluster must agree on, and the names derived from it
// (docs/cluster.md, "The cluster log"): the cluster's name, its number of partitions, the
// partition hash and how many replicas JetStream keeps of the log and the buckets.
//
// The first node stores the layout in the cluster's config bucket; every later node compares
// its own with the stored one and refuses to start on a difference (AgreeLayout), so the
// partition of an account can never change silently (a new count would move most accounts to
// another partition and split their history between two owners).
//
// Thread safety: value type and free functions; AgreeLayout as KeyValueBucket.
#ifndef VIGIL_CLUSTER_CLUSTER_LAYOUT_H_
#define VIGIL_CLUSTER_CLUSTER_LAYOUT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cluster/key_value_bucket.h"

namespace vigil::cluster {

struct ClusterLayout {
  std::string name = "main";  // 1-32 of [A-Za-z0-9_-]
  int partitions = 64;        // 1..PartitionMap::kMaxPartitions
  std::string partition_hash = "sha256-v1";
  int replicas = 3;  // JetStream replicas of the log and the buckets: 1, 3 or 5

  bool operator==(const ClusterLayout&) const = default;
};

// Every problem of "layout", naming the field (kInvalidArgument), or OK.
absl::Status CheckLayout(const ClusterLayout& layout);

// The layout as stored: "key=value" lines in a fixed order (name, partitions, partition_hash,
// replicas), and back. Decode names the line it cannot read.
std::string EncodeLayout(const ClusterLayout& layout);
absl::StatusOr<ClusterLayout> DecodeLayout(std::string_view text);

// Stores "mine" in "config" (key "layout") when the cluster has none, else compares: the
// stored layout when they agree, kFailedPrecondition naming every difference otherwise.
absl::StatusOr<ClusterLayout> AgreeLayout(KeyValueBucket& config, const ClusterLayout& mine);

// Names. The log stream "VIGIL_<name>" holds the subjects "vigil.<name>.pay.<p>" (payments of
// partition p) and "vigil.<name>.dec.<p>" (its decisions); buckets are "vigil_<name>_<what>".
std::string LogStreamName(const ClusterLayout& layout);
std::vector<std::string> LogSubjects(const ClusterLayout& layout);
std::string PaymentSubject(const ClusterLayout& layout, int partition);
std::string DecisionSubject(const ClusterLayout& layout, int partition);
std::string BucketName(const ClusterLayout& layout, std::string_view what);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_CLUSTER_LAYOUT_H_
