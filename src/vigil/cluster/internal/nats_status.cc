#include "vigil/cluster/internal/nats_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::cluster::internal {
namespace {

absl::StatusCode CodeOf(natsStatus status, jsErrCode js_error) {
  switch (js_error) {
    case JSStreamWrongLastSequenceErr:
    case JSStreamWrongLastMsgIDErr:
      return absl::StatusCode::kFailedPrecondition;
    case JSStreamNotFoundErr:
    case JSConsumerNotFoundErr:
      return absl::StatusCode::kNotFound;
    default:
      break;
  }
  switch (status) {
    case NATS_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case NATS_NO_SERVER:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_STALE_CONNECTION:
    case NATS_NOT_YET_CONNECTED:
    case NATS_NO_RESPONDERS:
    case NATS_IO_ERROR:
    case NATS_DRAINING:
      return absl::StatusCode::kUnavailable;
    case NATS_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
    case NATS_MAX_PAYLOAD:
      return absl::StatusCode::kInvalidArgument;
    case NATS_SLOW_CONSUMER:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status FromNats(natsStatus status, std::string_view what, jsErrCode js_error) {
  if (status == NATS_OK) return absl::OkStatus();
  std::string message = absl::StrCat(ToAbsl(what), ": ", natsStatus_GetText(status));
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' &&
      std::string_view(detail) != natsStatus_GetText(status)) {
    absl::StrAppend(&message, " (", detail, ")");
  }
  if (js_error != 0)
    absl::StrAppend(&message, " [JetStream error ", static_cast<int>(js_error), "]");
  return absl::Status(CodeOf(status, js_error), message);
}

}  // namespace vigil::cluster::internal
