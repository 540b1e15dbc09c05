#include "vigil/drift/drift_event.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "vigil/common/status_macros.h"
#include "vigil/core/transaction.h"

namespace vigil::drift {
namespace {

using Json = nlohmann::json;

absl::Status MemberError(const char* member, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("drift event: member '", member, "': ", what));
}

// A non-finite value has no JSON number: it is written as null (and read back as NaN).
nlohmann::ordered_json Number(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

// The member "name" of "object", or nullptr when it is absent.
const Json* Find(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<const Json*> Required(const Json& object, const char* name) {
  const Json* member = Find(object, name);
  if (member == nullptr) return MemberError(name, "missing");
  return member;
}

absl::StatusOr<uint64_t> ReadId(const Json& object, const char* name) {
  VIGIL_ASSIGN_OR_RETURN(const Json* member, Required(object, name));
  // A parsed non-negative integer is number_unsigned; -1, 1.5 and "1" are not.
  if (!member->is_number_unsigned()) return MemberError(name, "not a non-negative integer");
  return member->get<uint64_t>();
}

absl::Status ReadString(const Json& object, const char* name, bool required, std::string* out) {
  const Json* member = Find(object, name);
  if (member == nullptr) {
    if (required) return MemberError(name, "missing");
    out->clear();
    return absl::OkStatus();
  }
  if (!member->is_string()) return MemberError(name, "not a string");
  *out = member->get<std::string>();
  return absl::OkStatus();
}

absl::StatusOr<UtcTime> ReadTime(const Json& object, const char* name) {
  VIGIL_ASSIGN_OR_RETURN(const Json* member, Required(object, name));
  if (!member->is_string()) return MemberError(name, "not an RFC 3339 time (not a string)");
  absl::StatusOr<UtcTime> t = ParseRfc3339(member->get_ref<const std::string&>());
  if (!t.ok()) {
    return MemberError(name, absl::StrCat("not an RFC 3339 time (", t.status().message(), ")"));
  }
  return *t;
}

// The inverse of DriftLevelName.
absl::StatusOr<DriftLevel> ReadLevel(const Json& object, const char* name) {
  VIGIL_ASSIGN_OR_RETURN(const Json* member, Required(object, name));
  constexpr absl::string_view kExpected = "not \"none\", \"L1\", \"L2\" or \"L3\"";
  if (!member->is_string()) return MemberError(name, kExpected);
  const std::string& text = member->get_ref<const std::string&>();
  for (DriftLevel level : {DriftLevel::kNone, DriftLevel::kL1, DriftLevel::kL2, DriftLevel::kL3}) {
    if (text == DriftLevelName(level)) return level;
  }
  // The value is quoted only in part: the message must stay short whatever the input.
  return MemberError(name, absl::StrCat(kExpected, ": '", absl::string_view(text).substr(0, 16),
                                        text.size() > 16 ? "...'" : "'"));
}

// null reads as NaN: it is how a non-finite value was written.
absl::StatusOr<double> ReadNumber(const Json& object, const char* name) {
  VIGIL_ASSIGN_OR_RETURN(const Json* member, Required(object, name));
  if (member->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!member->is_number()) return MemberError(name, "not a number or null");
  return member->get<double>();
}

}  // namespace

std::string DriftEventToJson(const DriftEvent& event) {
  // ordered_json keeps the members in the documented order (nlohmann::json would sort them).
  nlohmann::ordered_json j;
  j["id"] = event.id;
  j["time"] = FormatUtc(event.time);
  j["recorded_at"] = FormatUtc(event.recorded_at);
  j["kind"] = event.kind;
  j["subject"] = event.subject;
  if (!event.window.empty()) j["window"] = event.window;
  j["from"] = std::string(DriftLevelName(event.from));
  j["to"] = std::string(DriftLevelName(event.to));
  j["severity"] = Number(event.severity);
  j["score"] = Number(event.score);
  if (!event.detail.empty()) j["detail"] = event.detail;
  // Bytes that are not valid UTF-8 (free text in "detail") become U+FFFD rather than throwing:
  // the output is always valid JSON.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

absl::StatusOr<DriftEvent> DriftEventFromJson(std::string_view json) {
  Json j;
  try {
    j = Json::parse(json);
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("drift event: not valid JSON (error at byte ", e.byte, ")"));
  }
  if (!j.is_object()) return absl::InvalidArgumentError("drift event: not a JSON object");
  // Members not listed here are ignored, so that a newer writer's additions stay readable.
  DriftEvent event;
  VIGIL_ASSIGN_OR_RETURN(event.id, ReadId(j, "id"));
  VIGIL_ASSIGN_OR_RETURN(event.time, ReadTime(j, "time"));
  VIGIL_ASSIGN_OR_RETURN(event.recorded_at, ReadTime(j, "recorded_at"));
  VIGIL_RETURN_IF_ERROR(ReadString(j, "kind", /*required=*/true, &event.kind));
  VIGIL_RETURN_IF_ERROR(ReadString(j, "subject", /*required=*/true, &event.subject));
  VIGIL_RETURN_IF_ERROR(ReadString(j, "window", /*required=*/false, &event.window));
  VIGIL_ASSIGN_OR_RETURN(event.from, ReadLevel(j, "from"));
  VIGIL_ASSIGN_OR_RETURN(event.to, ReadLevel(j, "to"));
  VIGIL_ASSIGN_OR_RETURN(event.severity, ReadNumber(j, "severity"));
  VIGIL_ASSIGN_OR_RETURN(event.score, ReadNumber(j, "score"));
  VIGIL_RETURN_IF_ERROR(ReadString(j, "detail", /*required=*/false, &event.detail));
  return event;
}

}  // namespace vigil::drift
