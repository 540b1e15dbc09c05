// ServeConfig: everything `vigil serve` is told, from its flags or a YAML file with the same
// keys (below), checked as a whole: every bad key or value is reported at once with
// file:line:column, and nothing starts on a configuration it cannot honour.
//
//   listen: 127.0.0.1:8080        # host:port; port 0 picks a free one
//   data_dir: state/
//   policy: policies/default.yaml # or the data dir's active version when absent
//   model: model.json             # or model_ref: <sha256 prefix> from the data dir's registry;
//                                 # or {file: model.json | ref: <prefix>, required: true}
//   io_threads: 2
//   score_budget_ms: 200          # SLA budget of the model path; then rules-only
//   idempotency_capacity: 100000
//   limits: {body_bytes: 65536, header_bytes: 8192, request_timeout_ms: 5000,
//            idle_timeout_ms: 60000, header_timeout_ms: 5000, max_connections: 1024,
//            max_connections_per_client: 256, max_unauthenticated_share: 0.5, batch_size: 1000}
//   batcher: {preset: fast}       # fast | immediate | compliance
//   breaker: {failure_threshold: 5, budget_ms: 2, open_ms: 1000}
//   gpu:                          # the CUDA backend behind the batcher (docs/serve.md, The GPU)
//     enabled: false              # default: CPU only; true: the start fails without a usable GPU
//     device: 0                   # CUDA device ordinal
//     min_rows: {P0: never, P1: 16, P2: 16}  # batches of at least this many rows go to the GPU
//     timeout_ms: 5               # the longest a batch spends on the GPU before the CPU scores it
//   fx_rates: data/fx_rates.csv   # default: data/fx_rates.csv here, else beside the binary
//   lists: policies/lists         # default: lists/ beside the policy file
//   workers: {threads: 64, queue: 4096, max_queue_delay_ms: 50}  # requests that may wait
//   log: {path: "", sample_rate: 0.01}   # JSON lines; "" = stderr
//   drift:                        # the drift monitor of live decisions (docs/serve.md, Drift)
//     profile: model/reference_profile.json  # default: reference_profile.json beside `model`
//     measured_null: model/drift_null.json    # default: drift_null.json beside the profile
//     calibration: null           # null | raw-preset
//     freeze: true                # L3 freezes the model: rules-only, degraded decisions
//     false_alarm_days: 30        # expected days between false L2 alarms of one subject
//     short_window: 60/10         # SIZE/SLIDE in seconds of event time
//     long_window: 300/60
//     min_rows: 50                # a window with fewer rows is not evaluated
//     queue: 65536                # rows waiting for the monitor; beyond it they are dropped
//   audit:                        # the decision log (docs/audit.md)
//     durable_ack: true           # answer a decision only once its record is durable
//     signing_key: keys/audit.pem # Ed25519 or SM2 PEM; default <data_dir>/audit_signing_key.pem
//     hash: sha256                # sha256 | sm3, for a new log (an existing one keeps its own)
//     tree_head_every: 10000      # sign a tree head every N records ...
//     tree_head_interval_ms: 1000 # ... or this often while the log grows
//     group_max_records: 16384    # records per group commit (one fsync)
//     group_max_delay_us: 0       # wait this long for more records before a commit
//     queue: 262144               # records waiting to be written; beyond it: 503
//     max_waiting: 16384          # decisions waiting for their durable record; beyond: 503
//     max_wait_ms: 50             # the oldest has waited longer: new requests get 503
//   screening:                    # watchlist screening of every decision (docs/screening.md)
//     lists: [lists/sdn, lists/pep.csv]  # list files (vigil's format) or OFAC folders
//     reload_seconds: 30          # check the lists for changes this often; 0: never
//     min_score: 0.80             # optional: also find hits down to this score (for rules)
//   tls:                          # HTTPS (docs/security.md); required unless plaintext: true
//     cert: tls/server.pem        # the server's certificate chain
//     key: tls/server.key         # its private key, mode 0600
//     client_ca: tls/clients.pem  # mutual TLS: clients must present a certificate of this CA
//     ciphers: ECDHE+AESGCM       # TLS 1.2 cipher list (OpenSSL syntax); default: ECDHE, AEAD
//     ciphersuites: TLS_AES_256_GCM_SHA384  # TLS 1.3 suites; default: OpenSSL's
//     min_version: "1.2"          # "1.2" or "1.3"
//   plaintext: false              # plain HTTP: only when asked (loopback demos, behind a TLS proxy)
//   auth:                         # who may call what (docs/security.md)
//     mode: tokens                # tokens: Authorization: Bearer (vigil token create) | none
//     certificate_roles:          # mutual TLS: a client certificate's subject grants a role
//       "CN=payments-gw,O=Example Bank": scorer
//   state:
//     pseudonym_key: keys/state.key  # HMAC key of the account ids stored in the state;
//                                    # default <data_dir>/state_pseudonym.key, created
//     pseudonym_hash: hmac-sha256    # or hmac-sm3; a state made with another key or hash is refused
//
// The audit section also takes record_kek (a public key, RSA of 2048 bits or more, or SM2: the
// names, accounts and remittance text of its records are then sealed under data keys it
// wraps) and record_cipher (aes-256-gcm, or sm4-ctr-hmac-sm3 for the national profile).
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
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/drift/drift_config.h"

namespace vigil {

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

// `drift:`: what the drift monitor of `vigil serve` watches with, and when it alarms.
struct ServeDriftConfig {
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
struct ServeAuditConfig {
  bool durable_ack = true;
  std::string signing_key;  // empty: DefaultSigningKeyPath(data_dir), created when missing
  std::string hash = "sha256";
  uint64_t tree_head_every = 10'000;
  std::chrono::milliseconds tree_head_interval{1'000};
  size_t group_max_records = 16'384;
  std::chrono::microseconds group_max_delay{0};
  size_t queue = 262'144;
  // audit.max_waiting: decisions that may wait at once for their records to become durable
  // (AuditTrailOptions::max_waiting); beyond it a decision is answered 503 overloaded, its row
  // kept for the retry. 0: unbounded.
  size_t max_waiting = 16'384;
  // audit.max_wait_ms: while the oldest decision waiting for its durable record has waited
  // longer than this, new scoring requests are refused 503 overloaded on arrival
  // (AuditTrailOptions::max_wait), so a slow disk or a starved log sheds the excess instead
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

// `state:`: how the accounts' feature state is stored.
struct ServeStateConfig {
  // The HMAC key that turns account ids into the pseudonyms the state stores; empty:
  // <data_dir>/state_pseudonym.key, created (32 random bytes, mode 0600) when missing.
  std::string pseudonym_key;
  std::string pseudonym_hash = "hmac-sha256";  // or "hmac-sm3"
};

// `screening:`: the watchlists every decision is screened against (docs/screening.md). No
// lists: no screening (decisions then carry no `screening` object).
struct ServeScreeningConfig {
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
struct ServeGpuConfig {
  bool enabled = false;
  int device = 0;  // gpu.device: the CUDA device ordinal
  // gpu.min_rows.P0, .P1, .P2: batches of that class with at least this many rows go to the
  // GPU; BackendRouterConfig::kNever ("never" in the file) keeps the class on the CPU.
  std::array<size_t, 3> min_rows = BackendRouterConfig{}.gpu_min_rows;
  // gpu.timeout_ms: the longest a batch spends on the GPU (less when its deadline comes
  // sooner) before the CPU scores it instead.
  std::chrono::microseconds timeout = BackendRouterConfig{}.gpu_timeout;
};

struct ServeConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string data_dir;
  std::string policy;     // empty: the data dir's active version
  std::string model;      // a model file; or
  std::string model_ref;  // a model in the data dir's registry
  // model.required: without an active champion the server is not ready (503 model_required)
  // and decides nothing, instead of deciding on the rules alone. Default false.
  bool model_required = false;
  int io_threads = 2;
  std::chrono::milliseconds score_budget{200};
  size_t idempotency_capacity = 100'000;
  // max_future_skew_seconds: a transaction dated further ahead of the server's clock is
  // refused, 422 event_in_future (ScoreServiceOptions::max_future_skew; docs/serve.md).
  std::chrono::seconds max_future_skew{300};
  ServeLimits limits;
  std::string batcher_preset = "fast";
  BatchPolicyConfig batcher = BatchPolicyConfig::Fast();
  CircuitBreakerConfig breaker;
  ServeGpuConfig gpu;
  std::string fx_rates;
  std::string lists;
  int worker_threads = 64;
  size_t worker_queue = 4096;
  // workers.max_queue_delay_ms: a request that finds the oldest waiting request queued for
  // longer is answered 503 overloaded at once (WorkerPoolOptions::max_queue_delay).
  std::chrono::milliseconds worker_max_queue_delay{50};
  std::string log_path;  // empty: stderr
  double log_sample_rate = 0.01;
  ServeDriftConfig drift;
  ServeAuditConfig audit;
  ServeScreeningConfig screening;
  ServeTlsConfig tls;
  bool plaintext = false;  // serve plain HTTP (only when no tls is configured)
  ServeAuthConfig auth;
  ServeStateConfig state;

  // Reads a YAML configuration ("file" names it in errors). Unknown keys are errors (with the
  // nearest known key), as are values out of range. Whether the whole is complete and
  // consistent is Validate's to say, after flags are merged (`vigil serve --config F --flag`).
  static absl::StatusOr<ServeConfig> Parse(std::string_view yaml, std::string_view file);
  // Checks the combination: a data dir; not both model and model_ref; positive limits; the
  // drift, audit, screening and gpu settings (errors name the drift.*, audit.*, screening.* or
  // gpu.* key). Whether a GPU is there is VigilServer::Start's to find out.
  absl::Status Validate() const;
};

// The batcher presets by name: "fast", "immediate", "compliance".
absl::StatusOr<BatchPolicyConfig> BatcherPreset(std::string_view name);

// "host:port" (IPv4 dotted quad or a name; port 0..65535). Errors name the part that is wrong.
absl::Status ParseListen(std::string_view listen, std::string* host, uint16_t* port);

}  // namespace vigil

#endif  // VIGIL_SERVER_SERVE_CONFIG_H_
