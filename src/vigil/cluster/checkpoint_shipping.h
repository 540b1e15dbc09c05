// Shipped checkpoints (docs/cluster.md, "Checkpoints"): a copy of a node's applied state (a
// RocksDB checkpoint of its state store, at a log position) kept by the cluster's NATS
// servers, from which a node with an empty data dir starts instead of applying the whole log.
//
// Where: the files' bytes in chunks of at most kCheckpointChunkBytes on stream
// VIGIL_<cluster>_CKPT (file storage, the log's replicas), subject
// vigil.<cluster>.ckpt.<shipment> with one subject per shipment, so that a reader takes exactly
// its own chunks; the manifest under key "checkpoint" of the bucket vigil_<cluster>_config. A
// manifest is stored only once every chunk of its shipment was acknowledged by the servers'
// quorum, by compare-and-set on the revision read before the shipment began (of two shippers
// one wins; the other's chunks go with the next purge); the chunks of older shipments are
// purged once a newer manifest is stored.
//
// Manifest (text, one field per line, in this order): "format=1", "position=N", "node=ID",
// "created_unix_ms=T", "subject=S", "first_sequence=A", "chunks=K", then one line per file,
// "file=<size> <sha256 hex> <name>", in the order their chunks were published.
#ifndef VIGIL_CLUSTER_CHECKPOINT_SHIPPING_H_
#define VIGIL_CLUSTER_CHECKPOINT_SHIPPING_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cluster/cluster_layout.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/core/fx_rates.h"
#include "vigil/features/feature_config.h"
#include "vigil/features/feature_store.h"

namespace vigil::cluster {

inline constexpr size_t kCheckpointChunkBytes = 256 * 1024;
// The column family of a node's state store that holds its applied state besides the features
// (ClusterNode).
inline constexpr std::string_view kNodeStateFamily = "cluster";

struct ShippedFile {
  std::string name;  // a plain file name, no directory
  uint64_t size = 0;
  std::string sha256_hex;
};

struct CheckpointManifest {
  uint64_t position = 0;  // the log position of the state it holds
  std::string node;       // the node that shipped it
  int64_t created_unix_ms = 0;
  std::string subject;          // its chunks' subject
  uint64_t first_sequence = 0;  // its first chunk's sequence in the checkpoint stream
  uint64_t chunks = 0;
  std::vector<ShippedFile> files;

  uint64_t bytes() const;
};

std::string EncodeManifest(const CheckpointManifest& manifest);
// kDataLoss naming the line that is missing or cannot be read.
absl::StatusOr<CheckpointManifest> DecodeManifest(std::string_view text);

std::string CheckpointStreamName(const ClusterLayout& layout);

// Creates the checkpoint stream, or checks the existing one (NatsConnection::EnsureStream).
absl::Status EnsureCheckpointStream(NatsConnection* nats, const ClusterLayout& layout);

// Ships the store checkpoint in "dir" (KvStore::Checkpoint of a node's state store, holding
// the state at log position "position") as "node". Returns the manifest stored. Errors:
// kAborted when another shipment's manifest was stored meanwhile (nothing of this one is
// kept); the servers' errors (kUnavailable, kDeadlineExceeded) when a chunk or the manifest
// was not acknowledged; kInvalidArgument when "dir" holds a subdirectory.
absl::StatusOr<CheckpointManifest> ShipCheckpoint(NatsConnection* nats, const ClusterLayout& layout,
                                                  const std::string& dir, uint64_t position,
                                                  std::string_view node, int64_t now_unix_ms);

// The manifest of the last checkpoint shipped; nullopt when none was (or the cluster's buckets
// do not exist yet).
absl::StatusOr<std::optional<CheckpointManifest>> LastShippedCheckpoint(
    NatsConnection* nats, const ClusterLayout& layout);

// Writes the shipped checkpoint of "manifest" into "dir", which must not exist (its parent
// must): every file, checked against the manifest's size and SHA-256. The files go to a
// sibling directory first and are renamed to "dir" once all are checked, so on any error
// nothing is left at "dir". "wait": at most this long without a chunk arriving. Errors:
// kDataLoss naming the file when a chunk is missing, out of order, or a file's size or hash
// differs (a purged or damaged shipment); kAlreadyExists when "dir" exists.
absl::Status FetchCheckpoint(NatsConnection* nats, const ClusterLayout& layout,
                             const CheckpointManifest& manifest, const std::string& dir,
                             std::chrono::milliseconds wait);

// A node's state store: the FeatureStore under "dir" (dir/features, with kNodeStateFamily).
// When dir holds no store yet, the last shipped checkpoint (if any) is fetched into it first
// ("fetched" then names it), so that the node applies the log from that checkpoint's position
// instead of from the log's start.
struct NodeState {
  std::unique_ptr<FeatureStore> store;
  std::optional<CheckpointManifest> fetched;
};
absl::StatusOr<NodeState> OpenNodeState(NatsConnection* nats, const ClusterLayout& layout,
                                        const std::string& dir, const FxRates& fx,
                                        const FeatureConfig& config,
                                        std::chrono::milliseconds wait);

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_CHECKPOINT_SHIPPING_H_
