#include "vigil/cli/replay_command.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/signing_key.h"
#include "vigil/cli/config_flags.h"
#include "vigil/cli/data_files.h"
#include "vigil/config/option_set.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/drift/measured_null.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/engine/account_pseudonyms.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/engine/pipeline_options.h"
#include "vigil/engine/replay.h"

namespace vigil::cli {
namespace {

// The pipeline's configuration (one OptionSet, docs/configuration.md) and replay's own
// inputs and outputs.
struct ReplayFlags {
  ReplayOptions options;
  PipelineConfig pipeline;
  config::OptionSet settings;
  std::unique_ptr<ConfigFlags> config_flags;
  std::string summary_json;
  std::string priority = "P2";
  double threshold = 10000;
  int64_t lateness_seconds = 600;
  int64_t max_event_lead_hours = 24 * 30;
  int64_t order_memory_mib = 256;
  bool quiet = false;
  bool fail_on_reject = false;
  int reason_codes = DecisionOptions{}.reason_codes;
  std::string compare;  // --compare: a second policy
  bool no_audit = false;
};

// The decision stage replay builds from the pipeline's configuration.
DecisionConfig DecisionsOf(const PipelineConfig& p, int reason_codes) {
  DecisionConfig d;
  d.policy_path = p.policy;
  d.lists_dir = p.lists;
  d.model_path = p.model;
  d.screening_lists = p.screening.lists;
  d.options.screening_min_score = p.screening.min_score;
  d.options.reason_codes = reason_codes;
  // Production's scorer chain, timed for history (model_chain.h).
  d.chain = ModelChainOptions::For(p, PipelineMode::kReplay);
  d.chain.gpu_setting = "--gpu";
  return d;
}

// Why replay stops before it runs: printed as "vigil replay: <message>", exit "code".
struct Stop {
  std::string message;
  int code = kExitUsage;
};

// What the steps below make for the run, which must outlive it: ReplayOptions points into it.
struct ReplayParts {
  std::optional<FxRates> fx;
  std::unique_ptr<DecisionMaker> decider, comparer;
  std::optional<drift::ReferenceProfile> profile;
};

// The configuration file and the flags, applied and checked together.
std::optional<Stop> ApplyConfiguration(ReplayFlags& flags) {
  if (absl::Status s = flags.config_flags->Apply(); !s.ok()) return Stop{std::string(s.message())};
  if (absl::Status s = flags.pipeline.Validate(/*needs_data_dir=*/false); !s.ok()) {
    return Stop{std::string(s.message())};
  }
  return std::nullopt;
}

std::optional<Stop> LoadFx(const PipelineConfig& p, ReplayParts* parts) {
  absl::StatusOr<FxRates> fx = LoadFxRates(p.fx_rates);
  if (!fx.ok()) return Stop{std::string(fx.status().message())};
  parts->fx = *std::move(fx);
  return std::nullopt;
}

// Replay's own flags into flags.options, and the data dir's account pseudonyms.
std::optional<Stop> ResolveOptions(ReplayFlags& flags) {
  const PipelineConfig& p = flags.pipeline;
  absl::StatusOr<Priority> priority = ParsePriority(flags.priority);
  if (!priority.ok()) return Stop{absl::StrCat("--priority: ", priority.status().message())};
  ReplayOptions& o = flags.options;
  o.default_priority = *priority;
  o.features.reporting_threshold_micros = static_cast<int64_t>(flags.threshold * 1e6);
  o.features.allowed_lateness = std::chrono::seconds(flags.lateness_seconds);
  o.max_event_lead = std::chrono::hours(flags.max_event_lead_hours);
  o.order_memory_bytes = static_cast<size_t>(flags.order_memory_mib) << 20;
  o.data_dir = p.data_dir;
  o.audit_durable_ack = p.audit.durable_ack;
  // A data dir's state knows accounts by keyed hashes, as `vigil serve`'s does.
  if (!o.data_dir.empty()) {
    absl::StatusOr<std::shared_ptr<const crypto::Pseudonymizer>> pseudonyms =
        LoadAccountPseudonyms(p.state.pseudonym_key, o.data_dir, p.state.pseudonym_hash);
    if (!pseudonyms.ok()) return Stop{std::string(pseudonyms.status().message())};
    o.features.account_pseudonyms = *std::move(pseudonyms);
  }
  if (!flags.quiet) o.progress = &std::cerr;
  return std::nullopt;
}

// With --policy, the decision maker (and --compare's); without it, no flag that needs one.
std::optional<Stop> BuildDeciders(ReplayFlags& flags, ReplayParts* parts) {
  const DecisionConfig decisions = DecisionsOf(flags.pipeline, flags.reason_codes);
  if (decisions.chain.gpu.enabled && decisions.model_path.empty()) {
    return Stop{"--gpu needs --policy and --model (the GPU scores the model)"};
  }
  if (decisions.policy_path.empty()) {
    if (!decisions.model_path.empty()) {
      return Stop{"--model needs --policy (the policy turns scores into actions)"};
    }
    if (!decisions.screening_lists.empty()) {
      return Stop{"--screening-list needs --policy (the policy turns hits into actions)"};
    }
    if (!flags.compare.empty()) return Stop{"--compare needs --policy (the baseline)"};
    return std::nullopt;
  }
  auto built = BuildDecisionMaker(decisions);
  if (!built.ok()) {
    // A missing file, or a GPU asked for that this machine or build lacks: usage or
    // environment (2); a file read and found wanting: 1.
    const absl::StatusCode code = built.status().code();
    return Stop{std::string(built.status().message()),
                code == absl::StatusCode::kNotFound || code == absl::StatusCode::kUnavailable
                    ? kExitUsage
                    : kExitInputRejected};
  }
  parts->decider = *std::move(built);
  flags.options.decisions = parts->decider.get();
  if (flags.compare.empty()) return std::nullopt;
  DecisionConfig other = decisions;
  other.policy_path = flags.compare;
  auto candidate = BuildDecisionMaker(other);
  if (!candidate.ok()) {
    return Stop{
        absl::StrCat("--compare: ", candidate.status().message()),
        candidate.status().code() == absl::StatusCode::kNotFound ? kExitUsage : kExitInputRejected};
  }
  parts->comparer = *std::move(candidate);
  flags.options.compare = parts->comparer.get();
  return std::nullopt;
}

// Decisions made with a data dir are recorded in its audit log, as `vigil serve` records them
// (docs/audit.md): its hash, signing key, record cipher and key-encryption key.
std::optional<Stop> ResolveAudit(ReplayFlags& flags, const ReplayParts& parts) {
  const PipelineConfig& p = flags.pipeline;
  ReplayOptions& o = flags.options;
  if (parts.decider == nullptr || o.data_dir.empty() || flags.no_audit) {
    if (p.audit.record_kek.empty()) return std::nullopt;
    return Stop{"--record-kek seals the audit records of a run with --data-dir and --policy"};
  }
  absl::StatusOr<audit::HashAlgorithm> hash = audit::ParseHashAlgorithm(p.audit.hash);
  if (!hash.ok()) return Stop{absl::StrCat("--audit-hash: ", hash.status().message())};
  o.audit_hash = *hash;
  absl::StatusOr<std::shared_ptr<const audit::LogSigner>> signer =
      DataDirSigningKey(p.audit.signing_key, o.data_dir);
  if (!signer.ok()) return Stop{absl::StrCat("--audit-key: ", signer.status().message())};
  o.audit_signer = *std::move(signer);
  absl::StatusOr<crypto::CipherSuite> suite = crypto::ParseCipherSuite(p.audit.record_cipher);
  if (!suite.ok()) return Stop{absl::StrCat("--record-cipher: ", suite.status().message())};
  o.audit_record_suite = *suite;
  if (p.audit.record_kek.empty()) return std::nullopt;
  absl::StatusOr<crypto::KeyEncryptionKey> kek =
      crypto::KeyEncryptionKey::LoadPublicKeyFile(p.audit.record_kek);
  if (!kek.ok()) return Stop{absl::StrCat("--record-kek: ", kek.status().message())};
  o.audit_record_kek = std::make_shared<const crypto::KeyEncryptionKey>(*std::move(kek));
  return std::nullopt;
}

// Drift: on with --drift-profile, or with --drift-report or --drift-null-out and a
// reference_profile.json beside the --model (vigil model train writes it there).
std::optional<Stop> LoadDrift(ReplayFlags& flags, ReplayParts* parts) {
  const PipelineConfig& p = flags.pipeline;
  ReplayOptions& o = flags.options;
  std::string drift_profile = p.drift.profile;
  if (drift_profile.empty() && (!o.drift_report.empty() || !o.drift_null_out.empty())) {
    drift_profile = p.DriftProfilePath();
    if (drift_profile.empty()) {
      return Stop{
          "--drift-report and --drift-null-out need --drift-profile (or a --model with "
          "reference_profile.json beside it)"};
    }
  }
  if (drift_profile.empty()) return std::nullopt;
  absl::StatusOr<drift::ReferenceProfile> loaded = drift::ReferenceProfile::Load(drift_profile);
  if (!loaded.ok()) return Stop{absl::StrCat("--drift-profile: ", loaded.status().message())};
  parts->profile = *std::move(loaded);
  o.drift_profile = &*parts->profile;
  o.drift = p.drift.monitor;  // the windows, calibration, caps and warm-up, as serve's
  // The measured null: --drift-measured-null, else drift_null.json beside the profile when
  // present (not while measuring a new one).
  const std::string null_path =
      o.drift_null_out.empty() ? p.DriftNullPath(drift_profile) : p.drift.measured_null;
  if (!null_path.empty()) {
    absl::StatusOr<drift::MeasuredNull> null = drift::MeasuredNull::Load(null_path);
    if (!null.ok()) {
      return Stop{absl::StrCat("--drift-measured-null: ", null.status().message())};
    }
    o.drift.measured_null = std::make_shared<const drift::MeasuredNull>(*std::move(null));
  }
  if (absl::Status valid = o.drift.Validate(); !valid.ok()) {
    return Stop{std::string(valid.message())};
  }
  return std::nullopt;
}

// Every step before the run, in order; the first that stops says why.
std::optional<Stop> PrepareReplay(ReplayFlags& flags, ReplayParts* parts) {
  if (std::optional<Stop> stop = ApplyConfiguration(flags)) return stop;
  if (std::optional<Stop> stop = LoadFx(flags.pipeline, parts)) return stop;
  if (std::optional<Stop> stop = ResolveOptions(flags)) return stop;
  if (std::optional<Stop> stop = BuildDeciders(flags, parts)) return stop;
  if (std::optional<Stop> stop = ResolveAudit(flags, *parts)) return stop;
  return LoadDrift(flags, parts);
}

// Runs the replay and prints its summary (and writes --summary-json).
int RunAndReport(const ReplayFlags& flags, const FxRates& fx) {
  absl::StatusOr<ReplaySummary> summary = RunReplay(flags.options, fx, RealClock());
  if (!summary.ok()) {
    std::cerr << "vigil replay: " << summary.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << ReplaySummaryToText(*summary);
  if (!flags.summary_json.empty()) {
    std::ofstream out(flags.summary_json, std::ios::binary | std::ios::trunc);
    out << ReplaySummaryToJson(*summary);
    out.close();
    if (!out) {
      std::cerr << "vigil replay: cannot write --summary-json '" << flags.summary_json << "'\n";
      return kExitUsage;
    }
  }
  if (flags.fail_on_reject && summary->rejected > 0) return kExitInputRejected;
  return kExitOk;
}

int RunReplayCommand(ReplayFlags& flags) {
  ReplayParts parts;
  if (std::optional<Stop> stop = PrepareReplay(flags, &parts)) {
    std::cerr << "vigil replay: " << stop->message << "\n";
    return stop->code;
  }
  return RunAndReport(flags, *parts.fx);
}

}  // namespace

Command AddReplayCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* app = vigil.add_subcommand(
      "replay",
      "Stream a transaction file (AMLworld CSV or JSON Lines) through ingest and per-account "
      "features in event-time order; print throughput, latency, rejects and memory");
  app->add_option("FILE", flags->options.input_path, "Input file")->required();
  // The pipeline's settings, as vigil serve takes them (docs/configuration.md): the data dir
  // (feature state restored at start and checkpointed, so a replay of the same file after a
  // crash resumes where it stopped; with --policy the decisions are recorded in its audit
  // log), --policy (decide every record and backtest the decisions against the labels),
  // --model, --gpu, --screening-list, the drift and audit settings.
  DeclarePipelineOptions(&flags->pipeline, &flags->settings);
  flags->config_flags =
      std::make_unique<ConfigFlags>(app, &flags->settings, config::kReplay);
  app->add_option("--features-out", flags->options.features_out,
                  "Write the feature vectors (tx_id, timestamp, features, label, typology) as CSV");
  app->add_option("--summary-json", flags->summary_json, "Write the summary as JSON");
  app->add_option("--rejects-out", flags->options.rejects_out,
                  "Write rejected records with line, field, reason and message (TSV)");
  app->add_option("--priority", flags->priority,
                  "Priority class of records that carry none (P0, P1, P2)")
      ->capture_default_str();
  app->add_option("--reporting-threshold", flags->threshold,
                  "Reporting threshold in the reporting currency, for near-threshold counts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_option("--max-event-lead-hours", flags->max_event_lead_hours,
                  "Reject (event_time_outlier) a record dated more than this many hours ahead "
                  "of the records around it in the file, instead of applying it (default 720; "
                  "0: off)")
      ->check(CLI::Range(int64_t{0}, int64_t{24 * 365 * 100}));
  app->add_option("--allowed-lateness", flags->lateness_seconds,
                  "Seconds an event may lag the latest event time and still be applied")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--checkpoint-every", flags->options.checkpoint_every,
                  "Records between durable checkpoints of the feature state (with --data-dir)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->add_option("--order-memory-mib", flags->order_memory_mib,
                  "Memory for ordering records by event time before spilling to --temp-dir")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app->add_option("--temp-dir", flags->options.temp_dir,
                  "Directory for spilled sorted runs (default: the system temp directory)");
  app->add_option("--compare", flags->compare,
                  "Also decide with this policy (same model) and report how the decisions change: "
                  "counts by from→to action with examples, and its own backtest");
  app->add_option("--decisions-out", flags->options.decisions_out,
                  "With --policy: one CSV row per decision (transaction, accounts, action, score, "
                  "rules fired, label)");
  app->add_option("--reason-codes", flags->reason_codes,
                  "Model reason codes (TreeSHAP) per REVIEW/BLOCK decision; 0: none")
      ->capture_default_str();
  app->add_option("--drift-report", flags->options.drift_report,
                  "Write a self-contained HTML page with the drift severity per feature over "
                  "time and the level bands (the profile defaults to the one beside --model)");
  app->add_option("--drift-null-out", flags->options.drift_null_out,
                  "Write this replay's window scores as a measured null (replay the training "
                  "stream with the same drift settings)");
  app->add_flag("--quiet", flags->quiet, "No progress lines on stderr");
  app->add_flag("--fail-on-reject", flags->fail_on_reject,
                "Exit with status 1 when any record was rejected");
  app->add_flag("--no-audit", flags->no_audit,
                "Do not record the decisions in the data dir's audit log");
  // Fault injection for crash-recovery tests; not for normal use.
  app->add_option("--crash-after", flags->options.crash_after_records)->group("");
  app->footer(
      "Examples:\n"
      "  vigil replay tx.csv --features-out features.csv --summary-json summary.json\n"
      "  vigil replay tx.csv --data-dir state/ --features-out features.csv\n"
      "    (run again after an interruption: it resumes from the last checkpoint)\n"
      "  vigil replay payments.jsonl --rejects-out rejects.tsv --fail-on-reject\n"
      "  vigil replay tx.csv --data-dir state/ --policy policy.yaml --model model.json\n"
      "    (then: vigil audit verify --data-dir state/)\n"
      "  vigil replay payments.jsonl --policy policy.yaml --screening-list lists/sdn \\\n"
      "      --screening-list lists/pep.csv --decisions-out decisions.csv");
  return Command{app, [flags] { return RunReplayCommand(*flags); }};
}

}  // namespace vigil::cli
