// DeploymentRecord: which models an operator activated (POST /v1/engine/activate), kept in the
// data dir so that the activation outlives the process. `vigil serve` restores it at start; a
// model named on the command line (--model, --model-ref) is only the initial value, used while
// no activation has been stored (docs/serve.md, "Which model decides").
//
// Storage: one small JSON file, `<data-dir>/models/deployment.json`:
//   {"champion":"<sha256>","challenger":"<sha256>","traffic_weight":0.25,"shadow":"<sha256>",
//    "activated_at":"<RFC 3339>"}
// (a slot not held is null). It is written whole under a temporary name, synced, renamed into
// place and the directory synced: after a crash it holds the last activation that was answered
// 200, or the one before it, never a mix.
//
// Thread safety: functions over files; writers are serialized by their caller
// (ModelDeployment's activation lock).
#ifndef VIGIL_DECISION_DEPLOYMENT_RECORD_H_
#define VIGIL_DECISION_DEPLOYMENT_RECORD_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil {

struct DeploymentRecord {
  std::string champion;    // a model's full ref; empty: no champion (rules only)
  std::string challenger;  // empty: none
  double traffic_weight = 0;  // the challenger's share, in (0, 1) with a challenger
  std::string shadow;      // empty: none
  std::string activated_at;  // RFC 3339, UTC; informational
};

// The file name of the record inside the model registry's directory.
inline constexpr char kDeploymentRecordFile[] = "deployment.json";

// The record at "path"; nullopt when there is none. Errors: it cannot be read, or is not a
// record (kDataLoss, naming the path and what is wrong): the start must not guess.
absl::StatusOr<std::optional<DeploymentRecord>> ReadDeploymentRecord(const std::string& path);

// Replaces the record at "path" durably (see above). Errors (kUnavailable) name the path and
// the system's reason; the file then holds the old record or, when only the last directory sync
// failed, the new one: the caller does not apply an activation it could not store.
absl::Status WriteDeploymentRecord(const std::string& path, const DeploymentRecord& record);

}  // namespace vigil

#endif  // VIGIL_DECISION_DEPLOYMENT_RECORD_H_
