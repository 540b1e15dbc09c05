#include "vigil/cluster/cluster_status.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "vigil/cluster/key_value_bucket.h"
#include "vigil/common/json_text.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster {
namespace {

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string EncodeRegistration(uint64_t position, int partitions) {
  return absl::StrCat("position=", position, " partitions=", partitions);
}

bool DecodeRegistration(std::string_view value, uint64_t* position, int* partitions) {
  bool have_position = false;
  bool have_partitions = false;
  for (absl::string_view field : absl::StrSplit(ToAbsl(value), ' ', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&field, "position=")) {
      have_position = absl::SimpleAtoi(field, position);
    } else if (absl::ConsumePrefix(&field, "partitions=")) {
      have_partitions = absl::SimpleAtoi(field, partitions);
    }
  }
  return have_position && have_partitions;
}

absl::StatusOr<ClusterReport> ReadClusterStatus(NatsConnection& nats, std::string_view name) {
  ClusterReport report;
  ClusterLayout named;
  named.name = std::string(name);
  absl::StatusOr<std::unique_ptr<KeyValueBucket>> config =
      nats.OpenBucket(BucketName(named, "config"));
  if (absl::IsNotFound(config.status())) {
    return absl::NotFoundError(absl::StrCat("no cluster \"", ToAbsl(name),
                                            "\" on these NATS servers (its bucket ",
                                            BucketName(named, "config"), " does not exist)"));
  }
  VIGIL_RETURN_IF_ERROR(config.status());
  VIGIL_ASSIGN_OR_RETURN(KeyValueEntry stored, (*config)->Get("layout"));
  VIGIL_ASSIGN_OR_RETURN(report.layout, DecodeLayout(stored.value));
  VIGIL_ASSIGN_OR_RETURN(report.log, nats.StatusOf(LogStreamName(report.layout)));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KeyValueBucket> nodes,
                         nats.OpenBucket(BucketName(report.layout, "nodes")));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<KeyValueBucket> leases,
                         nats.OpenBucket(BucketName(report.layout, "leases"), &report.lease_ttl));
  const int64_t now_ns = NowUnixNs();
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> node_keys, nodes->Keys());
  for (const std::string& key : node_keys) {
    if (key.rfind("n.", 0) != 0) continue;
    absl::StatusOr<KeyValueEntry> entry = nodes->Get(key);
    if (!entry.ok()) continue;  // expired between the listing and the read
    NodeReport& node = report.nodes.emplace_back();
    node.node_id = key.substr(2);
    DecodeRegistration(entry->value, &node.position, &node.partitions);
    node.lag =
        report.log.last_sequence > node.position ? report.log.last_sequence - node.position : 0;
    node.seen_ms_ago = std::max<int64_t>(0, (now_ns - entry->written_unix_ns) / 1'000'000);
  }
  for (int p = 0; p < report.layout.partitions; ++p) {
    PartitionReport& part = report.partitions.emplace_back();
    part.partition = p;
    absl::StatusOr<KeyValueEntry> entry = leases->Get(absl::StrCat("p.", p));
    if (absl::IsNotFound(entry.status())) continue;
    VIGIL_RETURN_IF_ERROR(entry.status());
    part.holder = entry->value;  // the lease's value is its holder's id (lease_table.h)
    part.expires_in_ms = std::max<int64_t>(
        0, (entry->written_unix_ns - now_ns) / 1'000'000 + report.lease_ttl.count());
  }
  return report;
}

std::string ClusterReport::ToText() const {
  std::string out = absl::StrFormat(
      "cluster %s: %d partitions (%s), %d replicas, lease TTL %d ms\n"
      "log %s: %d messages, sequences %d to %d%s\n",
      layout.name, layout.partitions, layout.partition_hash, layout.replicas, lease_ttl.count(),
      LogStreamName(layout), log.messages, log.first_sequence, log.last_sequence,
      log.leader.empty() ? "" : absl::StrCat(", leader ", log.leader));
  absl::StrAppendFormat(&out, "%-24s %12s %10s %10s %12s\n", "node", "position", "lag",
                        "partitions", "seen_ms_ago");
  for (const NodeReport& n : nodes) {
    absl::StrAppendFormat(&out, "%-24s %12d %10d %10d %12d\n", n.node_id, n.position, n.lag,
                          n.partitions, n.seen_ms_ago);
  }
  absl::StrAppendFormat(&out, "%-10s %-24s %14s\n", "partition", "holder", "expires_in_ms");
  for (const PartitionReport& p : partitions) {
    absl::StrAppendFormat(&out, "%-10d %-24s %14d\n", p.partition,
                          p.holder.empty() ? "(none)" : p.holder, p.expires_in_ms);
  }
  return out;
}

std::string ClusterReport::ToJson() const {
  std::string out = "{\"cluster\":";
  AppendJsonString(layout.name, &out);
  absl::StrAppend(&out, ",\"partitions\":", layout.partitions, ",\"partition_hash\":");
  AppendJsonString(layout.partition_hash, &out);
  absl::StrAppend(&out, ",\"replicas\":", layout.replicas, ",\"lease_ttl_ms\":", lease_ttl.count(),
                  ",\"log\":{\"stream\":");
  AppendJsonString(LogStreamName(layout), &out);
  absl::StrAppend(&out, ",\"messages\":", log.messages, ",\"first_sequence\":", log.first_sequence,
                  ",\"last_sequence\":", log.last_sequence, ",\"leader\":");
  AppendJsonString(log.leader, &out);
  out += "},\"nodes\":[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeReport& n = nodes[i];
    if (i > 0) out += ',';
    out += "{\"node\":";
    AppendJsonString(n.node_id, &out);
    absl::StrAppend(&out, ",\"position\":", n.position, ",\"lag\":", n.lag,
                    ",\"partitions\":", n.partitions, ",\"seen_ms_ago\":", n.seen_ms_ago, "}");
  }
  out += "],\"leases\":[";
  for (size_t i = 0; i < partitions.size(); ++i) {
    const PartitionReport& p = partitions[i];
    if (i > 0) out += ',';
    absl::StrAppend(&out, "{\"partition\":", p.partition, ",\"holder\":");
    if (p.holder.empty()) {
      out += "null";
    } else {
      AppendJsonString(p.holder, &out);
    }
    absl::StrAppend(&out, ",\"expires_in_ms\":", p.expires_in_ms, "}");
  }
  out += "]}";
  return out;
}

}  // namespace vigil::cluster
