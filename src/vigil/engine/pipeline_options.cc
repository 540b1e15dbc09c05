#include "vigil/engine/pipeline_options.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"

namespace vigil {
namespace {

using config::kBench;
using config::kEveryCommand;
using config::kReplay;
using config::kServe;
using config::OptionSet;
using Days = std::chrono::duration<int64_t, std::ratio<86400>>;

drift::DriftWindowSpec* FindWindow(drift::DriftConfig& config, std::string_view name) {
  for (drift::DriftWindowSpec& w : config.windows) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

void DeclareModel(PipelineConfig* c, OptionSet* set) {
  set->Text({.key = "data_dir",
             .help = "Data directory: policy versions, model registry, feature state, audit log",
             .value_name = "DIR",
             .uses = kServe | kReplay},
            &c->data_dir);
  set->Text({.key = "policy",
             .help = "Policy file. vigil serve stores it and activates it unless a version was "
                     "activated since (a stored activation wins at later starts); default: the "
                     "data dir's active version",
             .value_name = "PATH"},
            &c->policy);
  set->Text({.key = "lists",
             .help = "Named lists the policy refers to (default: lists/ beside the policy)",
             .value_name = "DIR"},
            &c->lists);
  set->Text({.key = "model.file",
             .help = "Model file (XGBoost JSON, LightGBM text). vigil serve adds it to the "
                     "registry as the champion until a model is activated through POST "
                     "/v1/engine/activate. `model: FILE` is short for `model: {file: FILE}`",
             .flag = "model",
             .value_name = "PATH",
             .section_shorthand = true},
            &c->model);
  set->Text({.key = "model.ref",
             .help = "Champion from the data dir's registry (SHA-256 or a unique prefix of 8 "
                     "or more digits)",
             .flag = "model-ref",
             .value_name = "REF",
             .uses = kServe},
            &c->model_ref);
  set->Bool({.key = "model.required",
             .help = "Without an active model the server is not ready (503 model_required) and "
                     "decides nothing, instead of deciding on the rules alone",
             .flag = "model-required",
             .uses = kServe},
            &c->model_required);
  set->Renamed("model_ref", "model.ref");
  set->Text({.key = "fx_rates",
             .help = "FX rates table (default: data/fx_rates.csv here, else beside the binary)",
             .value_name = "PATH"},
            &c->fx_rates);
  set->Duration<std::chrono::milliseconds>(
      {.key = "score_budget_ms",
       .help = "SLA budget of the model path; past it a decision is made on the rules alone",
       .uses = kServe | kBench},
      &c->score_budget, 1, 60'000);
  set->Integer({.key = "idempotency_capacity",
                .help = "Transaction ids remembered for idempotent retries (0: none)",
                .uses = kServe | kBench},
               &c->idempotency_capacity, 0, 100'000'000);
  // At most a day: a larger bound would let one payment hold the watermark that far ahead.
  set->Duration<std::chrono::seconds>(
      {.key = "max_future_skew_seconds",
       .help = "Refuse payments dated further ahead of the clock (422 event_in_future)",
       .uses = kServe},
      &c->max_future_skew, 0, 86'400);
}

void DeclareScoring(PipelineConfig* c, OptionSet* set) {
  set->Custom(
      {.key = "batcher.preset",
       .help = "Dynamic batcher preset in front of the model (docs/batching.md)",
       .flag = "batcher",
       .uses = kServe},
      "fast | immediate | compliance",
      [c](std::string_view text) {
        absl::StatusOr<BatchPolicyConfig> preset = BatcherPreset(text);
        if (!preset.ok()) return preset.status();
        c->batcher = *preset;
        c->batcher_preset = std::string(text);
        return absl::OkStatus();
      },
      [c] { return c->batcher_preset; });
  set->Integer({.key = "breaker.failure_threshold",
                .help = "Consecutive model failures or late answers that open the breaker "
                        "(rules-only until it probes again)",
                .uses = kServe},
               &c->breaker.failure_threshold, 1, 1'000'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "breaker.budget_ms", .help = "A model call slower than this counts as a failure",
       .uses = kServe},
      &c->breaker.budget, 1, 60'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "breaker.open_ms", .help = "How long the breaker stays open before it probes",
       .uses = kServe},
      &c->breaker.open_for, 1, 3'600'000);
  set->Bool({.key = "gpu.enabled",
             .help = "Score large batches on the CUDA backend beside the CPU (docs/gpu.md); the "
                     "start fails without the CUDA backend or a usable GPU",
             .flag = "gpu",
             .uses = kServe | kReplay},
            &c->gpu.enabled);
  set->Integer({.key = "gpu.device", .help = "The CUDA device ordinal", .uses = kServe | kReplay},
               &c->gpu.device, 0, 1023);
  for (size_t p = 0; p < c->gpu.min_rows.size(); ++p) {
    const std::string name(PriorityName(static_cast<Priority>(p)));
    size_t* rows = &c->gpu.min_rows[p];
    set->Custom(
        {.key = absl::StrCat("gpu.min_rows.", name),
         .help = absl::StrCat("Batches of class ", name,
                              " with at least this many rows go to the GPU; never: the CPU only"),
         .uses = kServe},
        "1 to 1000000000 | never",
        [rows](std::string_view text) {
          if (text == "never") {
            *rows = BackendRouterConfig::kNever;
            return absl::OkStatus();
          }
          uint64_t v = 0;
          if (!absl::SimpleAtoi(ToAbsl(text), &v) || v < 1 || v > 1'000'000'000) {
            return absl::InvalidArgumentError(
                "must be a positive integer or never (rows, up to 1000000000)");
          }
          *rows = static_cast<size_t>(v);
          return absl::OkStatus();
        },
        [rows] {
          return *rows == BackendRouterConfig::kNever ? std::string("never") : absl::StrCat(*rows);
        });
  }
  set->Custom(
      {.key = "gpu.timeout_ms",
       .help = "The longest a batch spends on the GPU (fractions allowed: 0.5) before the CPU "
               "scores it instead",
       .uses = kServe},
      "0.001 to 60000",
      [c](std::string_view text) {
        double ms = -1;
        if (!absl::SimpleAtod(ToAbsl(text), &ms) || !(ms >= 0.001 && ms <= 60'000)) {
          return absl::InvalidArgumentError("must be a number of milliseconds from 0.001 to 60000");
        }
        c->gpu.timeout = std::chrono::microseconds(std::llround(ms * 1000));
        return absl::OkStatus();
      },
      [c] { return absl::StrCat(static_cast<double>(c->gpu.timeout.count()) / 1000); });
}

void DeclareDrift(PipelineConfig* c, OptionSet* set) {
  DriftSection& d = c->drift;
  drift::DriftConfig& m = d.monitor;
  set->Bool({.key = "drift.enabled",
             .help = "false: no drift monitoring, even with a reference profile beside the model",
             .flag = "drift",
             .uses = kServe | kBench},
            &d.enabled);
  set->Text({.key = "drift.profile",
             .help = "Reference profile (vigil model train's reference_profile.json); default: "
                     "reference_profile.json beside the model file when it exists; none: drift "
                     "off (vigil replay: drift only when given, or with --drift-report)",
             .value_name = "PATH"},
            &d.profile);
  set->Text({.key = "drift.measured_null",
             .help = "The training stream's measured no-drift scores (vigil replay "
                     "--drift-null-out); default: drift_null.json beside the profile, when "
                     "present. It must have been measured with the same windows",
             .value_name = "PATH"},
            &d.measured_null);
  set->Custom(
      {.key = "drift.calibration", .help = "How window scores become severity levels (docs/drift.md)"},
      "null | raw-preset",
      [&m](std::string_view text) {
        // YAML reads a bare `null` as the null value: that is the null calibration too.
        absl::StatusOr<drift::DriftCalibration> cal =
            drift::ParseDriftCalibration(text.empty() ? std::string_view("null") : text);
        if (!cal.ok()) return absl::InvalidArgumentError("must be null or raw-preset");
        m.calibration = *cal;
        return absl::OkStatus();
      },
      [&m] {
        return std::string(m.calibration == drift::DriftCalibration::kRawPreset ? "raw-preset"
                                                                                : "null");
      });
  set->Bool({.key = "drift.freeze",
             .help = "An L3 alarm freezes the model: rules-only, degraded decisions (vigil "
                     "replay reports when a live deployment would have frozen)",
             .uses = kServe | kBench},
            &m.freeze_on_l3);
  set->Duration<Days>({.key = "drift.false_alarm_days",
                       .help = "Expected days between false L2 alarms of one subject"},
                      &m.false_alarm_period, 1, 3650);
  for (const char* name : {"short", "long"}) {
    drift::DriftWindowSpec* w = FindWindow(m, name);
    const std::string key = absl::StrCat("drift.", name, "_window");
    set->Custom(
        {.key = key,
         .help = absl::StrCat("The ", name,
                              " window: SIZE/SLIDE in seconds of event time, SIZE a multiple "
                              "of SLIDE, at most 7 days and 10000 slides"),
         .value_name = "SIZE/SLIDE"},
        "SIZE/SLIDE",
        [w](std::string_view text) {
          absl::Status s = drift::ParseDriftWindow(text, "", w);
          if (s.ok()) return s;
          // ParseDriftWindow names the key first (": '6/4': ..."); the caller names it here.
          absl::string_view message = s.message();
          if (absl::StartsWith(message, ": ")) message.remove_prefix(2);
          return absl::InvalidArgumentError(message);
        },
        [w] { return absl::StrCat(w->size.count(), "/", w->slide.count()); });
  }
  drift::DriftWindowSpec* long_window = FindWindow(m, "long");
  set->Duration<std::chrono::seconds>(
      {.key = "drift.half_life_seconds",
       .help = "Exponential time decay of the long window, its half-life (0: none)"},
      &long_window->decay_half_life, 0, 365 * 86'400);
  set->Integer({.key = "drift.min_rows", .help = "Rows a window needs to be evaluated"},
               &m.min_rows, 1, 100'000'000);
  set->Integer({.key = "drift.queue",
                .help = "Decided rows that may wait for the monitor's thread; beyond it they are "
                        "dropped and counted, never waited for (about 420 bytes a row)",
                .uses = kServe | kBench},
               &d.queue_rows, 1, 100'000'000);
  set->List({.key = "drift.exclude",
             .help = "Features left out of monitoring (seasonal ones); replaces the default, an "
                     "empty list watches every feature. Flag: repeat it, or separate by commas",
             .value_name = "FEATURE"},
            &m.exclude);
  set->Duration<Days>({.key = "drift.warmup_days",
                       .help = "Days of event time after a fresh state's first payment in which "
                               "no window is evaluated (the longest feature window)"},
                      &m.warmup, 0, 365);
  set->Duration<std::chrono::minutes>(
      {.key = "drift.min_dwell_minutes",
       .help = "The least time a level holds before it may fall (docs/drift.md)"},
      &m.min_dwell, 0, 24 * 60);
  set->Integer({.key = "drift.min_accounts",
                .help = "Distinct accounts a window needs to be evaluated"},
               &m.min_accounts, 1, 1'000'000);
  set->Integer({.key = "drift.min_clients", .help = "Distinct API clients a window needs"},
               &m.min_clients, 1, 10'000);
  set->Integer({.key = "drift.account_cap_rows",
                .help = "Rows one account may put into a window"},
               &m.account_cap_rows, 1, 1'000'000'000);
  set->Custom(
      {.key = "drift.client_cap_percent",
       .help = "The share of a window one API client may fill, in percent"},
      "1 to 100",
      [&m](std::string_view text) {
        int64_t percent = 0;
        VIGIL_RETURN_IF_ERROR(config::ParseWholeNumber(text, 1, 100, &percent));
        m.client_cap_share = static_cast<double>(percent) / 100;
        return absl::OkStatus();
      },
      [&m] { return absl::StrCat(std::llround(m.client_cap_share * 100)); });
}

void DeclareAudit(PipelineConfig* c, OptionSet* set) {
  AuditSection& a = c->audit;
  constexpr unsigned kRecords = kServe | kReplay;
  set->Bool({.key = "audit.durable_ack",
             .help = "Answer a decision only once its audit record is durable; false: once it is "
                     "queued (a crash may then lose answered decisions)",
             .flag = "durable-ack",
             .uses = kServe | kReplay},
            &a.durable_ack);
  set->Text({.key = "audit.signing_key",
             .help = "Ed25519 or SM2 PEM key that signs the log's tree heads (default "
                     "DATA_DIR/audit_signing_key.pem, created when missing)",
             .flag = "audit-key",
             .value_name = "PATH",
             .uses = kRecords},
            &a.signing_key);
  set->Choice({.key = "audit.hash",
               .help = "Hash of a new log (an existing log keeps its own)",
               .flag = "audit-hash",
               .uses = kRecords},
              &a.hash, {"sha256", "sm3"});
  set->Integer({.key = "audit.tree_head_every", .help = "Sign a tree head every N records ...",
                .uses = kServe},
               &a.tree_head_every, 1, 100'000'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "audit.tree_head_interval_ms", .help = "... or this often while the log grows",
       .uses = kServe},
      &a.tree_head_interval, 1, 86'400'000);
  set->Integer({.key = "audit.group_max_records", .help = "Records per group commit (one fsync)",
                .uses = kServe},
               &a.group_max_records, 1, 1'000'000);
  set->Duration<std::chrono::microseconds>(
      {.key = "audit.group_max_delay_us",
       .help = "Wait this long for more records before a commit",
       .uses = kServe},
      &a.group_max_delay, 0, 1'000'000);
  set->Integer({.key = "audit.queue",
                .help = "Records waiting to be written; beyond it requests get 503",
                .uses = kServe},
               &a.queue, 1, 100'000'000);
  set->Integer({.key = "audit.max_waiting",
                .help = "Decisions waiting at once for their durable record; beyond it 503 "
                        "overloaded, the row kept for the retry (0: unbounded)",
                .uses = kServe},
               &a.max_waiting, 0, 100'000'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "audit.max_wait_ms",
       .help = "While the oldest waiting decision has waited longer, new scoring requests get "
               "503 overloaded on arrival (0: never by time)",
       .uses = kServe},
      &a.max_wait, 0, 60'000);
  set->Bool({.key = "audit.compress_records", .help = "LZ4 record chunks (docs/audit.md)",
             .uses = kServe},
            &a.compress_records);
  set->Text({.key = "audit.record_kek",
             .help = "Public key (RSA of 2048 bits or more, or SM2; PEM) wrapping the data keys "
                     "that seal the records' names, accounts and remittance text",
             .flag = "record-kek",
             .value_name = "PATH",
             .uses = kRecords},
            &a.record_kek);
  set->Choice({.key = "audit.record_cipher",
               .help = "Cipher of the sealed fields (sm4-ctr-hmac-sm3: the national profile)",
               .flag = "record-cipher",
               .uses = kRecords},
              &a.record_cipher, {"aes-256-gcm", "sm4-ctr-hmac-sm3"});
  set->Integer({.key = "audit.records_per_data_key",
                .help = "A new data key (segment) after this many records, and at every start",
                .uses = kServe},
               &a.records_per_data_key, 1, 1'000'000'000'000);
}

void DeclareScreeningAndState(PipelineConfig* c, OptionSet* set) {
  set->List({.key = "screening.lists",
             .help = "Screen every payment's parties against these watchlists: list files in "
                     "vigil's format or OFAC folders (sdn.csv, alt.csv); repeat the flag",
             .flag = "screening-list",
             .value_name = "PATH"},
            &c->screening.lists);
  set->Duration<std::chrono::seconds>(
      {.key = "screening.reload_seconds",
       .help = "Check the lists for changes this often and swap changed ones in (0: never)",
       .uses = kServe},
      &c->screening.reload_interval, 0, 86'400);
  set->Number({.key = "screening.min_score",
               .help = "Also find hits down to this score, for rules (0: the policy's review "
                       "threshold)"},
              &c->screening.min_score, 0, 1);
  set->Text({.key = "state.pseudonym_key",
             .help = "HMAC key of the account ids kept in the state (default "
                     "DATA_DIR/state_pseudonym.key, created); a state made with another key is "
                     "refused",
             .flag = "pseudonym-key",
             .value_name = "PATH",
             .uses = kServe | kReplay},
            &c->state.pseudonym_key);
  set->Choice({.key = "state.pseudonym_hash",
               .help = "The pseudonyms' HMAC",
               .flag = "pseudonym-hash",
               .uses = kServe | kReplay},
              &c->state.pseudonym_hash, {"hmac-sha256", "hmac-sm3"});
}

}  // namespace

void DeclarePipelineOptions(PipelineConfig* config, config::OptionSet* set) {
  DeclareModel(config, set);
  DeclareScoring(config, set);
  DeclareDrift(config, set);
  DeclareAudit(config, set);
  DeclareScreeningAndState(config, set);
}

absl::Status ReadConfigFile(const std::string& path, config::OptionSet* set) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the configuration ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return set->ReadYaml(text.str(), path);
}

}  // namespace vigil
