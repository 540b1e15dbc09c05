// The NATS C client's statuses as absl::Status, for this module's .cc files only (nats.h stays
// out of every public header).
#ifndef VIGIL_CLUSTER_INTERNAL_NATS_STATUS_H_
#define VIGIL_CLUSTER_INTERNAL_NATS_STATUS_H_

#include <nats/nats.h>

#include <string_view>

#include "absl/status/status.h"

namespace vigil::cluster::internal {

// "what" names the operation ("publish to vigil.c1.pay.3"); the message adds the client's text
// and its last error detail. JetStream's error code, when given (not 0), decides the code:
// wrong last sequence → kFailedPrecondition (another writer got in first: fenced), stream or
// consumer not found → kNotFound. Otherwise: timeout → kDeadlineExceeded; no server, closed or
// disconnected connection, no responders → kUnavailable; not found → kNotFound; invalid
// argument or subject → kInvalidArgument; anything else kInternal.
absl::Status FromNats(natsStatus status, std::string_view what, jsErrCode js_error = jsErrCode(0));

}  // namespace vigil::cluster::internal

#endif  // VIGIL_CLUSTER_INTERNAL_NATS_STATUS_H_
