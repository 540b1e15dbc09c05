// KeyValueBucket: a JetStream key-value bucket with compare-and-set writes, what the cluster's
// leases, node registry and configuration are kept in (docs/cluster.md).
//
// Each write of a key is a message of the bucket's stream, and the key's revision is that
// message's sequence. Create succeeds only when the key holds nothing (never written, deleted,
// or expired past the bucket's TTL); Update and Delete only when the key's revision is still the
// one given. JetStream orders the writes of a bucket through its Raft group, so of two nodes
// racing for one key exactly one wins, and the loser learns it (kAlreadyExists or
// kFailedPrecondition). With a TTL, an entry that is not written again within it is removed by
// the server (a lease that is not renewed expires).
//
// Thread safety: every method may be called from any thread. Made by
// NatsConnection::EnsureBucket; destroy it before its connection.
#ifndef VIGIL_CLUSTER_KEY_VALUE_BUCKET_H_
#define VIGIL_CLUSTER_KEY_VALUE_BUCKET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cluster {

struct KeyValueEntry {
  std::string value;
  uint64_t revision = 0;
  int64_t written_unix_ns = 0;  // when this revision was stored
};

class KeyValueBucket {
 public:
  ~KeyValueBucket();
  KeyValueBucket(const KeyValueBucket&) = delete;
  KeyValueBucket& operator=(const KeyValueBucket&) = delete;

  // Keys are tokens of letters, digits, '-', '_', '=' and '.'-separated (kInvalidArgument
  // otherwise).
  // The key's revision; kAlreadyExists when it holds a value.
  absl::StatusOr<uint64_t> Create(std::string_view key, std::string_view value);
  // The new revision; kFailedPrecondition when the key's revision is not "revision" (another
  // write came first, or the entry expired).
  absl::StatusOr<uint64_t> Update(std::string_view key, std::string_view value, uint64_t revision);
  // Deletes the key if its revision is still "revision" (kFailedPrecondition otherwise).
  absl::Status Delete(std::string_view key, uint64_t revision);
  // kNotFound when the key holds nothing.
  absl::StatusOr<KeyValueEntry> Get(std::string_view key);
  // The keys holding a value, sorted.
  absl::StatusOr<std::vector<std::string>> Keys();

  const std::string& name() const { return name_; }

 private:
  friend class NatsConnection;
  struct Store;  // the C client's bucket (internal/nats_handles.h)
  KeyValueBucket(NatsConnection::Handles* handles, std::unique_ptr<Store> store, std::string name);
  // Publishes one write of "key" (value, or a delete marker) expecting "revision" (0: none).
  absl::StatusOr<uint64_t> Write(std::string_view key, std::string_view value, bool remove,
                                 uint64_t revision);

  NatsConnection::Handles* handles_;
  std::unique_ptr<Store> store_;
  std::string name_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_KEY_VALUE_BUCKET_H_
