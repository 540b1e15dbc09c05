#include "vigil/cluster/lease_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil::cluster {

std::string LeaseKey(int partition) { return absl::StrCat("p.", partition); }

LeaseTable::LeaseTable(KeyValueBucket* bucket, std::string node_id)
    : bucket_(bucket), node_id_(std::move(node_id)) {}

absl::StatusOr<Lease> LeaseTable::Acquire(int partition) {
  absl::StatusOr<uint64_t> revision = bucket_->Create(LeaseKey(partition), node_id_);
  if (absl::IsAlreadyExists(revision.status())) {
    absl::StatusOr<Lease> holder = Holder(partition);
    return absl::AlreadyExistsError(absl::StrCat(
        "partition ", partition, " is held by ",
        holder.ok() ? absl::StrCat("node ", holder->holder) : std::string("another node")));
  }
  VIGIL_RETURN_IF_ERROR(revision.status());
  return Lease{partition, node_id_, *revision, *revision};
}

absl::StatusOr<Lease> LeaseTable::Renew(const Lease& lease) {
  absl::StatusOr<uint64_t> revision =
      bucket_->Update(LeaseKey(lease.partition), node_id_, lease.revision);
  if (absl::IsFailedPrecondition(revision.status())) {
    return absl::FailedPreconditionError(absl::StrCat("the lease of partition ", lease.partition,
                                                      " was lost (it expired, or another node "
                                                      "took it): ",
                                                      revision.status().message()));
  }
  VIGIL_RETURN_IF_ERROR(revision.status());
  Lease renewed = lease;
  renewed.revision = *revision;
  return renewed;
}

absl::Status LeaseTable::Release(const Lease& lease) {
  const absl::Status deleted = bucket_->Delete(LeaseKey(lease.partition), lease.revision);
  if (absl::IsFailedPrecondition(deleted)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the lease of partition ", lease.partition, " was lost before its release"));
  }
  return deleted;
}

absl::StatusOr<Lease> LeaseTable::Holder(int partition) {
  VIGIL_ASSIGN_OR_RETURN(KeyValueEntry entry, bucket_->Get(LeaseKey(partition)));
  return Lease{partition, entry.value, entry.revision, 0};
}

}  // namespace vigil::cluster
