// RequestLog: vigil's structured log of HTTP requests and service events, one JSON object per
// line, written through spdlog to a file or stderr:
//
//   {"ts":"2026-11-30T12:34:56.123456Z","level":"warn","msg":"request","method":"POST",
//    "route":"/v1/score","status":200,"latency_us":1830,"trace_id":"4bf9...4736",
//    "action":"REVIEW","degraded":true,"degraded_reason":"model_timeout"}
//
// (one line in the log). Requests that went wrong are always logged: status >= 500 at "error",
// other status >= 400 and degraded answers (rules-only fallback, ...) at "warn". Of the rest,
// a share (sample_rate) is logged at "info" so that a busy server's log stays small. Events that
// are not requests (startup, breaker state changes, policy and model activations) are always
// logged.
//
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<RequestLog> log,
//                          RequestLog::Create({.sample_rate = 0.01, .path = "logs/vigil.jsonl"}));
//   log->Event("info", "listening", {{"address", "127.0.0.1:8080"}});
//   ...
//   log->Log({.method = "POST", .route = "/v1/score", .trace_id = trace_id, .status = 200,
//             .latency = elapsed});
//
// Requests shed because the server is overloaded (503 overloaded, too_many_connections) are
// not logged one by one: a flood of them would cost the server the time it lacks and bury the
// log. Shed() counts them, and a "requests shed" line at "warn" says how many, by where they
// were shed, at most once per shed_interval (the first of a burst at once).
//
// Sampling is decided by the trace id when there is one, so that every service that samples
// the same trace with this function agrees on it at the same rate, and the logged requests of
// one trace can be followed across them (SampledByTraceId below gives the exact function).
// Requests without a trace id are sampled by a counter: exactly every (1 / sample_rate)-th one
// on average, in arrival order.
//
// Lines are built outside any lock; writing one takes the sink's mutex (spdlog's _mt sinks),
// so concurrent lines never interleave. A file sink is buffered (stdio) and flushed for every
// "warn" or worse line, by Flush() and on destruction; stderr is flushed after every line. A
// write error is reported by spdlog's error handler (to stderr, rate-limited) and never reaches
// the caller: the request path does not fail for want of a log line.
//
// Each RequestLog has its own spdlog logger, not registered in spdlog's global registry, so any
// number of them coexist in one process (tests, or a server and a CLI in one binary).
//
// Thread safety: safe for concurrent use.
#ifndef VIGIL_SERVER_REQUEST_LOG_H_
#define VIGIL_SERVER_REQUEST_LOG_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/clock.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace vigil {

struct RequestLogOptions {
  // Share of successful (status < 400), non-degraded requests logged, in [0, 1]. 0.01 keeps one
  // line per hundred successful requests: at 10,000 requests/s about 100 lines/s, which a disk
  // and a log shipper take without noticing; 1 logs everything (debugging, low traffic), 0 only
  // failures, degradations and events.
  double sample_rate = 0.01;
  // File the log is appended to, created (with its directory) if missing. Empty: stderr.
  std::string path;
  // Source of the "ts" field. Must outlive the RequestLog. nullptr: RealClock().
  const Clock* clock = nullptr;
  // At most one "requests shed" line per this interval (see Shed()).
  std::chrono::milliseconds shed_interval{10'000};
};

// One request, as the server saw it. The views must stay valid only during the Log() call.
// Empty strings are left out of the line.
struct RequestLogEntry {
  std::string_view method;               // "POST"
  std::string_view route;                // the matched route: "/v1/score"
  std::string_view target;               // the request target as sent, query included
  std::string_view remote;               // the peer, "203.0.113.9:51234"
  std::string_view trace_id;             // TraceContext::TraceIdHex() of the request's trace
  std::string_view transaction_id;       // the screened transaction, when there was one
  std::string_view action;               // the decision: "ALLOW", "REVIEW", "BLOCK"
  std::string_view degraded_reason;      // why the answer was degraded: "model_timeout"
  std::string_view error_code;           // the error's status code name: "INVALID_ARGUMENT"
  std::string_view error_message;        // the error's message as sent to the client
  std::string_view actor;                // who asked: "tls:<subject>", "token:<id>"
  std::string_view token_id;             // a refused request's token id (never the secret)
  // Not empty: the request was shed for overload there (RequestLog::Shed): counted, and told
  // in the periodic "requests shed" line instead of a line of its own.
  std::string_view shed;
  int status = 0;                        // the HTTP status sent
  bool degraded = false;                 // answered in a degraded mode (e.g. rules only)
  std::chrono::microseconds latency{0};  // from the request's first byte to the response
};

class RequestLog {
 public:
  // Errors: kInvalidArgument for a sample_rate outside [0, 1] (or NaN); when the file cannot be
  // opened for appending, the error of the failed open (kPermissionDenied, kNotFound,
  // kFailedPrecondition for a directory, ...) with a message naming the path.
  static absl::StatusOr<std::unique_ptr<RequestLog>> Create(RequestLogOptions options);

  // Flushes.
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Logs the entry with "msg":"request" if it went wrong (always; see the file comment) or is
  // sampled: status >= 500 at "error", status >= 400 or degraded at "warn", else at "info" when
  // sampled: by SampledByTraceId(e.trace_id, sample_rate) when the trace id is not empty, else
  // by a counter. Fields, in this order when not empty: method, route, target, remote, status,
  // latency_us, trace_id, transaction_id, action, degraded (true; left out when false),
  // degraded_reason, error_code, error_message. "status" and "latency_us" are always written.
  // An entry with "shed" set goes to Shed(e.shed) instead.
  void Log(const RequestLogEntry& e);

  // Logs an event that is not a request, always: {"ts":...,"level":<level>,"msg":<message>,
  // <key>:<value>...}, every value a JSON string. "level" should be one of "debug", "info",
  // "warn", "error" (another string is written as given and flushed as "info" is). Keys should
  // be distinct; a key "ts", "level" or "msg" is written as "field_ts", "field_level",
  // "field_msg" so that it cannot shadow the line's own.
  void Event(std::string_view level, std::string_view message,
             const std::vector<std::pair<std::string, std::string>>& fields = {});

  // Counts a request shed for overload ("where": "connections", "workers", "budget",
  // "batcher", "audit"), instead of a line of its own. When no "requests shed" line was written
  // in the last shed_interval, writes one now: {"level":"warn","msg":"requests shed",
  // "count":"N","interval_ms":"...","<where>":"n",...} with the sheds counted since the last.
  void Shed(std::string_view where);
  // Writes the pending "requests shed" line if there are sheds not yet reported and the
  // interval has passed (the server calls this periodically, so the end of a burst is told).
  void ReportShed();
  // Sheds counted by Shed(), all told.
  uint64_t shed() const { return shed_.load(std::memory_order_relaxed); }

  // Lines handed to the sink, requests and events (a line the sink then failed to write counts
  // too: spdlog reports it, see the file comment).
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  // Successful, non-degraded requests left out by sampling.
  uint64_t sampled_out() const { return sampled_out_.load(std::memory_order_relaxed); }

  // Writes buffered lines through to the file.
  void Flush();

  // The sampling decision for a request of trace "trace_id" at "sample_rate": true iff
  //   (fmix64(fnv1a64(trace_id)) >> 11) * 2^-53 < sample_rate,
  // over the bytes of trace_id as given (normally the 32 lowercase hex digits), where fnv1a64 is
  // 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) and fmix64 is
  // MurmurHash3's 64-bit finalizer. Stable across processes, builds and platforms, so services
  // that implement the same formula agree; and a trace sampled at one rate is sampled at every
  // higher rate. The finalizer makes the decision uniform even for trace ids that are not
  // random (sequential ids from a test client, say).
  static bool SampledByTraceId(std::string_view trace_id, double sample_rate);

 private:
  RequestLog(const RequestLogOptions& options, std::shared_ptr<spdlog::logger> logger);

  // Appends {"ts":"...","level":"...","msg":"..." (no closing brace) to "*line".
  void AppendHead(std::string_view level, std::string_view message, std::string* line) const;
  // Hands "line" to the logger at the priority of "level" and counts it.
  void Write(std::string_view level, std::string_view line);

  // Constant after construction.
  const double sample_rate_;
  const Clock& clock_;
  const std::shared_ptr<spdlog::logger> logger_;

  // Takes the pending shed summary as the fields of its line, when one is due.
  bool TakeShedSummary(std::vector<std::pair<std::string, std::string>>* fields)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shed_mu_);

  const std::chrono::milliseconds shed_interval_;
  absl::Mutex shed_mu_;
  std::vector<std::pair<std::string, uint64_t>> shed_pending_ ABSL_GUARDED_BY(shed_mu_);
  uint64_t shed_pending_total_ ABSL_GUARDED_BY(shed_mu_) = 0;
  std::optional<UtcTime> shed_logged_at_ ABSL_GUARDED_BY(shed_mu_);
  std::atomic<uint64_t> shed_{0};

  std::atomic<uint64_t> untraced_requests_{0};  // successful, non-degraded, without trace id
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> sampled_out_{0};
};

}  // namespace vigil

#endif  // VIGIL_SERVER_REQUEST_LOG_H_
