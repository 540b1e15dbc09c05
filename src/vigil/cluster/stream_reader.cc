#include "vigil/cluster/stream_reader.h"

#include <nats/nats.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/cluster/internal/nats_handles.h"
#include "vigil/cluster/internal/nats_status.h"

namespace vigil::cluster {

StreamReader::StreamReader(std::unique_ptr<Subscription> subscription, uint64_t position)
    : subscription_(std::move(subscription)), position_(position) {}
StreamReader::~StreamReader() = default;

absl::StatusOr<std::optional<StreamMessage>> StreamReader::Next(std::chrono::milliseconds wait) {
  natsMsg* msg = nullptr;
  const natsStatus s = natsSubscription_NextMsg(&msg, subscription_->subscription, wait.count());
  if (s == NATS_TIMEOUT) return std::nullopt;
  if (s != NATS_OK) {
    return internal::FromNats(s, absl::StrCat("read the stream after sequence ", position_));
  }
  StreamMessage out = internal::CopyMessage(msg);
  natsMsg_Destroy(msg);
  position_ = out.sequence;
  return out;
}

size_t StreamReader::buffered() const {
  int messages = 0;
  int bytes = 0;
  if (natsSubscription_GetPending(subscription_->subscription, &messages, &bytes) != NATS_OK) {
    return 0;
  }
  return messages > 0 ? static_cast<size_t>(messages) : 0;
}

}  // namespace vigil::cluster
