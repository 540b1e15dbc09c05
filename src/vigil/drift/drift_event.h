// DriftEvent: one thing the drift monitor decided, as it is stored and served: a level change
// of a subject, a retrain request, an escalation, a freeze of the model and its review ticket,
// and the release of a freeze.
//
// JSON form (one object; "window" and "detail" omitted when empty):
//   {"id":17,"time":"2026-11-30T05:00:10.000000Z","recorded_at":"2026-11-30T05:00:10.123456Z",
//    "kind":"level_change","subject":"amount_reporting","window":"short","from":"L1","to":"L2",
//    "severity":0.73125,"score":0.0412,"detail":"..."}
#ifndef VIGIL_DRIFT_DRIFT_EVENT_H_
#define VIGIL_DRIFT_DRIFT_EVENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/common/clock.h"
#include "vigil/drift/drift_level.h"

namespace vigil::drift {

// Kinds of events.
// Subjects other than features: the model's score, and the monitor as a whole.
inline constexpr std::string_view kScoreSubject = "model_score";
inline constexpr std::string_view kMonitorSubject = "monitor";

inline constexpr std::string_view kLevelChange = "level_change";          // one subject's level
inline constexpr std::string_view kRetrainRequested = "retrain_requested";  // monitor reached L2
inline constexpr std::string_view kCritical = "critical";                  // escalation pattern
inline constexpr std::string_view kFreeze = "freeze";                      // monitor reached L3
inline constexpr std::string_view kTicketOpened = "ticket_opened";         // review of a freeze
inline constexpr std::string_view kFreezeReleased = "freeze_released";     // left L3

struct DriftEvent {
  uint64_t id = 0;          // assigned by DriftEventLog::Append: 1, 2, ... in append order
  UtcTime time{};           // event time of the evaluation that raised it
  UtcTime recorded_at{};    // wall clock when appended (set by Append)
  std::string kind;         // one of the kinds above
  std::string subject;      // a feature name, "model_score", or "monitor" for the whole model
  std::string window;       // "short" or "long"; empty for monitor-wide events
  DriftLevel from = DriftLevel::kNone, to = DriftLevel::kNone;
  double severity = 0;      // calibrated, [0, 1]
  double score = 0;         // the raw weighted drift score
  std::string detail;       // free text for people (e.g. the features that drove a freeze)

  bool operator==(const DriftEvent&) const = default;
};

std::string DriftEventToJson(const DriftEvent& event);
// Errors name the member that is missing or malformed.
absl::StatusOr<DriftEvent> DriftEventFromJson(std::string_view json);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_EVENT_H_
