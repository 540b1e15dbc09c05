#include "vigil/server/serve_config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/config/option_set.h"
#include "vigil/engine/pipeline_options.h"
#include "vigil/server/access_tokens.h"

namespace vigil {
namespace {

using config::kBench;
using config::kServe;
using config::OptionSet;

void DeclareFront(ServeConfig* c, OptionSet* set) {
  set->Custom(
      {.key = "listen", .help = "HOST:PORT to listen on (port 0: any free port)",
       .value_name = "HOST:PORT", .uses = kServe},
      "HOST:PORT",
      [c](std::string_view text) { absl::Status s = ParseListen(text, &c->host, &c->port);
        // ParseListen names "listen" first; the reader names the key itself.
        if (!s.ok() && absl::StartsWith(s.message(), "listen ")) {
          return absl::InvalidArgumentError(s.message().substr(7));
        }
        return s;
      },
      [c] { return absl::StrCat(c->host, ":", c->port); });
  set->Integer({.key = "io_threads", .help = "Threads that accept and read connections",
                .uses = kServe | kBench},
               &c->io_threads, 1, 256);
  ServeLimits& l = c->limits;
  set->Integer({.key = "limits.body_bytes", .help = "The largest request body", .uses = kServe},
               &l.body_bytes, 256, 64 << 20);
  set->Integer({.key = "limits.header_bytes", .help = "The largest request head",
                .uses = kServe},
               &l.header_bytes, 256, 1 << 20);
  set->Duration<std::chrono::milliseconds>(
      {.key = "limits.request_timeout_ms", .help = "The longest a request may take to arrive",
       .uses = kServe},
      &l.request_timeout, 1, 600'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "limits.idle_timeout_ms",
       .help = "An authenticated connection idle this long is closed", .uses = kServe},
      &l.idle_timeout, 1, 3'600'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "limits.header_timeout_ms",
       .help = "A connection without a valid credential yet must complete its next request "
               "head within this (from its accept or its last answer), else it is closed",
       .uses = kServe},
      &l.header_timeout, 1, 600'000);
  set->Integer({.key = "limits.max_connections", .help = "Open connections at most",
                .uses = kServe},
               &l.max_connections, 1, 1'000'000);
  set->Integer({.key = "limits.max_connections_per_client",
                .help = "Connections from one source address; beyond it 503 "
                        "too_many_connections (a gateway needs its pool's size)",
                .uses = kServe},
               &l.max_connections_per_client, 1, 1'000'000);
  set->Number({.key = "limits.max_unauthenticated_share",
               .help = "The share of max_connections that connections without a valid "
                       "credential may hold; the rest is kept for authenticated clients",
               .uses = kServe},
              &l.max_unauthenticated_share, 0, 1, /*above_min=*/true);
  set->Integer({.key = "limits.batch_size", .help = "Transactions per POST /v1/score/batch",
                .uses = kServe},
               &l.batch_size, 1, 100'000);
  set->Integer({.key = "workers.threads", .help = "Worker threads that decide",
                .flag = "workers", .uses = kServe | kBench},
               &c->worker_threads, 1, 4096);
  set->Integer({.key = "workers.queue", .help = "Requests that may wait for a worker",
                .uses = kServe},
               &c->worker_queue, 1, 10'000'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "workers.max_queue_delay_ms",
       .help = "A request that finds the oldest waiting one queued longer is answered 503 "
               "overloaded at once",
       .uses = kServe},
      &c->worker_max_queue_delay, 1, 60'000);
  set->Text({.key = "log.path", .help = "JSON-lines request log (default: standard error)",
             .flag = "log", .value_name = "PATH", .uses = kServe},
            &c->log_path);
  set->Number({.key = "log.sample_rate",
               .help = "Share of successful requests logged (errors and degraded decisions "
                       "always are)",
               .flag = "log-sample-rate", .uses = kServe},
              &c->log_sample_rate, 0, 1);
}

void DeclareSecurity(ServeConfig* c, OptionSet* set) {
  ServeTlsConfig& t = c->tls;
  set->Text({.key = "tls.cert", .help = "The server's certificate chain (PEM); HTTPS with tls.key",
             .flag = "tls-cert", .value_name = "PATH", .uses = kServe},
            &t.cert);
  set->Text({.key = "tls.key", .help = "The server's private key (PEM, mode 0600)",
             .flag = "tls-key", .value_name = "PATH", .uses = kServe},
            &t.key);
  set->Text({.key = "tls.client_ca",
             .help = "Mutual TLS: clients must present a certificate of this CA, whose subject "
                     "is recorded as the decision's actor",
             .flag = "client-ca", .value_name = "PATH", .uses = kServe},
            &t.client_ca);
  set->Text({.key = "tls.ciphers",
             .help = "TLS 1.2 cipher list, OpenSSL syntax (default: ECDHE with AES-GCM or "
                     "ChaCha20)",
             .uses = kServe},
            &t.ciphers);
  set->Text({.key = "tls.ciphersuites", .help = "TLS 1.3 cipher suites (default: OpenSSL's)",
             .uses = kServe},
            &t.ciphersuites);
  set->Choice({.key = "tls.min_version", .help = "The oldest TLS version accepted",
               .uses = kServe},
              &t.min_version, {"1.2", "1.3"});
  set->Bool({.key = "plaintext",
             .help = "Serve plain HTTP (no tls.cert): on loopback or behind a TLS-terminating "
                     "proxy only",
             .uses = kServe},
            &c->plaintext);
  set->Choice({.key = "auth.mode",
               .help = "tokens: every endpoint but /healthz and /readyz needs a bearer token "
                       "(vigil token create) or a listed client certificate; none: no checks",
               .flag = "auth", .uses = kServe},
              &c->auth.mode, {"tokens", "none"});
  set->Map({.key = "auth.certificate_roles",
            .help = "Mutual TLS: a client certificate's subject (RFC 2253) grants a role "
                    "(scorer, policy-admin, auditor, admin, analyst, supervisor)",
            .uses = kServe},
           &c->auth.certificate_roles);
}

absl::Status ValidateTransport(const ServeTlsConfig& tls, bool plaintext,
                               const ServeAuthConfig& auth) {
  if (tls.enabled()) {
    if (tls.cert.empty() || tls.key.empty()) {
      return absl::InvalidArgumentError("tls: give both tls.cert and tls.key (--tls-cert, --tls-key)");
    }
    if (plaintext) {
      return absl::InvalidArgumentError(
          "plaintext: true and a tls certificate contradict each other; drop one");
    }
    if (tls.min_version != "1.2" && tls.min_version != "1.3") {
      return absl::InvalidArgumentError(
          absl::StrCat("tls.min_version must be \"1.2\" or \"1.3\", not \"", tls.min_version,
                       "\""));
    }
  } else {
    if (!tls.client_ca.empty()) {
      return absl::InvalidArgumentError("tls.client_ca needs tls.cert and tls.key (mutual TLS)");
    }
    if (!plaintext) {
      return absl::InvalidArgumentError(
          "no TLS certificate: give tls.cert and tls.key (--tls-cert, --tls-key), or set "
          "plaintext: true (--plaintext) to serve plain HTTP on purpose, e.g. on loopback or "
          "behind a TLS-terminating proxy");
    }
  }
  if (auth.mode != "tokens" && auth.mode != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("auth.mode must be tokens or none, not \"", auth.mode, "\""));
  }
  if (!auth.certificate_roles.empty() && tls.client_ca.empty()) {
    return absl::InvalidArgumentError(
        "auth.certificate_roles needs mutual TLS (tls.client_ca): without it no client "
        "certificate is checked");
  }
  for (const auto& [subject, role] : auth.certificate_roles) {
    if (subject.empty()) {
      return absl::InvalidArgumentError("auth.certificate_roles: an empty certificate subject");
    }
    if (absl::StatusOr<Role> parsed = ParseRole(role); !parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("auth.certificate_roles[\"", subject, "\"]: ", parsed.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void DeclareCluster(ServeConfig* c, OptionSet* set) {
  ServeClusterConfig& k = c->cluster;
  set->List({.key = "cluster.nats",
             .help = "NATS JetStream servers of the cluster (nats://HOST:PORT, any members; "
                     "repeat the flag for each): serve as a node of the cluster",
             .flag = "cluster-nats",
             .value_name = "URL",
             .uses = kServe},
            &k.nats);
  set->Text({.key = "cluster.name",
             .help = "The cluster's name: its log stream and buckets are named after it",
             .uses = kServe},
            &k.name);
  set->Text({.key = "cluster.node_id",
             .help = "This node's id, unique in the cluster (letters, digits, '-', '_')",
             .value_name = "ID",
             .uses = kServe},
            &k.node_id);
  set->Integer({.key = "cluster.partitions",
                .help = "Partitions of the accounts; fixed when the cluster is created (a node "
                        "with another count is refused)",
                .uses = kServe},
               &k.partitions, 1, 4096);
  set->Integer({.key = "cluster.replicas",
                .help = "JetStream replicas of the cluster's log and buckets (1, 3 or 5)",
                .uses = kServe},
               &k.replicas, 1, 5);
  set->Duration<std::chrono::milliseconds>(
      {.key = "cluster.lease_ttl_ms",
       .help = "A partition's lease lives this long unrenewed: the time a crashed owner's "
               "partitions wait before another node takes them over",
       .uses = kServe},
      &k.lease_ttl, 300, 600'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "cluster.answer_slack_ms",
       .help = "Waited beyond a request's budget for its decision to come back through the "
               "log, before 503 decision_pending",
       .uses = kServe},
      &k.answer_slack, 0, 60'000);
  set->Integer({.key = "cluster.max_batch",
                .help = "Payments per decision batch of a partition",
                .uses = kServe},
               &k.max_batch, 1, 100'000);
  set->Integer({.key = "cluster.checkpoint_every",
                .help = "Checkpoint the node's applied state (features, pending payments, "
                        "idempotency memory, answers) in its data dir after this many log "
                        "messages applied",
                .uses = kServe},
               &k.checkpoint_every, 1, 100'000'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "cluster.checkpoint_interval_ms",
       .help = "... or after this long, whichever comes first: a restarted node applies the "
               "log from its last checkpoint",
       .uses = kServe},
      &k.checkpoint_interval, 100, 3'600'000);
  set->Duration<std::chrono::milliseconds>(
      {.key = "cluster.ship_interval_ms",
       .help = "How often the node deciding partition 0 ships a copy of its state to the NATS "
               "servers, from which a node with an empty data dir starts (0: never)",
       .uses = kServe},
      &k.ship_interval, 0, 86'400'000);
}

void DeclareCases(ServeConfig* c, OptionSet* set) {
  ServeCasesConfig& k = c->cases;
  set->Bool({.key = "cases.enabled",
             .help = "Keep the analysts' cases: REVIEW and BLOCK decisions become alerts grouped "
                     "into cases per paying account, worked under /v1/cases and /ui",
             .uses = kServe},
            &k.enabled);
  set->Duration<std::chrono::hours>(
      {.key = "cases.window_hours",
       .help = "An alert joins its account's unclosed case when the case's first payment is at "
               "most this long before it; otherwise it opens a new case",
       .uses = kServe},
      &k.window, 1, 24 * 366);
  set->Duration<std::chrono::hours>(
      {.key = "cases.sla_hours",
       .help = "How long a case may stay unclosed: its priority grows with its age up to this, "
               "and an older case is overdue",
       .uses = kServe},
      &k.sla, 1, 24 * 366);
  set->Bool({.key = "cases.four_eyes_block",
             .help = "Closing a case that holds a BLOCK needs a second analyst's approval",
             .uses = kServe},
            &k.four_eyes_block);
  set->Bool({.key = "cases.four_eyes_suspicious",
             .help = "Closing a case as suspicious_reported needs a second analyst's approval",
             .uses = kServe},
            &k.four_eyes_suspicious);
  set->Text({.key = "cases.report_entity_id",
             .help = "The bank's reporting-entity id at its financial intelligence unit "
                     "(goAML rentity_id) in the report drafts of suspicious cases; empty: a "
                     "placeholder to fill in",
             .uses = kServe},
            &k.report_entity_id);
  set->Text({.key = "cases.report_entity_branch",
             .help = "The branch in the report drafts (goAML rentity_branch); empty: none",
             .uses = kServe},
            &k.report_entity_branch);
  set->Integer({.key = "cases.attachment_bytes",
                .help = "The largest file an analyst may attach to a case; a request body is "
                        "bounded by limits.body_bytes too, so raise both for larger files",
                .uses = kServe},
               &k.attachment_bytes, 1, 64 << 20);
}

void DeclareServeOptions(ServeConfig* config, config::OptionSet* set) {
  DeclareFront(config, set);
  DeclarePipelineOptions(config, set);
  DeclareSecurity(config, set);
  DeclareCluster(config, set);
  DeclareCases(config, set);
}

absl::Status ParseListen(std::string_view listen, std::string* host, uint16_t* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen '", ToAbsl(listen), "': expected HOST:PORT, e.g. 127.0.0.1:8080"));
  }
  int64_t p = -1;
  const std::string_view port_text = listen.substr(colon + 1);
  if (!absl::SimpleAtoi(ToAbsl(port_text), &p) || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen '", ToAbsl(listen), "': the port must be a number from 0 to 65535"));
  }
  *host = std::string(listen.substr(0, colon));
  *port = static_cast<uint16_t>(p);
  return absl::OkStatus();
}

absl::StatusOr<ServeConfig> ServeConfig::Parse(std::string_view yaml, std::string_view file) {
  ServeConfig c;
  config::OptionSet set;
  DeclareServeOptions(&c, &set);
  VIGIL_RETURN_IF_ERROR(set.ReadYaml(yaml, file));
  // The combination (data_dir given, TLS or plaintext, ...) is checked by Validate once the
  // command line's flags are merged in: a flag may supply what the file leaves out.
  return c;
}

absl::Status ServeConfig::Validate() const {
  VIGIL_RETURN_IF_ERROR(PipelineConfig::Validate(/*needs_data_dir=*/true));
  VIGIL_RETURN_IF_ERROR(ValidateTransport(tls, plaintext, auth));
  if (!cluster.enabled()) return absl::OkStatus();
  if (cluster.node_id.empty()) {
    return absl::InvalidArgumentError(
        "cluster.node_id: required with cluster.nats (each node of a cluster has its own id)");
  }
  for (const char ch : cluster.node_id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') {
      return absl::InvalidArgumentError(absl::StrCat("cluster.node_id \"", cluster.node_id,
                                                     "\": letters, digits, '-' or '_' only"));
    }
  }
  if (cluster.replicas != 1 && cluster.replicas != 3 && cluster.replicas != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.replicas ", cluster.replicas,
                     ": 1, 3 or 5 (a Raft quorum needs an odd number of servers)"));
  }
  return absl::OkStatus();
}

}  // namespace vigil
