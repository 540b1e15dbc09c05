// PipelineConfig: everything the decision pipeline is told — where its state lives, the policy
// and model it decides with, the batcher, breaker and GPU in front of the model, screening,
// drift, the audit log and how accounts are pseudonymised — the same for `vigil serve`,
// `vigil replay` and `vigil bench`. Its options (keys, flags, ranges, help) are declared once,
// in pipeline_options.h; docs/configuration.md is generated from them.
//
// Thread safety: value type.
#ifndef VIGIL_ENGINE_PIPELINE_CONFIG_H_
#define VIGIL_ENGINE_PIPELINE_CONFIG_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/drift/drift_config.h"

namespace vigil {

// `drift:`: what the drift monitor of the pipeline watches with, and when it alarms.
struct DriftSection {
  // drift.enabled: false turns monitoring off even with a profile beside the model.
  bool enabled = true;
  // A reference_profile.json from tools/train.py. Empty: reference_profile.json beside the
  // model file (`model`) when that file exists. No profile: drift monitoring is off.
  std::string profile;
  // drift.measured_null: the training stream's window scores (`vigil replay --drift-null-out`),
  // which the null calibration then also asks (docs/drift.md). Empty: drift_null.json beside
  // the profile when that file exists, else none. It must have been measured with the same
  // windows: the start fails otherwise.
  std::string measured_null;
  // drift.calibration, drift.freeze (freeze_on_l3), drift.false_alarm_days
  // (false_alarm_period), drift.short_window and drift.long_window (windows "short" and
  // "long"), drift.min_rows, drift.exclude (features left out; default hour_of_day and
  // day_of_week, seasonal); every other member keeps drift::DriftConfig's default.
  drift::DriftConfig monitor;
  // drift.queue: decided rows that may wait for the monitor's thread. Beyond it rows are
  // dropped (and counted), never waited for. About 420 bytes a row (50 features of v1).
  size_t queue_rows = 65536;
};

// `audit:`: how decisions are recorded (docs/audit.md).
struct AuditSection {
  bool durable_ack = true;
  std::string signing_key;  // empty: DefaultSigningKeyPath(data_dir), created when missing
  std::string hash = "sha256";
  uint64_t tree_head_every = 10'000;
  std::chrono::milliseconds tree_head_interval{1'000};
  size_t group_max_records = 16'384;
  std::chrono::microseconds group_max_delay{0};
  size_t queue = 262'144;
  // audit.max_waiting: decisions that may wait at once for their records to become durable
  // (DecisionRecorderOptions::max_waiting); beyond it a decision is answered 503 overloaded, its
  // row kept for the retry. 0: unbounded.
  size_t max_waiting = 16'384;
  // audit.max_wait_ms: while the oldest decision waiting for its durable record has waited
  // longer than this, new scoring requests are refused 503 overloaded on arrival
  // (DecisionRecorderOptions::max_wait), so a slow disk or a starved log sheds the excess instead
  // of queueing it. 0: never by time.
  std::chrono::milliseconds max_wait{50};
  bool compress_records = true;  // LZ4 record chunks (docs/audit.md "Record chunks")
  // audit.record_kek: the public key that wraps the data keys sealing the records' personal
  // fields; empty: records are not encrypted. audit.record_cipher: "aes-256-gcm" or
  // "sm4-ctr-hmac-sm3". audit.records_per_data_key: a new data key (segment) after this many
  // records, and at every start.
  std::string record_kek;
  std::string record_cipher = "aes-256-gcm";
  uint64_t records_per_data_key = 1'000'000;
};

// `state:`: how the accounts' feature state is stored.
struct StateSection {
  // The HMAC key that turns account ids into the pseudonyms the state stores; empty:
  // <data_dir>/state_pseudonym.key, created (32 random bytes, mode 0600) when missing.
  std::string pseudonym_key;
  std::string pseudonym_hash = "hmac-sha256";  // or "hmac-sm3"
};

// `screening:`: the watchlists every decision is screened against (docs/screening.md). No
// lists: no screening (decisions then carry no `screening` object).
struct ScreeningSection {
  // screening.lists: files in vigil's list format, or folders holding OFAC's sdn.csv (and
  // alt.csv, add.csv, sdn_comments.csv). A list that cannot be read fails the start.
  std::vector<std::string> lists;
  // screening.reload_seconds: how often the lists' files are checked (size, modification
  // time) and, when changed, read again and swapped in; a list that no longer reads is logged
  // and the lists in force stay. 0: the lists load once, at start.
  std::chrono::seconds reload_interval{30};
  // screening.min_score: when above 0 and below the policy's screening review threshold, hits
  // down to this score are also found and offered to rules (screening.hit_count,
  // screening.max_score); 0: down to the review threshold only. The policy's screening
  // thresholds decide what a hit does. Lower finds more near misses at the cost of more
  // candidates to score per payment (at 0.80 about 3x the search time of 0.88 on OFAC SDN:
  // docs/benchmarks.md).
  double min_score = 0;
};

// `gpu:`: the CUDA backend behind the batcher. Off by default (CPU only, no CUDA call at all).
// On: every model loaded (the champion at start, and each model activated later) gets its own
// CudaScorer on `device` beside its CpuScorer, and a BackendRouter between them sends each
// batch to one or the other; a model the GPU cannot take fails to load, and at start the server
// refuses to run without a usable device (never a silent CPU-only start).
struct GpuSection {
  bool enabled = false;
  int device = 0;  // gpu.device: the CUDA device ordinal
  // gpu.min_rows.P0, .P1, .P2: batches of that class with at least this many rows go to the
  // GPU; BackendRouterConfig::kNever ("never" in the file) keeps the class on the CPU.
  std::array<size_t, 3> min_rows = BackendRouterConfig{}.gpu_min_rows;
  // gpu.timeout_ms: the longest a batch spends on the GPU (less when its deadline comes
  // sooner) before the CPU scores it instead.
  std::chrono::microseconds timeout = BackendRouterConfig{}.gpu_timeout;
};

struct PipelineConfig {
  std::string data_dir;
  std::string policy;     // empty: the data dir's active version
  std::string lists;      // named lists; empty: lists/ beside the policy
  std::string model;      // a model file; or
  std::string model_ref;  // a model in the data dir's registry
  // model.required: without an active champion the pipeline is not ready (503 model_required)
  // and decides nothing, instead of deciding on the rules alone. Default false.
  bool model_required = false;
  std::string fx_rates;  // empty: data/fx_rates.csv here, else beside the binary
  std::chrono::milliseconds score_budget{200};
  size_t idempotency_capacity = 100'000;
  // max_future_skew_seconds: a transaction dated further ahead of the clock is refused, 422
  // event_in_future (DecisionServiceOptions::max_future_skew; docs/serve.md).
  std::chrono::seconds max_future_skew{300};
  std::string batcher_preset = "fast";
  BatchPolicyConfig batcher = BatchPolicyConfig::Fast();
  CircuitBreakerConfig breaker;
  GpuSection gpu;
  DriftSection drift;
  AuditSection audit;
  ScreeningSection screening;
  StateSection state;

  // Checks the combination once every source is read: not both model and model_ref, and the
  // drift, audit, screening, gpu and state settings (errors name the key). `needs_data_dir`:
  // a data dir is required (serve). Whether a GPU is there is for the start to find out.
  absl::Status Validate(bool needs_data_dir = true) const;

  // The reference profile drift is watched with: drift.profile, else reference_profile.json
  // beside the model file when it exists (`vigil model train` writes it there); "" when there
  // is none or drift.enabled is false.
  std::string DriftProfilePath() const;
  // The measured null of `profile`: drift.measured_null, else drift_null.json beside the
  // profile when it exists; "" otherwise.
  std::string DriftNullPath(const std::string& profile) const;
};

// The files a trained model keeps beside it.
inline constexpr char kProfileBesideModel[] = "reference_profile.json";
inline constexpr char kNullBesideProfile[] = "drift_null.json";

// The batcher presets by name: "fast", "immediate", "compliance".
absl::StatusOr<BatchPolicyConfig> BatcherPreset(std::string_view name);

}  // namespace vigil

#endif  // VIGIL_ENGINE_PIPELINE_CONFIG_H_
