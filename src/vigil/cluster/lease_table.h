// LeaseTable: which node owns each partition of the cluster (docs/cluster.md, "Ownership and
// failover"). Partition p's lease is key "p.<p>" of the cluster's leases bucket, whose TTL is
// the lease's time to live; its value is the holder's node id.
//
// A lease is taken only by creating the key (possible once the previous entry expired or was
// released), renewed only by a compare-and-set on the revision its holder last wrote, and
// released only by a delete at that revision: JetStream orders these writes (Raft), so at any
// moment at most one node holds a partition's lease, and a node learns that it lost one from
// its next renewal. The lease says who *should* decide; what keeps a node that lost its lease
// (a paused process) from deciding is the fencing of the decision log, which does not depend on
// any clock (DecisionLog).
//
// Thread safety: every method may be called from any thread.
#ifndef VIGIL_CLUSTER_LEASE_TABLE_H_
#define VIGIL_CLUSTER_LEASE_TABLE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cluster/key_value_bucket.h"

namespace vigil::cluster {

struct Lease {
  int partition = -1;
  std::string holder;     // node id
  uint64_t revision = 0;  // of the last write (acquire or renew): what the next renew expects
  // The revision that acquired it: grows with every new holder of the partition, so it orders
  // the partition's owners (the epoch a takeover marker records).
  uint64_t epoch = 0;
};

class LeaseTable {
 public:
  // "bucket" must outlive the table; its TTL is the leases' time to live.
  LeaseTable(KeyValueBucket* bucket, std::string node_id);

  // Takes the lease of a free partition; kAlreadyExists naming the holder when it is held.
  absl::StatusOr<Lease> Acquire(int partition);
  // The renewed lease; kFailedPrecondition when it was lost (it expired, and maybe another
  // node holds it now).
  absl::StatusOr<Lease> Renew(const Lease& lease);
  // Gives the lease up at once (a planned move); kFailedPrecondition when it was lost already.
  absl::Status Release(const Lease& lease);
  // Who holds the partition now (revision and holder; epoch unknown: 0); kNotFound when free.
  absl::StatusOr<Lease> Holder(int partition);

  const std::string& node_id() const { return node_id_; }

 private:
  KeyValueBucket* bucket_;
  std::string node_id_;
};

// The key of partition p's lease.
std::string LeaseKey(int partition);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_LEASE_TABLE_H_
