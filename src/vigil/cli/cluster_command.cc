#include "vigil/cli/cluster_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "vigil/audit/signing_key.h"
#include "vigil/cluster/cluster_status.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/partition_audit.h"

namespace vigil::cli {
namespace {

struct ClusterFlags {
  std::vector<std::string> nats;
  std::string cluster = "main";
  bool json = false;
  std::string out;  // audit-export
  std::string key;
};

int Fail(const absl::Status& status, const char* command = "status") {
  std::cerr << "vigil cluster " << command << ": " << status.message() << "\n";
  return absl::IsNotFound(status) ? kExitInputRejected : kExitUsage;
}

int RunAuditExport(const ClusterFlags& flags) {
  constexpr char kCommand[] = "audit-export";
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer =
      audit::LogSigner::FromPemFile(flags.key);
  if (!signer.ok()) return Fail(signer.status(), kCommand);
  cluster::NatsOptions options;
  options.servers = flags.nats;
  options.name = "vigil-cluster-audit-export";
  absl::StatusOr<std::unique_ptr<cluster::NatsConnection>> nats =
      cluster::NatsConnection::Connect(options);
  if (!nats.ok()) return Fail(nats.status(), kCommand);
  absl::StatusOr<std::vector<cluster::PartitionAuditLog>> logs = cluster::ExportPartitionAuditLogs(
      **nats, flags.cluster, flags.out,
      std::shared_ptr<const audit::LogSigner>(*std::move(signer)));
  if (!logs.ok()) return Fail(logs.status(), kCommand);
  uint64_t records = 0;
  for (const cluster::PartitionAuditLog& log : *logs) {
    std::cout << log.data_dir << "\t" << log.records << " records\t" << log.batches << " batches\n";
    records += log.records;
  }
  std::cerr << "vigil cluster audit-export: " << records << " decisions in " << logs->size()
            << " partition logs under " << flags.out
            << "; check each with vigil audit verify --data-dir DIR --pubkey PUB\n";
  return kExitOk;
}

int RunStatus(const ClusterFlags& flags) {
  cluster::NatsOptions options;
  options.servers = flags.nats;
  options.name = "vigil-cluster-status";
  absl::StatusOr<std::unique_ptr<cluster::NatsConnection>> nats =
      cluster::NatsConnection::Connect(options);
  if (!nats.ok()) return Fail(nats.status());
  absl::StatusOr<cluster::ClusterReport> report = cluster::ReadClusterStatus(**nats, flags.cluster);
  if (!report.ok()) return Fail(report.status());
  std::cout << (flags.json ? report->ToJson() + "\n" : report->ToText());
  return kExitOk;
}

}  // namespace

Command AddClusterCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ClusterFlags>();
  CLI::App* app = vigil.add_subcommand(
      "cluster",
      "A cluster of vigil nodes over NATS JetStream (docs/cluster.md); a node is "
      "`vigil serve --cluster-nats URL --cluster-node-id ID`");
  app->require_subcommand(1);
  CLI::App* status = app->add_subcommand(
      "status",
      "The cluster's layout, log, nodes (position, lag) and partitions (lease holder, "
      "expiry); changes nothing");
  status->add_option("--nats", flags->nats, "A NATS server of the cluster (repeat for several)")
      ->required();
  status->add_option("--cluster", flags->cluster, "The cluster's name (cluster.name)")
      ->capture_default_str();
  status->add_flag("--json", flags->json, "One JSON object instead of the table");
  CLI::App* audit_export = app->add_subcommand(
      "audit-export",
      "Each partition's audit log built from the cluster's log into OUT/partition-<p> (a data "
      "dir for vigil audit verify, prove and export), its tree heads signed with --key");
  audit_export->add_option("--nats", flags->nats, "A NATS server of the cluster")->required();
  audit_export->add_option("--cluster", flags->cluster, "The cluster's name")
      ->capture_default_str();
  audit_export->add_option("--out", flags->out, "A new directory for the logs")->required();
  audit_export->add_option("--key", flags->key, "The signing key (vigil audit keygen)")->required();
  app->footer(
      "Examples:\n  vigil cluster status --nats nats://127.0.0.1:4222 --cluster main\n"
      "  vigil cluster audit-export --nats nats://127.0.0.1:4222 --out audit/ --key key.pem\n"
      "Exit: 0 shown; 1 no such cluster on those servers; 2 usage error or servers unreachable.");
  return Command{app, [flags, status, audit_export] {
                   if (status->parsed()) return RunStatus(*flags);
                   if (audit_export->parsed()) return RunAuditExport(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
