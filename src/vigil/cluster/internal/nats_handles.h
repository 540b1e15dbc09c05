// The C client's handles behind NatsConnection, StreamReader and KeyValueBucket (this module's
// .cc files only).
#ifndef VIGIL_CLUSTER_INTERNAL_NATS_HANDLES_H_
#define VIGIL_CLUSTER_INTERNAL_NATS_HANDLES_H_

#include <nats/nats.h>

#include <chrono>

#include "vigil/cluster/key_value_bucket.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/stream_reader.h"

namespace vigil::cluster {

struct NatsConnection::Handles {
  natsConnection* connection = nullptr;
  jsCtx* jetstream = nullptr;
  std::chrono::milliseconds request_timeout{2000};

  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    if (jetstream != nullptr) jsCtx_Destroy(jetstream);
    if (connection != nullptr) {
      natsConnection_Close(connection);
      natsConnection_Destroy(connection);
    }
  }
};

struct StreamReader::Subscription {
  natsSubscription* subscription = nullptr;

  Subscription() = default;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() {
    if (subscription != nullptr) {
      natsSubscription_Unsubscribe(subscription);
      natsSubscription_Destroy(subscription);
    }
  }
};

struct KeyValueBucket::Store {
  kvStore* store = nullptr;

  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store() {
    if (store != nullptr) kvStore_Destroy(store);
  }
};

namespace internal {

// A natsMsg as a StreamMessage (subject, data, headers, stream sequence and time).
StreamMessage CopyMessage(natsMsg* msg);

}  // namespace internal
}  // namespace vigil::cluster

#endif  // VIGIL_CLUSTER_INTERNAL_NATS_HANDLES_H_
