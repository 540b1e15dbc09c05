#include "vigil/ingest/record_error.h"

#include "absl/strings/str_cat.h"

namespace vigil {

std::string RecordError::ToString() const {
  std::string out = source;
  if (line > 0) absl::StrAppend(&out, ":", line);
  if (!field.empty()) absl::StrAppend(&out, ": ", field);
  absl::StrAppend(&out, ": ", message);
  return out;
}

absl::Status RecordError::ToStatus() const {
  return absl::InvalidArgumentError(absl::StrCat(ToString(), " [", reason, "]"));
}

void RecordError::Clear() {
  source.clear();
  line = 0;
  field.clear();
  reason.clear();
  message.clear();
  byte_offset = -1;
}

}  // namespace vigil
