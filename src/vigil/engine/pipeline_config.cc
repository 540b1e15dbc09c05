#include "vigil/engine/pipeline_config.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "vigil/audit/log_hash.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"

namespace vigil {
namespace {

// "file" in the directory of "path" when it exists, else "".
std::string Beside(const std::string& path, const char* file) {
  const std::filesystem::path beside = std::filesystem::path(path).parent_path() / file;
  std::error_code ec;
  return std::filesystem::is_regular_file(beside, ec) ? beside.string() : "";
}

absl::Status ValidateGpu(const GpuSection& g) {
  if (g.device < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gpu.device must be a CUDA device ordinal (0 or more), not ", g.device));
  }
  for (size_t c = 0; c < g.min_rows.size(); ++c) {
    if (g.min_rows[c] == 0) {
      return absl::InvalidArgumentError(absl::StrCat("gpu.min_rows.",
                                                     PriorityName(static_cast<Priority>(c)),
                                                     " must be a positive integer or never"));
    }
  }
  if (g.timeout <= std::chrono::microseconds::zero()) {
    return absl::InvalidArgumentError("gpu.timeout_ms must be positive");
  }
  return absl::OkStatus();
}

absl::Status ValidateScreening(const ScreeningSection& s) {
  for (const std::string& list : s.lists) {
    if (list.empty()) return absl::InvalidArgumentError("screening.lists: an empty path");
  }
  if (s.reload_interval < std::chrono::seconds(0)) {
    return absl::InvalidArgumentError("screening.reload_seconds: must be >= 0");
  }
  if (!(s.min_score >= 0 && s.min_score <= 1)) {
    return absl::InvalidArgumentError("screening.min_score: must be from 0 to 1");
  }
  return absl::OkStatus();
}

absl::Status ValidateDrift(const DriftSection& drift) {
  if (drift.queue_rows < 1) return absl::InvalidArgumentError("drift.queue must be at least 1");
  for (const drift::DriftWindowSpec& w : drift.monitor.windows) {
    const std::string key = absl::StrCat("drift.", w.name, "_window");
    // The same check as the option's, on the value as set (tests set members directly).
    drift::DriftWindowSpec copy = w;
    const std::string text = absl::StrCat(w.size.count(), "/", w.slide.count());
    VIGIL_RETURN_IF_ERROR(drift::ParseDriftWindow(text, key, &copy));
  }
  if (drift.monitor.min_rows < 1) {
    return absl::InvalidArgumentError("drift.min_rows must be at least 1");
  }
  if (drift.monitor.false_alarm_period < std::chrono::hours(24)) {
    return absl::InvalidArgumentError("drift.false_alarm_days must be at least 1");
  }
  return drift.monitor.Validate();
}

absl::Status ValidateAudit(const AuditSection& audit) {
  if (!audit::ParseHashAlgorithm(audit.hash).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("audit.hash must be sha256 or sm3, not \"", audit.hash, "\""));
  }
  if (audit.tree_head_every < 1) {
    return absl::InvalidArgumentError("audit.tree_head_every must be at least 1");
  }
  if (audit.tree_head_interval < std::chrono::milliseconds(1)) {
    return absl::InvalidArgumentError("audit.tree_head_interval_ms must be at least 1");
  }
  if (audit.group_max_records < 1) {
    return absl::InvalidArgumentError("audit.group_max_records must be at least 1");
  }
  if (audit.group_max_delay < std::chrono::microseconds(0)) {
    return absl::InvalidArgumentError("audit.group_max_delay_us must not be negative");
  }
  if (audit.queue < 1) return absl::InvalidArgumentError("audit.queue must be at least 1");
  if (audit.record_cipher != "aes-256-gcm" && audit.record_cipher != "sm4-ctr-hmac-sm3") {
    return absl::InvalidArgumentError(absl::StrCat(
        "audit.record_cipher must be aes-256-gcm or sm4-ctr-hmac-sm3, not \"", audit.record_cipher,
        "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BatchPolicyConfig> BatcherPreset(std::string_view name) {
  if (name == "fast") return BatchPolicyConfig::Fast();
  if (name == "immediate") return BatchPolicyConfig::Immediate();
  if (name == "compliance") return BatchPolicyConfig::ComplianceGrade();
  return absl::InvalidArgumentError(absl::StrCat("unknown batcher preset '", ToAbsl(name),
                                                 "' (fast, immediate or compliance)"));
}

absl::Status PipelineConfig::Validate(bool needs_data_dir) const {
  if (needs_data_dir && data_dir.empty()) {
    return absl::InvalidArgumentError("data_dir is required (policy versions, models, state)");
  }
  if (!model.empty() && !model_ref.empty()) {
    return absl::InvalidArgumentError("give model or model_ref, not both");
  }
  VIGIL_RETURN_IF_ERROR(ValidateDrift(drift));
  VIGIL_RETURN_IF_ERROR(ValidateAudit(audit));
  VIGIL_RETURN_IF_ERROR(ValidateScreening(screening));
  VIGIL_RETURN_IF_ERROR(ValidateGpu(gpu));
  if (state.pseudonym_hash != "hmac-sha256" && state.pseudonym_hash != "hmac-sm3") {
    return absl::InvalidArgumentError(absl::StrCat(
        "state.pseudonym_hash must be hmac-sha256 or hmac-sm3, not \"", state.pseudonym_hash,
        "\""));
  }
  return batcher.Validate();
}

std::string PipelineConfig::DriftProfilePath() const {
  if (!drift.enabled) return "";
  if (!drift.profile.empty()) return drift.profile;
  return model.empty() ? "" : Beside(model, kProfileBesideModel);
}

std::string PipelineConfig::DriftNullPath(const std::string& profile) const {
  if (!drift.measured_null.empty()) return drift.measured_null;
  return profile.empty() ? "" : Beside(profile, kNullBesideProfile);
}

}  // namespace vigil
