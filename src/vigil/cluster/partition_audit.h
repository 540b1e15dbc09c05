// PartitionAuditExport: each partition's audit log (docs/audit.md) built from a cluster's log
// (docs/cluster.md, "Audit across nodes"): the decision batches of partition p, in log order,
// appended record by record to a Merkle log of its own with signed tree heads, in
// DIR/partition-<p> (a data dir as `vigil audit verify`, `prove` and `export` read it). The
// records are the bytes the owners wrote into the batches, so the same cluster log gives the
// same records and roots whoever exports it; the heads are signed with the exporter's key.
//
// Thread safety: a function over a connection (NatsConnection's).
#ifndef VIGIL_CLUSTER_PARTITION_AUDIT_H_
#define VIGIL_CLUSTER_PARTITION_AUDIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/audit/signing_key.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cluster {

struct PartitionAuditLog {
  int partition = 0;
  std::string data_dir;  // DIR/partition-<p>
  uint64_t records = 0;
  uint64_t batches = 0;
};

// Partition p's data dir in export "out_dir": out_dir/partition-<p>.
std::string PartitionAuditDir(const std::string& out_dir, int partition);

// The partitions' data dirs of export "dir", in partition order (partition-0, partition-1, ...
// while they hold a store); empty when "dir" is no export (a data dir with a store of its own,
// or one without partition-0).
std::vector<std::string> PartitionAuditDirs(const std::string& dir);

// Builds every partition's log of cluster "name" under "out_dir", which must not hold one
// already (kAlreadyExists: an export is made once, into a new directory). kNotFound when there
// is no such cluster.
absl::StatusOr<std::vector<PartitionAuditLog>> ExportPartitionAuditLogs(
    NatsConnection& nats, std::string_view name, const std::string& out_dir,
    std::shared_ptr<const audit::LogSigner> signer);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_PARTITION_AUDIT_H_
