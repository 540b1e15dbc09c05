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
#include "vigil/cli/data_files.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/drift/measured_null.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/engine/account_pseudonyms.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/engine/audit_trail.h"
#include "vigil/engine/replay.h"

namespace vigil::cli {
namespace {

struct ReplayFlags {
  ReplayOptions options;
  std::string fx_rates;
  std::string summary_json;
  std::string priority = "P2";
  double threshold = 10000;
  int64_t lateness_seconds = 600;
  int64_t max_event_lead_hours = 24 * 30;
  int64_t order_memory_mib = 256;
  bool quiet = false;
  bool fail_on_reject = false;
  DecisionConfig decisions;  // with --policy
  std::string compare;       // --compare: a second policy
  std::string drift_profile;
  std::string drift_calibration = "null";
  int64_t drift_false_alarm_days = 30;
  int64_t drift_half_life = 0;
  int64_t drift_warmup = 7 * 24 * 3600;
  std::string drift_short = "60/10", drift_long = "300/60";
  std::string drift_null;
  std::optional<std::string> drift_exclude;
  std::string audit_key;
  std::string audit_hash = "sha256";
  bool no_audit = false;
  std::string record_kek, record_cipher = "aes-256-gcm";
  std::string pseudonym_key, pseudonym_hash = "hmac-sha256";
};

int RunReplayCommand(ReplayFlags& flags) {
  absl::StatusOr<FxRates> fx = LoadFxRates(flags.fx_rates);
  if (!fx.ok()) {
    std::cerr << "vigil replay: " << fx.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<Priority> priority = ParsePriority(flags.priority);
  if (!priority.ok()) {
    std::cerr << "vigil replay: --priority: " << priority.status().message() << "\n";
    return kExitUsage;
  }
  ReplayOptions& o = flags.options;
  o.default_priority = *priority;
  o.features.reporting_threshold_micros = static_cast<int64_t>(flags.threshold * 1e6);
  o.features.allowed_lateness = std::chrono::seconds(flags.lateness_seconds);
  o.max_event_lead = std::chrono::hours(flags.max_event_lead_hours);
  o.order_memory_bytes = static_cast<size_t>(flags.order_memory_mib) << 20;
  // A data dir's state knows accounts by keyed hashes, as `vigil serve`'s does.
  if (!o.data_dir.empty()) {
    absl::StatusOr<std::shared_ptr<const crypto::Pseudonymizer>> pseudonyms =
        LoadAccountPseudonyms(flags.pseudonym_key, o.data_dir, flags.pseudonym_hash);
    if (!pseudonyms.ok()) {
      std::cerr << "vigil replay: " << pseudonyms.status().message() << "\n";
      return kExitUsage;
    }
    o.features.account_pseudonyms = *std::move(pseudonyms);
  }
  if (!flags.quiet) o.progress = &std::cerr;
  std::unique_ptr<DecisionMaker> decider, comparer;
  if (flags.decisions.gpu && flags.decisions.model_path.empty()) {
    std::cerr << "vigil replay: --gpu needs --policy and --model (the GPU scores the model)\n";
    return kExitUsage;
  }
  if (!flags.decisions.policy_path.empty()) {
    auto built = BuildDecisionMaker(flags.decisions);
    if (!built.ok()) {
      std::cerr << "vigil replay: " << built.status().message() << "\n";
      // A missing file, or a GPU asked for that this machine or build lacks: usage or
      // environment (2); a file read and found wanting: 1.
      const absl::StatusCode code = built.status().code();
      return code == absl::StatusCode::kNotFound || code == absl::StatusCode::kUnavailable
                 ? kExitUsage
                 : kExitInputRejected;
    }
    decider = *std::move(built);
    o.decisions = decider.get();
    if (!flags.compare.empty()) {
      DecisionConfig other = flags.decisions;
      other.policy_path = flags.compare;
      auto candidate = BuildDecisionMaker(other);
      if (!candidate.ok()) {
        std::cerr << "vigil replay: --compare: " << candidate.status().message() << "\n";
        return candidate.status().code() == absl::StatusCode::kNotFound ? kExitUsage
                                                                        : kExitInputRejected;
      }
      comparer = *std::move(candidate);
      o.compare = comparer.get();
    }
  } else if (!flags.decisions.model_path.empty()) {
    std::cerr << "vigil replay: --model needs --policy (the policy turns scores into actions)\n";
    return kExitUsage;
  } else if (flags.decisions.gpu) {
    std::cerr << "vigil replay: --gpu needs --policy and --model (the GPU scores the model)\n";
    return kExitUsage;
  } else if (!flags.decisions.screening_lists.empty()) {
    std::cerr << "vigil replay: --screening-list needs --policy (the policy turns hits into "
                 "actions)\n";
    return kExitUsage;
  }
  if (decider == nullptr && !flags.compare.empty()) {
    std::cerr << "vigil replay: --compare needs --policy (the baseline)\n";
    return kExitUsage;
  }
  // Decisions made with a data dir are recorded in its audit log, as `vigil serve` records
  // them (docs/audit.md).
  if (decider != nullptr && !o.data_dir.empty() && !flags.no_audit) {
    absl::StatusOr<audit::HashAlgorithm> hash = audit::ParseHashAlgorithm(flags.audit_hash);
    if (!hash.ok()) {
      std::cerr << "vigil replay: --audit-hash: " << hash.status().message() << "\n";
      return kExitUsage;
    }
    o.audit_hash = *hash;
    absl::StatusOr<std::shared_ptr<const audit::LogSigner>> signer =
        DataDirSigningKey(flags.audit_key, o.data_dir);
    if (!signer.ok()) {
      std::cerr << "vigil replay: --audit-key: " << signer.status().message() << "\n";
      return kExitUsage;
    }
    o.audit_signer = *std::move(signer);
    absl::StatusOr<crypto::CipherSuite> suite = crypto::ParseCipherSuite(flags.record_cipher);
    if (!suite.ok()) {
      std::cerr << "vigil replay: --record-cipher: " << suite.status().message() << "\n";
      return kExitUsage;
    }
    o.audit_record_suite = *suite;
    if (!flags.record_kek.empty()) {
      absl::StatusOr<crypto::KeyEncryptionKey> kek =
          crypto::KeyEncryptionKey::LoadPublicKeyFile(flags.record_kek);
      if (!kek.ok()) {
        std::cerr << "vigil replay: --record-kek: " << kek.status().message() << "\n";
        return kExitUsage;
      }
      o.audit_record_kek = std::make_shared<const crypto::KeyEncryptionKey>(*std::move(kek));
    }
  } else if (!flags.record_kek.empty()) {
    std::cerr << "vigil replay: --record-kek seals the audit records of a run with --data-dir and "
                 "--policy\n";
    return kExitUsage;
  }

  // Drift: on with --drift-profile, or with --drift-report and a reference_profile.json beside
  // the --model (tools/train.py writes it there).
  std::optional<drift::ReferenceProfile> profile;
  if (flags.drift_profile.empty() && (!o.drift_report.empty() || !o.drift_null_out.empty())) {
    const std::filesystem::path beside =
        std::filesystem::path(flags.decisions.model_path).parent_path() / "reference_profile.json";
    if (flags.decisions.model_path.empty() || !std::filesystem::exists(beside)) {
      std::cerr << "vigil replay: --drift-report and --drift-null-out need --drift-profile (or a "
                   "--model with reference_profile.json beside it)\n";
      return kExitUsage;
    }
    flags.drift_profile = beside.string();
  }
  if (!flags.drift_profile.empty()) {
    absl::StatusOr<drift::ReferenceProfile> loaded = drift::ReferenceProfile::Load(flags.drift_profile);
    if (!loaded.ok()) {
      std::cerr << "vigil replay: --drift-profile: " << loaded.status().message() << "\n";
      return kExitUsage;
    }
    profile = *std::move(loaded);
    o.drift_profile = &*profile;
    absl::StatusOr<drift::DriftCalibration> calibration =
        drift::ParseDriftCalibration(flags.drift_calibration);
    if (!calibration.ok()) {
      std::cerr << "vigil replay: --drift-calibration: " << calibration.status().message() << "\n";
      return kExitUsage;
    }
    o.drift.calibration = *calibration;
    if (flags.drift_false_alarm_days < 1) {
      std::cerr << "vigil replay: --drift-false-alarm-days must be at least 1\n";
      return kExitUsage;
    }
    o.drift.false_alarm_period = std::chrono::hours(24 * flags.drift_false_alarm_days);
    if (flags.drift_half_life < 0) {
      std::cerr << "vigil replay: --drift-half-life must not be negative\n";
      return kExitUsage;
    }
    if (flags.drift_warmup < 0) {
      std::cerr << "vigil replay: --drift-warmup must not be negative\n";
      return kExitUsage;
    }
    o.drift.warmup = std::chrono::seconds(flags.drift_warmup);
    for (drift::DriftWindowSpec& w : o.drift.windows) {
      const std::string& text = w.name == "short" ? flags.drift_short : flags.drift_long;
      if (absl::Status s = drift::ParseDriftWindow(text, absl::StrCat("--drift-", w.name), &w);
          !s.ok()) {
        std::cerr << "vigil replay: " << s.message() << "\n";
        return kExitUsage;
      }
      if (w.name == "long") w.decay_half_life = std::chrono::seconds(flags.drift_half_life);
    }
    if (flags.drift_exclude.has_value()) {
      o.drift.exclude.clear();
      for (absl::string_view name : absl::StrSplit(*flags.drift_exclude, ',', absl::SkipEmpty())) {
        o.drift.exclude.emplace_back(name);
      }
    }
    // The measured null: --drift-null, else drift_null.json beside the profile when present.
    if (flags.drift_null.empty()) {
      const std::filesystem::path beside =
          std::filesystem::path(flags.drift_profile).parent_path() / "drift_null.json";
      if (std::filesystem::exists(beside) && o.drift_null_out.empty()) flags.drift_null = beside.string();
    }
    if (!flags.drift_null.empty()) {
      absl::StatusOr<drift::MeasuredNull> null = drift::MeasuredNull::Load(flags.drift_null);
      if (!null.ok()) {
        std::cerr << "vigil replay: --drift-null: " << null.status().message() << "\n";
        return kExitUsage;
      }
      o.drift.measured_null = std::make_shared<const drift::MeasuredNull>(*std::move(null));
    }
    if (absl::Status valid = o.drift.Validate(); !valid.ok()) {
      std::cerr << "vigil replay: " << valid.message() << "\n";
      return kExitUsage;
    }
  }

  absl::StatusOr<ReplaySummary> summary = RunReplay(o, *fx, RealClock());
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

}  // namespace

Command AddReplayCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* app = vigil.add_subcommand(
      "replay",
      "Stream a transaction file (AMLworld CSV or JSON Lines) through ingest and per-account "
      "features in event-time order; print throughput, latency, rejects and memory");
  app->add_option("FILE", flags->options.input_path, "Input file")->required();
  app->add_option("--data-dir", flags->options.data_dir,
                  "Feature state directory (RocksDB): restored at start, checkpointed while "
                  "running; a replay of the same file after a crash resumes where it stopped");
  app->add_option("--features-out", flags->options.features_out,
                  "Write the feature vectors (tx_id, timestamp, features, label, typology) as CSV");
  app->add_option("--summary-json", flags->summary_json, "Write the summary as JSON");
  app->add_option("--rejects-out", flags->options.rejects_out,
                  "Write rejected records with line, field, reason and message (TSV)");
  app->add_option("--fx-rates", flags->fx_rates,
                  "FX rates table (default: data/fx_rates.csv in the current directory, else "
                  "above the executable's directory)");
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
  app->add_option("--policy", flags->decisions.policy_path,
                  "Decide every record with this policy and backtest the decisions against the "
                  "labels (confusion matrix, precision/recall/F1, per typology, alerts per day, "
                  "rules fired)");
  app->add_option("--model", flags->decisions.model_path,
                  "Score every record with this model (XGBoost JSON or LightGBM text) for the "
                  "policy's thresholds");
  app->add_flag("--gpu", flags->decisions.gpu,
               "With --model: score the replay's batches on the GPU (docs/gpu.md); the same "
               "scores as the CPU, bit for bit; a batch the GPU fails is scored on the CPU. "
               "Refused without a usable GPU");
  app->add_option("--gpu-device", flags->decisions.gpu_device, "With --gpu: the CUDA device")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--compare", flags->compare,
                  "Also decide with this policy (same model) and report how the decisions change: "
                  "counts by from→to action with examples, and its own backtest");
  app->add_option("--decisions-out", flags->options.decisions_out,
                  "With --policy: one CSV row per decision (transaction, accounts, action, score, "
                  "rules fired, label)");
  app->add_option("--lists", flags->decisions.lists_dir,
                  "Directory of named lists for the policy (default: 'lists' beside it)");
  app->add_option("--screening-list", flags->decisions.screening_lists,
                  "With --policy: screen every payment's parties against this watchlist (a list "
                  "file in vigil's format, or an OFAC folder holding sdn.csv and alt.csv); "
                  "repeat for more lists. Hits decide by the policy's screening thresholds")
      ->allow_extra_args(false);
  app->add_option("--reason-codes", flags->decisions.options.reason_codes,
                  "Model reason codes (TreeSHAP) per REVIEW/BLOCK decision; 0: none")
      ->capture_default_str();
  app->add_option("--drift-profile", flags->drift_profile,
                  "Watch every feature (and with --model the score) for drift against this "
                  "reference profile (tools/train.py's reference_profile.json), on event time as "
                  "`vigil serve` would have (docs/drift.md)");
  app->add_option("--drift-report", flags->options.drift_report,
                  "Write a self-contained HTML page with the drift severity per feature over "
                  "time and the level bands (the profile defaults to the one beside --model)");
  app->add_option("--drift-calibration", flags->drift_calibration,
                  "null (default: per window size, aimed at one false L2 per feature per "
                  "--drift-false-alarm-days) or raw-preset (fixed cut-offs 0.15 / 0.30)");
  app->add_option("--drift-false-alarm-days", flags->drift_false_alarm_days,
                  "Expected days between false L2 alarms of one feature (default 30)");
  app->add_option("--drift-null", flags->drift_null,
                  "The training stream's measured no-drift scores (written by --drift-null-out; "
                  "default: drift_null.json beside the profile, when present)");
  app->add_option("--drift-null-out", flags->options.drift_null_out,
                  "Write this replay's window scores as a measured null (replay the training "
                  "stream with the same drift settings)");
  app->add_option("--drift-exclude", flags->drift_exclude,
                  "Features the monitor leaves out, comma-separated (default: hour_of_day,"
                  "day_of_week, seasonal by design; empty: watch every feature)");
  app->add_option("--drift-short", flags->drift_short,
                  "The short window, SIZE/SLIDE in seconds (default 60/10)");
  app->add_option("--drift-long", flags->drift_long,
                  "The long window, SIZE/SLIDE in seconds (default 300/60)");
  app->add_option("--drift-half-life", flags->drift_half_life,
                  "Exponential time decay of the long window, half-life in seconds (default 0: "
                  "none)");
  app->add_option("--drift-warmup", flags->drift_warmup,
                  "Seconds of event time after the first payment in which no drift window is "
                  "evaluated, while the fresh feature state warms up (default 604800: 7 days, "
                  "the longest feature window; 0: none)");
  app->add_flag("--quiet", flags->quiet, "No progress lines on stderr");
  app->add_flag("--fail-on-reject", flags->fail_on_reject,
                "Exit with status 1 when any record was rejected");
  app->add_option("--audit-key", flags->audit_key,
                  "With --data-dir and --policy, the decisions are recorded in the data dir's "
                  "audit log (as vigil serve records them); its tree heads are signed with this "
                  "Ed25519 or SM2 PEM key (default: DATA_DIR/audit_signing_key.pem, created when "
                  "missing)");
  app->add_option("--audit-hash", flags->audit_hash,
                  "Hash of a new audit log: sha256 (default) or sm3");
  app->add_option("--record-kek", flags->record_kek,
                  "With the audit log: the public half of the key-encryption key (RSA >= 2048 "
                  "bits or SM2, PEM) that wraps the data keys sealing the records' names, "
                  "accounts and remittance text (as vigil serve --record-kek)");
  app->add_option("--record-cipher", flags->record_cipher,
                  "With --record-kek: aes-256-gcm (default) or sm4-ctr-hmac-sm3");
  app->add_option("--pseudonym-key", flags->pseudonym_key,
                  "With --data-dir: HMAC key file of the account ids kept in the state "
                  "(default <data-dir>/state_pseudonym.key, created)");
  app->add_option("--pseudonym-hash", flags->pseudonym_hash,
                  "With --data-dir: hmac-sha256 (default) or hmac-sm3");
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
