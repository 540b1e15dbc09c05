// StreamReader: a JetStream stream's messages in order from a position, as a node applies the
// cluster log (docs/cluster.md). An ordered consumer underneath: the server delivers in stream
// order without acknowledgements, and the client starts it again from the next sequence when a
// message goes missing or the connection drops, so Next never skips or repeats a message.
//
// Thread safety: one thread at a time. Made by NatsConnection::Read; destroy it before its
// connection.
#ifndef VIGIL_CLUSTER_STREAM_READER_H_
#define VIGIL_CLUSTER_STREAM_READER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "vigil/cluster/nats_connection.h"

namespace vigil::cluster {

class StreamReader {
 public:
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // The next message, or nullopt when none arrived within "wait". Errors: kUnavailable when the
  // connection is closed for good.
  absl::StatusOr<std::optional<StreamMessage>> Next(std::chrono::milliseconds wait);

  // Messages received and not yet returned by Next (0 when Next would wait): a reader that has
  // work to do besides reading looks here instead of waiting.
  size_t buffered() const;

  // The sequence of the last message Next returned (from - 1 before the first).
  uint64_t position() const { return position_; }

  struct Subscription;  // the C client's subscription (internal/nats_handles.h)

 private:
  friend class NatsConnection;
  StreamReader(std::unique_ptr<Subscription> subscription, uint64_t position);
  std::unique_ptr<Subscription> subscription_;
  uint64_t position_;
};

}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_STREAM_READER_H_
