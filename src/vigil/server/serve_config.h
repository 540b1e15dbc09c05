// ServeConfig: everything `vigil serve` is told — the pipeline's configuration (PipelineConfig)
// and the HTTP front's: where it listens, request limits, workers, the request log, TLS and who
// may call what. Read from a YAML file and flags through one OptionSet (DeclareServeOptions), so
// every bad key or value is reported at once with file:line:column, and nothing starts on a
// configuration it cannot honour. Every key: docs/configuration.md.
//
//   listen: 127.0.0.1:8443
//   data_dir: state/
//   policy: policies/default.yaml
//   model: model.json                 # or {file: model.json | ref: <prefix>, required: true}
//   tls: {cert: tls/server.pem, key: tls/server.key}
//   drift: {short_window: 60/10, long_window: 300/60}
//   audit: {durable_ack: true, hash: sha256}
//
// Thread safety: value type.
#ifndef VIGIL_SERVER_SERVE_CONFIG_H_
#define VIGIL_SERVER_SERVE_CONFIG_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/engine/pipeline_config.h"

namespace vigil {
namespace config {
class OptionSet;
}  // namespace config

struct ServeLimits {
  size_t body_bytes = 64 << 10;
  size_t header_bytes = 8 << 10;
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds idle_timeout{60000};
  // A connection that has presented no valid credential yet (see max_unauthenticated_share)
  // must complete its next request head within this, from its accept (TLS handshake included)
  // or its last answer; else it is closed (408 when part of a request came). Authenticated
  // connections wait up to idle_timeout between requests.
  std::chrono::milliseconds header_timeout{5000};
  size_t max_connections = 1024;
  // Connections from one source address; beyond it, 503 too_many_connections and closed. A
  // gateway behind one address needs this at least its connection pool's size.
  size_t max_connections_per_client = 256;
  // The share of max_connections that connections without a valid credential may hold: the
  // rest is kept for authenticated clients. A new connection beyond it (or beyond
  // max_connections) closes the unauthenticated connection idle the longest, if there is one.
  double max_unauthenticated_share = 0.5;
  size_t batch_size = 1000;  // transactions per POST /v1/score/batch
};

// `tls:`: HTTPS. Without cert and key the server refuses to start unless `plaintext: true`.
struct ServeTlsConfig {
  std::string cert;
  std::string key;        // refused when its group or others may read it
  std::string client_ca;  // non-empty: mutual TLS, a client certificate is required
  std::string ciphers;    // TLS 1.2; empty: ECDHE key exchange with AES-GCM or ChaCha20
  std::string ciphersuites;  // TLS 1.3; empty: OpenSSL's default
  std::string min_version = "1.2";

  bool enabled() const { return !cert.empty() || !key.empty(); }
};

// `auth:`: who may call which endpoint (docs/security.md).
struct ServeAuthConfig {
  // "tokens": every endpoint but /healthz and /readyz needs a bearer token of the data dir
  // (or a client certificate listed in certificate_roles) whose role allows it; "none": no
  // checks (loopback demos and tests; said loudly at start).
  std::string mode = "tokens";
  // Client certificate subject (RFC 2253, as `openssl x509 -subject -nameopt RFC2253` prints
  // it) → role name; only under mutual TLS.
  std::vector<std::pair<std::string, std::string>> certificate_roles;
};

// Cluster mode (docs/cluster.md): with `nats` set, `vigil serve` runs as one node of the
// cluster `name` over those NATS JetStream servers instead of deciding on its own.
struct ServeClusterConfig {
  std::vector<std::string> nats;  // "nats://host:port" of any members; empty: one node alone
  std::string name = "main";      // the cluster: its log and buckets are named after it
  std::string node_id;            // this node, unique in the cluster ([A-Za-z0-9_-])
  int partitions = 64;            // fixed when the cluster is created
  int replicas = 3;               // JetStream replicas of the log and buckets: 1, 3 or 5
  std::chrono::milliseconds lease_ttl{3000};
  std::chrono::milliseconds answer_slack{1000};
  int max_batch = 256;  // payments per decision batch
  // Checkpoints of the applied state in the data dir, and shipping to the NATS servers.
  int checkpoint_every = 20'000;  // messages applied
  std::chrono::milliseconds checkpoint_interval{5000};
  std::chrono::milliseconds ship_interval{60'000};  // 0: never shipped

  bool enabled() const { return !nats.empty(); }
};

// The analysts' cases (docs/cases.md): how alerts group and how closings are checked.
struct ServeCasesConfig {
  bool enabled = true;
  // An alert joins its subject's unclosed case whose first payment is at most this before it.
  std::chrono::hours window{24 * 30};
  std::chrono::hours sla{24 * 5};    // a case unclosed for longer is overdue
  bool four_eyes_block = true;       // closing a case with a BLOCK needs a second analyst
  bool four_eyes_suspicious = true;  // closing as suspicious_reported needs a second analyst
  // The reporting entity in the report drafts (goAML rentity_id, rentity_branch).
  std::string report_entity_id, report_entity_branch;
  size_t attachment_bytes = size_t{4} << 20;  // the largest attachment (limits.body_bytes too)
};

struct ServeConfig : PipelineConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int io_threads = 2;
  ServeLimits limits;
  int worker_threads = 64;
  size_t worker_queue = 4096;
  // workers.max_queue_delay_ms: a request that finds the oldest waiting request queued for
  // longer is answered 503 overloaded at once (WorkerPoolOptions::max_queue_delay).
  std::chrono::milliseconds worker_max_queue_delay{50};
  std::string log_path;  // empty: stderr
  double log_sample_rate = 0.01;
  ServeTlsConfig tls;
  bool plaintext = false;  // serve plain HTTP (only when no tls is configured)
  ServeAuthConfig auth;
  ServeClusterConfig cluster;
  ServeCasesConfig cases;

  // Reads a YAML configuration ("file" names it in errors) over the defaults. Unknown keys are
  // errors (with the nearest known key), as are values out of range. Whether the whole is
  // complete and consistent is Validate's to say, once flags are merged too.
  static absl::StatusOr<ServeConfig> Parse(std::string_view yaml, std::string_view file);
  // Checks the combination: the pipeline's (PipelineConfig::Validate, a data dir required),
  // then TLS or plaintext, the auth settings, and in cluster mode the node's id.
  absl::Status Validate() const;
};

// Declares every option of `config` — the pipeline's (DeclarePipelineOptions) and the HTTP
// front's — in `set`, bound to its members (config must outlive set).
void DeclareServeOptions(ServeConfig* config, config::OptionSet* set);

// "host:port" (IPv4 dotted quad or a name; port 0..65535). Errors name the part that is wrong.
absl::Status ParseListen(std::string_view listen, std::string* host, uint16_t* port);

}  // namespace vigil

#endif  // VIGIL_SERVER_SERVE_CONFIG_H_
