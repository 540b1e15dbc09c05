// NatsConnection: one connection to a NATS cluster with JetStream, as the cluster mode uses it
// (docs/cluster.md): streams created or checked, messages published with de-duplication and
// optimistic concurrency, streams read in order from a position, key-value buckets.
//
//   NatsOptions options;
//   options.servers = {"nats://127.0.0.1:4222"};
//   VIGIL_ASSIGN_OR_RETURN(auto nats, NatsConnection::Connect(options));
//   VIGIL_RETURN_IF_ERROR(nats->EnsureStream({.name = "VIGIL_C1", .subjects = {"vigil.c1.>"}}));
//   PublishOptions once;
//   once.msg_id = transaction_id;  // a retry within the stream's duplicate window is dropped
//   VIGIL_ASSIGN_OR_RETURN(PublishAck ack, nats->Publish("vigil.c1.pay.7", bytes, once));
//
// Publishing is synchronous: Publish returns once the stream's leader has stored the message
// on a quorum of its replicas (the acknowledgement), or with the reason it did not. A publish
// that timed out may still have been stored; publishing it again with the same msg_id is then
// safe (the stream answers the first one's sequence, duplicate = true).
//
// Errors (absl::Status, naming the operation and subject): kFailedPrecondition when an
// expected last sequence did not hold (another writer published first: a fenced writer);
// kDeadlineExceeded when no acknowledgement came within request_timeout; kUnavailable when no
// server answers (the client keeps reconnecting meanwhile); kNotFound for a missing stream;
// kInvalidArgument for a bad subject or a message over the server's max_payload.
//
// The NATS C client's types stay out of this header (pimpl). Thread safety: every method may be
// called from any thread; the client serializes its writes on the socket. Destroy readers and
// buckets before their connection.
#ifndef VIGIL_CLUSTER_NATS_CONNECTION_H_
#define VIGIL_CLUSTER_NATS_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil::cluster {

class KeyValueBucket;
class StreamReader;

struct NatsOptions {
  std::vector<std::string> servers;  // "nats://host:port", any members of the cluster
  std::string name;                  // the connection's name in the servers' monitoring
  std::chrono::milliseconds connect_timeout{2000};
  // How long a JetStream request (a publish's acknowledgement, a stream or bucket lookup) waits.
  std::chrono::milliseconds request_timeout{2000};
  // After a lost connection the client tries the servers again, forever, this far apart. A
  // publish waiting for its acknowledgement when the connection drops fails at once
  // (kUnavailable); its bytes may still reach the stream after the reconnect, which a msg_id or
  // an expected sequence makes harmless.
  std::chrono::milliseconds reconnect_wait{100};
};

struct MessageHeader {
  std::string key;
  std::string value;
  bool operator==(const MessageHeader&) const = default;
};

struct PublishOptions {
  // Non-empty: the stream keeps one message per id within its duplicate window.
  std::string msg_id;
  // Set: the stream stores the message only when the last message it holds on this subject has
  // this sequence (0: it holds none); else kFailedPrecondition and nothing is stored.
  std::optional<uint64_t> expected_last_subject_sequence;
  std::vector<MessageHeader> headers;
};

struct PublishAck {
  uint64_t sequence = 0;   // the message's position in the stream (the first's for a duplicate)
  bool duplicate = false;  // the stream already held a message with this msg_id
};

enum class StreamStorage { kFile, kMemory };

struct StreamSpec {
  std::string name;
  std::vector<std::string> subjects;
  int replicas = 1;
  StreamStorage storage = StreamStorage::kFile;
  std::chrono::seconds max_age{0};  // 0: kept until deleted
  std::chrono::milliseconds duplicate_window{std::chrono::minutes(2)};
  int32_t max_message_bytes = -1;  // -1: the server's max_payload
};

// One stored message as a reader sees it.
struct StreamMessage {
  std::string subject;
  std::string data;
  uint64_t sequence = 0;       // position in its stream
  int64_t stored_unix_ns = 0;  // when the stream stored it
  std::vector<MessageHeader> headers;
  // The value of header "key", "" when absent.
  std::string_view Header(std::string_view key) const;
};

// A stream as its leader reports it.
struct StreamStatus {
  uint64_t messages = 0;
  uint64_t first_sequence = 0;
  uint64_t last_sequence = 0;
  std::string leader;  // the server name of its Raft leader ("" on a single server)
};

struct BucketSpec {
  std::string name;
  int replicas = 1;
  StreamStorage storage = StreamStorage::kFile;
  // 0: entries live until deleted; else an entry not written again for this long is removed.
  std::chrono::milliseconds ttl{0};
};

class NatsConnection {
 public:
  // Connects to the first server of options.servers that answers; kUnavailable when none
  // does within connect_timeout, kInvalidArgument without servers.
  static absl::StatusOr<std::unique_ptr<NatsConnection>> Connect(const NatsOptions& options);
  ~NatsConnection();
  NatsConnection(const NatsConnection&) = delete;
  NatsConnection& operator=(const NatsConnection&) = delete;

  // Creates the stream, or checks that the existing one has the spec's subjects, replicas and
  // storage (kFailedPrecondition naming the difference: a stream is never changed silently).
  absl::Status EnsureStream(const StreamSpec& spec);

  absl::StatusOr<PublishAck> Publish(std::string_view subject, std::string_view data,
                                     const PublishOptions& options = {});

  // The stream's messages on subjects matching "filter" (wildcards allowed; "" for all), in
  // stream order from sequence "from" (1: the first).
  absl::StatusOr<std::unique_ptr<StreamReader>> Read(std::string_view stream,
                                                     std::string_view filter, uint64_t from);

  absl::StatusOr<StreamStatus> StatusOf(std::string_view stream);

  // Removes the stream's messages before sequence "before" (all its subjects): what a later
  // reader no longer needs (older shipped checkpoints). Nothing at or after "before" changes.
  absl::Status PurgeBefore(std::string_view stream, uint64_t before);

  // OK while connected to a server; kUnavailable while the client reconnects or after it gave
  // up (naming the state).
  absl::Status Health() const;

  // The sequence of the last message the stream holds on "subject", 0 when it holds none.
  absl::StatusOr<uint64_t> LastSequenceOf(std::string_view stream, std::string_view subject);

  // Binds the bucket, creating it when missing; an existing bucket must have the spec's TTL
  // and replicas (kFailedPrecondition otherwise).
  absl::StatusOr<std::unique_ptr<KeyValueBucket>> EnsureBucket(const BucketSpec& spec);
  // An existing bucket, and its TTL when "ttl" is given; kNotFound when there is none (nothing
  // is created: for readers such as `vigil cluster status`).
  absl::StatusOr<std::unique_ptr<KeyValueBucket>> OpenBucket(
      std::string_view name, std::chrono::milliseconds* ttl = nullptr);

  // OK once the servers answer JetStream requests (a cluster's JetStream has a leader);
  // kUnavailable or kDeadlineExceeded until then.
  absl::Status CheckJetStream();

  // Whether the client holds a connection to a server now (it reconnects by itself).
  bool connected() const;

  struct Handles;  // internal/nats_handles.h

 private:
  explicit NatsConnection(std::unique_ptr<Handles> handles);
  std::unique_ptr<Handles> handles_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_NATS_CONNECTION_H_
