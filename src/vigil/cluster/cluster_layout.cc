#include "vigil/cluster/cluster_layout.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "vigil/cluster/partition_map.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster {
namespace {

constexpr char kLayoutKey[] = "layout";

}  // namespace

absl::Status CheckLayout(const ClusterLayout& layout) {
  std::vector<std::string> problems;
  const bool name_ok =
      !layout.name.empty() && layout.name.size() <= 32 &&
      std::all_of(layout.name.begin(), layout.name.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
  if (!name_ok) {
    problems.push_back(
        absl::StrCat("cluster.name \"", layout.name, "\": 1 to 32 letters, digits, '-' or '_'"));
  }
  if (layout.partitions < 1 || layout.partitions > PartitionMap::kMaxPartitions) {
    problems.push_back(absl::StrCat("cluster.partitions ", layout.partitions, ": 1 to ",
                                    PartitionMap::kMaxPartitions));
  }
  if (layout.partition_hash != PartitionMap::kHashName) {
    problems.push_back(absl::StrCat("cluster partition hash \"", layout.partition_hash,
                                    "\": this version knows only \"",
                                    ToAbsl(PartitionMap::kHashName), "\""));
  }
  if (layout.replicas != 1 && layout.replicas != 3 && layout.replicas != 5) {
    problems.push_back(absl::StrCat("cluster.replicas ", layout.replicas, ": 1, 3 or 5"));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

std::string EncodeLayout(const ClusterLayout& layout) {
  return absl::StrCat("name=", layout.name, "\npartitions=", layout.partitions,
                      "\npartition_hash=", layout.partition_hash, "\nreplicas=", layout.replicas,
                      "\n");
}

absl::StatusOr<ClusterLayout> DecodeLayout(std::string_view text) {
  ClusterLayout layout;
  const std::vector<absl::string_view> lines =
      absl::StrSplit(ToAbsl(text), '\n', absl::SkipEmpty());
  constexpr absl::string_view kKeys[] = {"name", "partitions", "partition_hash", "replicas"};
  if (lines.size() != std::size(kKeys)) {
    return absl::DataLossError(absl::StrCat("stored cluster layout: ", lines.size(),
                                            " lines, expected ", std::size(kKeys)));
  }
  for (size_t k = 0; k < lines.size(); ++k) {
    const std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(lines[k], '=');
    if (kv.first != kKeys[k]) {
      return absl::DataLossError(absl::StrCat("stored cluster layout, line ", k + 1, ": \"",
                                              lines[k], "\", expected ", kKeys[k], "=..."));
    }
    bool ok = true;
    switch (k) {
      case 0:
        layout.name = std::string(kv.second);
        break;
      case 1:
        ok = absl::SimpleAtoi(kv.second, &layout.partitions);
        break;
      case 2:
        layout.partition_hash = std::string(kv.second);
        break;
      default:
        ok = absl::SimpleAtoi(kv.second, &layout.replicas);
        break;
    }
    if (!ok) {
      return absl::DataLossError(absl::StrCat("stored cluster layout, line ", k + 1, ": \"",
                                              lines[k], "\" is not a number"));
    }
  }
  return layout;
}

absl::StatusOr<ClusterLayout> AgreeLayout(KeyValueBucket& config, const ClusterLayout& mine) {
  VIGIL_RETURN_IF_ERROR(CheckLayout(mine));
  absl::StatusOr<uint64_t> created = config.Create(kLayoutKey, EncodeLayout(mine));
  if (created.ok()) return mine;
  if (!absl::IsAlreadyExists(created.status())) return created.status();
  VIGIL_ASSIGN_OR_RETURN(KeyValueEntry stored, config.Get(kLayoutKey));
  VIGIL_ASSIGN_OR_RETURN(ClusterLayout theirs, DecodeLayout(stored.value));
  std::vector<std::string> differences;
  if (theirs.name != mine.name) {
    differences.push_back(absl::StrCat("name \"", theirs.name, "\", not \"", mine.name, "\""));
  }
  if (theirs.partitions != mine.partitions) {
    differences.push_back(absl::StrCat(theirs.partitions, " partitions, not ", mine.partitions,
                                       " (the count cannot change: it would move accounts "
                                       "between partitions)"));
  }
  if (theirs.partition_hash != mine.partition_hash) {
    differences.push_back(
        absl::StrCat("partition hash ", theirs.partition_hash, ", not ", mine.partition_hash));
  }
  if (theirs.replicas != mine.replicas) {
    differences.push_back(absl::StrCat(theirs.replicas, " replicas, not ", mine.replicas));
  }
  if (!differences.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the cluster's stored layout (", config.name(), "/", kLayoutKey,
        ") differs from this node's configuration: it has ", absl::StrJoin(differences, "; ")));
  }
  return theirs;
}

std::string LogStreamName(const ClusterLayout& layout) {
  return absl::StrCat("VIGIL_", layout.name);
}

std::vector<std::string> LogSubjects(const ClusterLayout& layout) {
  return {absl::StrCat("vigil.", layout.name, ".pay.*"),
          absl::StrCat("vigil.", layout.name, ".dec.*")};
}

std::string PaymentSubject(const ClusterLayout& layout, int partition) {
  return absl::StrCat("vigil.", layout.name, ".pay.", partition);
}

std::string DecisionSubject(const ClusterLayout& layout, int partition) {
  return absl::StrCat("vigil.", layout.name, ".dec.", partition);
}

std::string BucketName(const ClusterLayout& layout, std::string_view what) {
  return absl::StrCat("vigil_", layout.name, "_", ToAbsl(what));
}

}  // namespace vigil::cluster
