#include "vigil/cluster/partition_audit.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/audit/audit_log.h"
#include "vigil/cluster/cluster_status.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/cluster/partition_writer.h"
#include "vigil/cluster/stream_reader.h"
#include "vigil/common/clock.h"
#include "vigil/common/status_macros.h"
#include "vigil/store/kv_store.h"

namespace vigil::cluster {
namespace {

// One partition's log: its decision subject read from the start to its last message now,
// every record appended in order.
absl::StatusOr<PartitionAuditLog> ExportPartition(NatsConnection& nats, const ClusterLayout& layout,
                                                  int partition, const std::string& out_dir,
                                                  std::shared_ptr<const audit::LogSigner> signer) {
  PartitionAuditLog out;
  out.partition = partition;
  out.data_dir = PartitionAuditDir(out_dir, partition);
  KvStoreOptions store_options;
  store_options.path = out.data_dir + "/features";
  store_options.column_families = audit::AuditColumnFamilies();
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KvStore> store, KvStore::Open(store_options));
  audit::AuditLogOptions log_options;
  log_options.signer = std::move(signer);
  log_options.sync = false;  // made durable once, when the log closes (a store flush)
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditLog> log,
                         audit::AuditLog::Open(store.get(), log_options, RealClock()));
  const std::string subject = DecisionSubject(layout, partition);
  VIGIL_ASSIGN_OR_RETURN(uint64_t subject_last,
                         nats.LastSequenceOf(LogStreamName(layout), subject));
  if (subject_last > 0) {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<StreamReader> reader,
                           nats.Read(LogStreamName(layout), subject, 1));
    for (uint64_t at = 0; at < subject_last;) {
      VIGIL_ASSIGN_OR_RETURN(std::optional<StreamMessage> m,
                             reader->Next(std::chrono::seconds(10)));
      if (!m.has_value()) {
        return absl::DeadlineExceededError(absl::StrCat("reading ", subject,
                                                        ": nothing after sequence ", at,
                                                        " within 10 s (of ", subject_last, ")"));
      }
      at = m->sequence;
      if (m->Header(kKindHeader) != kDecisionsKind) continue;  // takeover markers
      VIGIL_ASSIGN_OR_RETURN(std::vector<DecidedPayment> batch, DecodeDecisions(m->data));
      std::vector<audit::PendingRecord> records;
      records.reserve(batch.size());
      for (DecidedPayment& d : batch) {
        records.push_back({std::move(d.transaction_id), std::move(d.record)});
      }
      out.records += records.size();
      ++out.batches;
      VIGIL_RETURN_IF_ERROR(log->Append(std::move(records)).status());
    }
  }
  log.reset();  // the final signed tree head
  VIGIL_RETURN_IF_ERROR(store->Flush());
  return out;
}

}  // namespace

std::string PartitionAuditDir(const std::string& out_dir, int partition) {
  return absl::StrCat(out_dir, "/partition-", partition);
}

std::vector<std::string> PartitionAuditDirs(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> out;
  if (std::filesystem::exists(dir + "/features", ec)) return out;
  for (int p = 0;; ++p) {
    std::string partition = PartitionAuditDir(dir, p);
    if (!std::filesystem::is_directory(partition + "/features", ec)) break;
    out.push_back(std::move(partition));
  }
  return out;
}

absl::StatusOr<std::vector<PartitionAuditLog>> ExportPartitionAuditLogs(
    NatsConnection& nats, std::string_view name, const std::string& out_dir,
    std::shared_ptr<const audit::LogSigner> signer) {
  VIGIL_ASSIGN_OR_RETURN(ClusterReport cluster, ReadClusterStatus(nats, name));
  std::error_code ec;
  if (std::filesystem::exists(out_dir, ec) && !std::filesystem::is_empty(out_dir, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("'", out_dir, "' is not empty: an export goes into a new directory"));
  }
  std::vector<PartitionAuditLog> out;
  for (int p = 0; p < cluster.layout.partitions; ++p) {
    absl::StatusOr<PartitionAuditLog> one =
        ExportPartition(nats, cluster.layout, p, out_dir, signer);
    if (!one.ok()) {
      return absl::Status(one.status().code(),
                          absl::StrCat("partition ", p, ": ", one.status().message()));
    }
    out.push_back(*std::move(one));
  }
  return out;
}

}  // namespace vigil::cluster
