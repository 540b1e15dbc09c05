#include "vigil/cli/serve_command.h"

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/audit/log_hash.h"
#include "vigil/cli/data_files.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/vigil_server.h"

namespace vigil::cli {
namespace {

// Flags override the configuration file's keys of the same name.
struct ServeFlags {
  std::string config;
  std::string listen, data_dir, policy, lists, model, model_ref, fx_rates, batcher, log;
  std::optional<int> io_threads, workers;
  std::optional<int64_t> score_budget_ms, max_future_skew_seconds;
  std::optional<double> log_sample_rate;
  // drift.*
  std::string drift_profile, drift_measured_null, drift_calibration, drift_short_window,
      drift_long_window;
  std::optional<bool> drift_freeze;
  bool no_drift = false;
  std::optional<int64_t> drift_false_alarm_days, drift_min_rows, drift_queue;
  // screening.lists: added to the configuration's
  std::vector<std::string> screening_lists;
  // audit.*
  std::string audit_key, audit_hash;
  bool no_durable_ack = false;
  // audit.record_kek, audit.record_cipher
  std::string record_kek, record_cipher;
  // tls.*, plaintext, auth.mode
  std::string tls_cert, tls_key, client_ca, tls_ciphers, tls_ciphersuites, tls_min_version;
  bool plaintext = false;
  std::string auth;
  // state.*
  std::string pseudonym_key, pseudonym_hash;
  // gpu.enabled, gpu.device
  bool gpu = false;
  std::optional<int> gpu_device;
  bool model_required = false;
  bool routes = false;
};

int Fail(absl::string_view message, int code = kExitUsage) {
  std::cerr << "vigil serve: " << message << "\n";
  return code;
}

// The --drift-* flags over the configuration's drift keys; errors name the flag.
absl::Status ApplyDriftFlags(const ServeFlags& flags, ServeDriftConfig* drift) {
  const auto flag_error = [](absl::string_view flag, absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", message));
  };
  if (!flags.drift_profile.empty()) drift->profile = flags.drift_profile;
  if (!flags.drift_measured_null.empty()) drift->measured_null = flags.drift_measured_null;
  if (!flags.drift_calibration.empty()) {
    absl::StatusOr<drift::DriftCalibration> c = drift::ParseDriftCalibration(flags.drift_calibration);
    if (!c.ok()) return flag_error("--drift-calibration", c.status().message());
    drift->monitor.calibration = *c;
  }
  if (flags.drift_freeze) drift->monitor.freeze_on_l3 = *flags.drift_freeze;
  if (flags.no_drift) drift->enabled = false;
  if (flags.drift_false_alarm_days) {
    if (*flags.drift_false_alarm_days < 1 || *flags.drift_false_alarm_days > 3650) {
      return flag_error("--drift-false-alarm-days", "drift.false_alarm_days must be 1 to 3650");
    }
    drift->monitor.false_alarm_period = std::chrono::hours(24 * *flags.drift_false_alarm_days);
  }
  for (drift::DriftWindowSpec& w : drift->monitor.windows) {
    const std::string& text = w.name == "short"  ? flags.drift_short_window
                              : w.name == "long" ? flags.drift_long_window
                                                 : std::string();
    if (text.empty()) continue;
    if (absl::Status s = drift::ParseDriftWindow(text, absl::StrCat("drift.", w.name, "_window"), &w);
        !s.ok()) {
      return flag_error(absl::StrCat("--drift-", w.name, "-window"), s.message());
    }
  }
  if (flags.drift_min_rows) {
    if (*flags.drift_min_rows < 1) return flag_error("--drift-min-rows", "must be at least 1");
    drift->monitor.min_rows = static_cast<uint64_t>(*flags.drift_min_rows);
  }
  if (flags.drift_queue) {
    if (*flags.drift_queue < 1) return flag_error("--drift-queue", "must be at least 1");
    drift->queue_rows = static_cast<size_t>(*flags.drift_queue);
  }
  return absl::OkStatus();
}

int RunServe(const ServeFlags& flags) {
  if (flags.routes) {
    for (const std::string& route : ServeApi::Routes()) std::cout << route << "\n";
    return kExitOk;
  }
  ServeConfig config;
  if (!flags.config.empty()) {
    std::ifstream in(flags.config);
    if (!in) return Fail(absl::StrCat("cannot read --config ", flags.config));
    std::ostringstream text;
    text << in.rdbuf();
    absl::StatusOr<ServeConfig> parsed = ServeConfig::Parse(text.str(), flags.config);
    if (!parsed.ok()) return Fail(parsed.status().message());
    config = *std::move(parsed);
  }
  if (!flags.listen.empty()) {
    if (absl::Status s = ParseListen(flags.listen, &config.host, &config.port); !s.ok()) {
      return Fail(absl::StrCat("--listen: ", s.message()));
    }
  }
  const auto set = [](const std::string& flag, std::string* key) {
    if (!flag.empty()) *key = flag;
  };
  set(flags.data_dir, &config.data_dir);
  set(flags.policy, &config.policy);
  set(flags.lists, &config.lists);
  set(flags.fx_rates, &config.fx_rates);
  set(flags.log, &config.log_path);
  if (!flags.model.empty()) {
    config.model = flags.model;
    config.model_ref.clear();
  }
  if (!flags.model_ref.empty()) {
    config.model_ref = flags.model_ref;
    if (flags.model.empty()) config.model.clear();
  }
  if (flags.model_required) config.model_required = true;
  if (!flags.batcher.empty()) {
    absl::StatusOr<BatchPolicyConfig> preset = BatcherPreset(flags.batcher);
    if (!preset.ok()) return Fail(absl::StrCat("--batcher: ", preset.status().message()));
    config.batcher = *preset;
    config.batcher_preset = flags.batcher;
  }
  if (flags.gpu) config.gpu.enabled = true;
  if (flags.gpu_device) {
    if (*flags.gpu_device < 0) {
      return Fail("--gpu-device: gpu.device must be a CUDA device ordinal (0 or more)");
    }
    config.gpu.device = *flags.gpu_device;
  }
  if (flags.io_threads) config.io_threads = *flags.io_threads;
  if (flags.workers) config.worker_threads = *flags.workers;
  if (flags.score_budget_ms) config.score_budget = std::chrono::milliseconds(*flags.score_budget_ms);
  if (flags.max_future_skew_seconds) {
    config.max_future_skew = std::chrono::seconds(*flags.max_future_skew_seconds);
  }
  if (flags.log_sample_rate) config.log_sample_rate = *flags.log_sample_rate;
  if (absl::Status s = ApplyDriftFlags(flags, &config.drift); !s.ok()) return Fail(s.message());
  if (!flags.audit_key.empty()) config.audit.signing_key = flags.audit_key;
  if (!flags.audit_hash.empty()) {
    if (!audit::ParseHashAlgorithm(flags.audit_hash).ok()) {
      return Fail("--audit-hash: sha256 or sm3");
    }
    config.audit.hash = flags.audit_hash;
  }
  if (flags.no_durable_ack) config.audit.durable_ack = false;
  set(flags.record_kek, &config.audit.record_kek);
  set(flags.record_cipher, &config.audit.record_cipher);
  set(flags.tls_cert, &config.tls.cert);
  set(flags.tls_key, &config.tls.key);
  set(flags.client_ca, &config.tls.client_ca);
  set(flags.tls_ciphers, &config.tls.ciphers);
  set(flags.tls_ciphersuites, &config.tls.ciphersuites);
  set(flags.tls_min_version, &config.tls.min_version);
  if (flags.plaintext) config.plaintext = true;
  set(flags.auth, &config.auth.mode);
  set(flags.pseudonym_key, &config.state.pseudonym_key);
  set(flags.pseudonym_hash, &config.state.pseudonym_hash);
  config.screening.lists.insert(config.screening.lists.end(), flags.screening_lists.begin(),
                                flags.screening_lists.end());
  if (absl::Status s = config.Validate(); !s.ok()) return Fail(s.message());
  absl::StatusOr<FxRates> fx = LoadFxRates(config.fx_rates);
  if (!fx.ok()) return Fail(fx.status().message());

  // Every thread the server starts inherits this mask; the signals are taken by sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<VigilServer>> server = VigilServer::Start(config, *std::move(fx));
  if (!server.ok()) {
    // A damaged audit log or feature state was examined and found wanting (exit 1, as `vigil
    // audit verify`); everything else is the environment or the configuration (2).
    return Fail(server.status().message(),
                absl::IsDataLoss(server.status()) ? kExitInputRejected : kExitUsage);
  }
  std::cout << "vigil serve: listening on " << config.host << ":" << (*server)->port() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  std::cerr << "vigil serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": stopping (answering requests in flight)\n";
  if (absl::Status s = (*server)->Shutdown(); !s.ok()) return Fail(s.message());
  return kExitOk;
}

}  // namespace

Command AddServeCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* app = vigil.add_subcommand(
      "serve",
      "Serve decisions over HTTP: POST /v1/score and /v1/score/batch, policy ingest, model "
      "activation (canary, shadow), /healthz, /readyz, /metrics (docs/openapi.yaml)");
  app->add_option("--config", flags->config,
                  "YAML configuration (keys as the flags: listen, data_dir, policy, model, "
                  "model_ref, io_threads, score_budget_ms, limits, batcher, breaker, gpu, "
                  "workers, log, drift, audit, screening, tls, plaintext, auth, state; "
                  "docs/serve.md); flags override it");
  app->add_option("--listen", flags->listen, "HOST:PORT to listen on (port 0: any free port)");
  app->add_option("--data-dir", flags->data_dir,
                  "Data directory: policy versions, model registry, feature state");
  app->add_option("--policy", flags->policy,
                  "Policy file, stored; activated unless a version was activated since through POST /v1/policy/ingest or vigil policy (a stored activation wins at later starts; default: the data dir's active version)");
  app->add_option("--lists", flags->lists, "Named lists (default: lists/ beside the policy)");
  app->add_option("--model", flags->model,
                  "Model file, added to the registry; the champion until a model is activated "
                  "through POST /v1/engine/activate (a stored activation wins at later starts)");
  app->add_flag("--model-required", flags->model_required,
                "model.required: without an active model the server is not ready and decides "
                "nothing (default: rules only)");
  app->add_option("--model-ref", flags->model_ref,
                  "Champion from the data dir's registry (SHA-256 or unique prefix)");
  app->add_option("--fx-rates", flags->fx_rates,
                  "FX rates table (default: data/fx_rates.csv here, else beside the binary)");
  app->add_option("--batcher", flags->batcher, "Batcher preset: fast, immediate, compliance");
  app->add_flag("--gpu", flags->gpu,
                "gpu.enabled: score large batches on the CUDA backend behind the batcher (P0 and "
                "small batches stay on the CPU; thresholds gpu.min_rows in --config); the start "
                "fails when this vigil lacks the CUDA backend or the host has no usable GPU");
  app->add_option("--gpu-device", flags->gpu_device,
                  "gpu.device: the CUDA device ordinal used with --gpu (default 0)");
  app->add_option("--io-threads", flags->io_threads, "I/O threads (default 2)");
  app->add_option("--workers", flags->workers, "Worker threads for scoring (default 64)");
  app->add_option("--score-budget-ms", flags->score_budget_ms,
                  "SLA budget for a model score, then rules only (default 200)");
  app->add_option("--max-future-skew-seconds", flags->max_future_skew_seconds,
                  "max_future_skew_seconds: refuse payments dated further ahead of this "
                  "server's clock (422 event_in_future; default 300, at most 86400)")
      ->check(CLI::Range(int64_t{0}, int64_t{86'400}));
  app->add_option("--log", flags->log, "JSON-lines log file (default: standard error)");
  app->add_option("--log-sample-rate", flags->log_sample_rate,
                  "Share of successful requests logged (default 0.01; errors and degraded "
                  "decisions always)");
  app->add_option("--drift-profile", flags->drift_profile,
                  "Reference profile (tools/train.py) for drift monitoring (default: "
                  "reference_profile.json beside --model when it exists; none: drift off)");
  app->add_option("--drift-measured-null,--drift-null", flags->drift_measured_null,
                  "The training stream's measured no-drift scores (vigil replay "
                  "--drift-null-out; default: drift_null.json beside the profile, when present)");
  app->add_option("--drift-calibration", flags->drift_calibration,
                  "Drift severity calibration: null (default) or raw-preset");
  app->add_option("--audit-key", flags->audit_key,
                  "audit.signing_key: the Ed25519 or SM2 PEM key that signs the audit log's tree "
                  "heads (default DATA_DIR/audit_signing_key.pem, created when missing)");
  app->add_option("--audit-hash", flags->audit_hash, "audit.hash of a new audit log: sha256 or sm3");
  app->add_flag("--no-durable-ack", flags->no_durable_ack,
                "audit.durable_ack false: answer a decision as soon as its audit record is "
                "queued, not once it is durable (a crash may then lose answered decisions)");
  app->add_flag("--no-drift", flags->no_drift,
                "No drift monitoring, even with a reference profile beside --model");
  app->add_option("--drift-freeze", flags->drift_freeze,
                  "true (default): drift L3 freezes the model (rules-only, degraded decisions)");
  app->add_option("--drift-false-alarm-days", flags->drift_false_alarm_days,
                  "Expected days between false L2 drift alarms of one feature (default 30)");
  app->add_option("--drift-short-window,--drift-short", flags->drift_short_window,
                  "Short drift window, SIZE/SLIDE in seconds of event time (default 60/10)");
  app->add_option("--drift-long-window,--drift-long", flags->drift_long_window,
                  "Long drift window, SIZE/SLIDE in seconds (default 300/60)");
  app->add_option("--drift-min-rows", flags->drift_min_rows,
                  "Rows a drift window needs to be evaluated (default 50)");
  app->add_option("--drift-queue", flags->drift_queue,
                  "Decided rows that may wait for the drift monitor; beyond, dropped (default "
                  "65536)");
  app->add_option("--screening-list", flags->screening_lists,
                  "Screen every payment's parties against this watchlist: a list file in vigil's "
                  "format (id,name,aliases,type,countries,identifiers,list) or an OFAC folder "
                  "holding sdn.csv and alt.csv; repeat for more lists, added to the "
                  "configuration's screening.lists. Changed files are reloaded every "
                  "screening.reload_seconds (default 30)")
      ->allow_extra_args(false);
  app->add_option("--tls-cert", flags->tls_cert,
                  "tls.cert: the server's certificate chain (PEM); HTTPS with --tls-key");
  app->add_option("--tls-key", flags->tls_key,
                  "tls.key: the server's private key (PEM, mode 0600)");
  app->add_option("--client-ca", flags->client_ca,
                  "tls.client_ca: mutual TLS; clients must present a certificate of this CA, "
                  "whose subject is recorded as the decision's actor");
  app->add_option("--tls-ciphers", flags->tls_ciphers,
                  "tls.ciphers: TLS 1.2 cipher list (OpenSSL syntax)");
  app->add_option("--tls-ciphersuites", flags->tls_ciphersuites,
                  "tls.ciphersuites: TLS 1.3 cipher suites (OpenSSL syntax)");
  app->add_option("--tls-min-version", flags->tls_min_version, "tls.min_version: 1.2 or 1.3");
  app->add_flag("--plaintext", flags->plaintext,
                "Serve plain HTTP (no --tls-cert): on loopback or behind a TLS-terminating "
                "proxy only");
  app->add_option("--auth", flags->auth,
                  "auth.mode: tokens (default; bearer tokens from vigil token create) or none");
  app->add_option("--record-kek", flags->record_kek,
                  "audit.record_kek: public key (RSA >= 2048 bits or SM2, PEM) wrapping the data "
                  "keys that seal the audit records' names, accounts and remittance text");
  app->add_option("--record-cipher", flags->record_cipher,
                  "audit.record_cipher: aes-256-gcm (default) or sm4-ctr-hmac-sm3");
  app->add_option("--pseudonym-key", flags->pseudonym_key,
                  "state.pseudonym_key: HMAC key file for the account ids kept in the state "
                  "(default <data-dir>/state_pseudonym.key, created)");
  app->add_option("--pseudonym-hash", flags->pseudonym_hash,
                  "state.pseudonym_hash: hmac-sha256 (default) or hmac-sm3");
  app->add_flag("--routes", flags->routes, "Print the served routes and exit");
  app->footer(
      "Examples:\n"
      "  vigil token create --data-dir state/ --role scorer   (prints a token once)\n"
      "  vigil serve --listen 0.0.0.0:8443 --data-dir state/ --model model.json \\\n"
      "      --policy policies/default.yaml --tls-cert tls/server.pem --tls-key tls/server.key \\\n"
      "      --client-ca tls/clients.pem --record-kek keys/kek_public.pem\n"
      "  vigil serve --listen 127.0.0.1:8080 --data-dir state/ --model model.json \\\n"
      "      --policy policies/default.yaml --plaintext --auth none   (a loopback demo)\n"
      "  vigil serve --listen 127.0.0.1:8080 --data-dir state/ --policy policies/default.yaml \\\n"
      "      --screening-list lists/sdn --screening-list lists/pep.csv\n"
      "    (OFAC's SDN folder and a list of vigil's format; decisions name the versions)\n"
      "  curl -s https://bank-host:8443/v1/score -H \"Authorization: Bearer $TOKEN\" \\\n"
      "      --cacert tls/ca.pem -H 'Content-Type: application/json' -d @tx.json\n"
      "Prints 'vigil serve: listening on HOST:PORT' once ready; stops on SIGTERM or SIGINT.");
  return Command{app, [flags, app] {
                   if (!flags->routes && flags->data_dir.empty() && flags->config.empty()) {
                     std::cerr << "vigil serve: --data-dir (or --config) is required\n"
                               << app->help();
                     return kExitUsage;
                   }
                   return RunServe(*flags);
                 }};
}

}  // namespace vigil::cli
