// `vigil cluster status --nats URL [--nats URL ...] [--cluster NAME] [--json]`: a cluster's
// state as its NATS JetStream servers hold it (docs/cluster.md, "Operations"): the layout, the
// log's extent, each live node's log position and lag, and each partition's lease holder and
// lease expiry. It changes nothing. A node of a cluster is `vigil serve` with cluster.nats set.
// `vigil cluster audit-export --nats URL [--cluster NAME] --out DIR --key KEY`: each
// partition's audit log built from the cluster's log into DIR/partition-<p>
// (cluster/partition_audit.h), for `vigil audit verify`, `prove` and `export`.
// Exit: 0 done; 1 no such cluster on those servers; 2 usage error, the servers unreachable, or
// DIR not empty.
#ifndef VIGIL_CLI_CLUSTER_COMMAND_H_
#define VIGIL_CLI_CLUSTER_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddClusterCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_CLUSTER_COMMAND_H_
