// RunLoad: an HTTP/1.1 load generator for measuring a server's latency-throughput curve over
// loopback (what `vigil bench http` drives against vigil's HTTP server).
//
//   LoadOptions options;
//   options.port = 8080;
//   options.mode = LoadOptions::Mode::kOpen;
//   options.offered_rps = 20000;
//   VIGIL_ASSIGN_OR_RETURN(LoadResult r, RunLoad(options, [&](uint64_t i, LoadRequest* out) {
//     out->path = "/v1/screen";
//     out->body = bodies[i % bodies.size()];
//   }));
//   r.latency->Percentile(99);
//
// Connections are keep-alive, opened before the clock starts, and carry one request at a time
// (no pipelining). Two ways to offer load:
//
//   Closed loop (kClosed): each connection sends its next request as soon as the previous
//   response arrives; latency is response complete - send. Throughput adapts to the server, so
//   this measures capacity at a given concurrency, not latency at a given rate.
//
//   Open loop (kOpen): arrival k is scheduled at t0 + k / offered_rps whether or not the server
//   keeps up; an arrival that finds no free connection waits in a FIFO backlog, and its latency
//   is measured from its scheduled time (coordinated-omission correct: a saturated server shows
//   latency growing with the backlog, not the flattering service time of the requests that got
//   through). Late wakeups of the generator itself also count as latency, which errs on the
//   honest side.
//
// The run: warmup, then the measurement window of `duration`, which ends early when
// max_requests requests have been sent in it and all of them have finished. Only requests sent
// (closed loop) or scheduled (open loop) inside the window count; responses arriving after the
// window ends are not read. Requests still in flight when it ends are in `sent` but in none of
// the outcome counters, so
//   sent = completed + timeouts + (requests failed on their connection) + (in flight at the end).
//
// Timing: event loops on epoll; deadlines (the next arrival, response timeouts, reconnect
// backoff, the end of the window) go into one timerfd per loop, armed with absolute
// CLOCK_MONOTONIC nanoseconds. epoll_wait's millisecond timeout would be too coarse at 20k
// arrivals per second (50 us apart); at each wakeup the loop sends every arrival that is due,
// so the arrival count stays exact even when a wakeup is late.
//
// Robustness: whatever the server does, memory stays bounded (max_response_bytes per
// connection, max_backlog arrivals) and nothing crashes: malformed responses, resets and
// refused reconnects are counted, the connection is reopened (with backoff after repeated
// failures), and the run goes on.
//
// TLS (LoadOptions::tls): HTTPS, optionally with a client certificate (mutual TLS). One
// OpenSSL context per run, one TLS session per connection over the same non-blocking sockets.
// The initial handshakes are done with the initial connects, before the clock starts; a
// reconnect's handshake is driven by the event loop, bounded by response_timeout together with
// its TCP connect, and resumes the connection's previous TLS session when the server allows it.
// A failed initial handshake fails the run (kUnavailable with the OpenSSL reason, like a failed
// initial connect); a failed reconnect handshake is a connection error ("TLS handshake: <reason>")
// and the connection backs off like after a refused connect. Under TLS 1.3 a server that
// rejects the client certificate does so after the client's side of the handshake completed:
// that shows as a connection error on the first request ("TLS read: ..."), not at the handshake.
// Plain HTTP runs take no TLS code path beyond one predictable branch per send and per event.
//
// Thread safety: RunLoad is safe to call concurrently (runs share nothing); it blocks the
// calling thread for the run and starts `threads` threads of its own.
#ifndef VIGIL_LOADGEN_HTTP_LOAD_H_
#define VIGIL_LOADGEN_HTTP_LOAD_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vigil/metrics/latency_histogram.h"

namespace vigil {

// One request, as the RequestSource fills it. The generator writes the request line, Host
// (unless `headers` has one), Content-Type (when the body is not empty and content_type is not),
// and Content-Length (when the body is not empty, or for POST, PUT and PATCH).
struct LoadRequest {
  std::string method = "POST";  // an HTTP token; HEAD responses are read without a body
  std::string path = "/";       // origin form: starts with '/', no spaces or control characters
  std::string content_type = "application/json";
  std::string body;
  // Extra headers, written in order. Content-Length, Transfer-Encoding and Connection are the
  // generator's and are rejected here; names are tokens, values have no CR, LF or NUL.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Fills "*out" (default-constructed on each call) with request i, i = 0, 1, 2, ... counting
// every request of the run, warmup included; each i is used exactly once. With threads == 1 it
// is called from one thread at a time, in increasing i, in send order. With threads > 1 it is
// called concurrently from the event-loop threads and must be safe for that; i then comes from
// a shared counter, so a thread's calls are in increasing i but calls of different threads
// interleave. It runs on the event loop just before the send: a slow source slows the
// generator (and, in open loop, shows up as latency). It must not throw. A request that fails
// the LoadRequest rules above ends the run with kInvalidArgument.
using RequestSource = std::function<void(uint64_t i, LoadRequest* out)>;

// HTTPS for RunLoad. With enabled false every other field must keep its default.
struct LoadTls {
  // Off: plain HTTP/1.1 over TCP.
  bool enabled = false;
  // PEM file of the CAs that may issue the server's certificate. "": the system's default trust
  // store (what `openssl version -d` names), which a test CA is not in.
  std::string ca_file;
  // Mutual TLS: the client certificate (PEM, may hold the chain after it) and its unencrypted
  // PEM private key, presented when the server asks for one. Both or neither; the key must match
  // the certificate. Read once, at the start of the run.
  std::string cert_file;
  std::string key_file;
  // The name sent as SNI and checked against the server certificate's subjectAltName. "": the
  // LoadOptions::host. An IP address is checked against the certificate's IP entries and not
  // sent as SNI (RFC 6066 allows only host names there).
  std::string server_name;
  // false: accept any server certificate (no chain or name check). For measuring only, never
  // for a server whose identity matters.
  bool verify_peer = true;
};

struct LoadOptions {
  enum class Mode { kClosed, kOpen };

  // The server: a numeric address or a name (resolved once, first address used).
  std::string host = "127.0.0.1";
  // Required (1..65535).
  uint16_t port = 0;
  // Keep-alive connections, all opened before the run starts (>= 1). In closed loop this is the
  // concurrency; in open loop it caps the requests in flight (arrivals beyond wait in the
  // backlog).
  int connections = 16;
  // Event-loop threads (>= 1); connection c belongs to thread c % threads. More than
  // `connections` is treated as `connections`. One thread sustains tens of thousands of small
  // requests per second on loopback; more help only when the generator, not the server, is the
  // bottleneck (and then they compete with the server for cores).
  int threads = 1;
  Mode mode = Mode::kClosed;
  // Open loop: arrivals per second, evenly spaced (constant rate); required > 0 for kOpen,
  // ignored for kClosed. With several threads the arrivals are interleaved among them so the
  // merged stream keeps the even spacing.
  double offered_rps = 0;
  // Length of the measurement window after warmup (> 0).
  std::chrono::milliseconds duration{5000};
  // Requests sent (or scheduled) during warmup are not counted (>= 0). Warmup fills the
  // server's caches and connection state so the window measures the steady state.
  std::chrono::milliseconds warmup{0};
  // 0: the window is bounded by `duration` only. Otherwise the window also ends once this many
  // requests were sent (open loop: scheduled) in it and all of them finished.
  uint64_t max_requests = 0;
  // A response not complete this long after its send counts as a timeout; its connection is
  // closed and reopened (> 0). Also bounds each connect: a reconnect's or an initial connect's
  // TCP handshake together with its TLS handshake.
  std::chrono::milliseconds response_timeout{10000};
  // Open loop: at most this many arrivals wait for a free connection (split evenly among the
  // threads); arrivals beyond it are dropped and counted as `dropped`. Bounds memory when the
  // server cannot keep up; 0 drops every arrival that finds no free connection.
  size_t max_backlog = 100000;
  // A response (head and body) larger than this is a connection error. Bounds the memory held
  // per connection: connections * max_response_bytes in the worst case (>= 1024).
  size_t max_response_bytes = size_t{8} << 20;
  // HTTPS and mutual TLS; off by default. TLS 1.2 is the oldest version offered.
  LoadTls tls;
};

// "closed" or "open".
absl::string_view LoadModeName(LoadOptions::Mode mode);

struct LoadResult {
  LoadOptions::Mode mode = LoadOptions::Mode::kClosed;
  double offered_rps = 0;   // open loop: LoadOptions::offered_rps; closed loop: 0
  double achieved_rps = 0;  // completed / seconds
  double seconds = 0;       // length of the measurement window

  uint64_t sent = 0;               // requests sent in the window
  uint64_t completed = 0;          // complete responses to them, any status
  uint64_t ok = 0;                 // 2xx
  uint64_t shed = 0;               // 503 (vigil's load shedding)
  uint64_t degraded = 0;           // 2xx whose body contains "degraded":true (also counted in ok)
  uint64_t other_status = 0;       // neither 2xx nor 503
  uint64_t timeouts = 0;           // no complete response within response_timeout
  uint64_t connection_errors = 0;  // failed connects, resets, malformed or truncated responses,
                                   // bytes the server sent with no request outstanding
  uint64_t dropped = 0;            // open loop: arrivals dropped because the backlog was full
  uint64_t reconnects = 0;         // connections reopened (Connection: close, server close, error)
  // TLS runs: handshakes completed, the initial one of every connection (before the window)
  // plus those of reconnects in the window; and how many of these resumed the connection's
  // previous session (an abbreviated handshake). 0 without TLS.
  uint64_t tls_handshakes = 0;
  uint64_t tls_resumed = 0;
  std::map<int, uint64_t> by_status;  // completed responses by status code
  // connection_errors by reason ("connect: Connection refused", "chunked transfer encoding is
  // not supported", ...). The first 16 distinct reasons are kept; later new ones are counted
  // under "other".
  std::map<std::string, uint64_t> errors_by_reason;
  // Latency of every completed response in the window, and of the 2xx ones. Never null.
  std::unique_ptr<LatencyHistogram> latency;
  std::unique_ptr<LatencyHistogram> ok_latency;
};

// Runs one load test against options.host:options.port and returns what it measured.
// Errors: kInvalidArgument naming the field for bad options (connections < 1, threads < 1,
// port 0, kOpen with offered_rps not > 0, duration <= 0, warmup < 0, response_timeout <= 0,
// max_response_bytes < 1024, an unresolvable host; "tls.<field>" for a TLS field set while
// tls.enabled is false, an unreadable or unusable tls.ca_file, tls.cert_file or tls.key_file,
// a key that does not match the certificate, one of cert_file and key_file without the other,
// an invalid tls.server_name) or for an invalid request from "source" (naming its i);
// kUnavailable with host:port and the errno text when a connection cannot be opened at the
// start, or with the OpenSSL reason when its TLS handshake fails or times out ("certificate
// verify failed: hostname mismatch"); kInternal when the kernel refuses an
// epoll/timerfd/eventfd/thread resource or OpenSSL cannot allocate. Problems during the run
// (refused reconnects, resets, bad responses) are counted in the result, not returned. "source"
// must remain live until RunLoad returns.
absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, const RequestSource& source);

}  // namespace vigil

#endif  // VIGIL_LOADGEN_HTTP_LOAD_H_
