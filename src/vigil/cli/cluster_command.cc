#include "vigil/cli/cluster_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "vigil/cluster/cluster_status.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cli {
namespace {

struct ClusterFlags {
  std::vector<std::string> nats;
  std::string cluster = "main";
  bool json = false;
};

int Fail(const absl::Status& status) {
  std::cerr << "vigil cluster status: " << status.message() << "\n";
  return absl::IsNotFound(status) ? kExitInputRejected : kExitUsage;
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
  app->footer(
      "Example:\n  vigil cluster status --nats nats://127.0.0.1:4222 --cluster main\n"
      "Exit: 0 shown; 1 no such cluster on those servers; 2 usage error or servers unreachable.");
  return Command{app, [flags, status] {
                   if (status->parsed()) return RunStatus(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
