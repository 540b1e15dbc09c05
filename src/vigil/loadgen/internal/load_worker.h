// The event loop of RunLoad (http_load.h): one Worker per load thread, each with its share of
// the connections, on epoll and a timerfd. RunLoad opens the connections, starts the workers and
// merges their Stats; this file is the part that runs during the window.
//
// The TLS path of the worker (load_worker_tls.cc) is taken when the run has a TlsClient; a plain
// run pays one predictable branch per send and per socket event for it.
//
// Private to the loadgen module. Thread safety: a Worker is externally synchronized (it runs
// on one thread); Shared is what the workers of one run share, with its contract per field.
#ifndef VIGIL_LOADGEN_INTERNAL_LOAD_WORKER_H_
#define VIGIL_LOADGEN_INTERNAL_LOAD_WORKER_H_

#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "vigil/loadgen/http_load.h"
#include "vigil/loadgen/internal/http_codec.h"
#include "vigil/loadgen/internal/socket.h"
#include "vigil/loadgen/internal/tls_client.h"
#include "vigil/metrics/latency_histogram.h"

namespace vigil::loadgen_internal {

// The generator reads steady_clock directly, not an injected vigil::Clock: its deadlines are
// armed on a CLOCK_MONOTONIC timerfd, which is the clock steady_clock reads on Linux, and a fake
// clock could not drive the kernel's timer. Its tests run against a real server instead.
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

// Bytes asked of one recv or SSL_read.
inline constexpr size_t kReadChunk = 64 << 10;

// Adds "n" errors of "reason" to "*reasons": the first 16 distinct reasons are kept, later new
// ones are counted under "other".
void AddReason(std::map<std::string, uint64_t>* reasons, absl::string_view reason, uint64_t n);

// State shared by the event-loop threads of one run.
struct Shared {
  // Constant once the threads start.
  const LoadOptions* options = nullptr;
  const RequestSource* source = nullptr;
  Endpoint endpoint;
  const TlsClient* tls = nullptr;  // set when options->tls.enabled
  bool open = false;
  int threads = 1;
  TimePoint start, measure, end;        // run start, window start, window end by duration
  double ns_per_arrival = 0;            // open loop
  uint64_t first_measured_arrival = 0;  // open loop: the first scheduled at or after `measure`
  size_t backlog_per_thread = 0;        // open loop
  Fd wake;                              // eventfd, written when the run is aborted

  std::atomic<uint64_t> next_index{0};       // the RequestSource's i
  std::atomic<uint64_t> measured_claims{0};  // closed loop: sends claimed against max_requests
  std::atomic<bool> aborted{false};

  absl::Mutex mu;
  absl::Status error ABSL_GUARDED_BY(mu);

  TimePoint Scheduled(uint64_t arrival) const {
    return start +
           std::chrono::nanoseconds(std::llround(static_cast<double>(arrival) * ns_per_arrival));
  }

  // Ends the run with "status" (the first one wins) and wakes every event loop.
  void Abort(absl::Status status) {
    {
      absl::MutexLock lock(&mu);
      if (error.ok()) error = std::move(status);
    }
    aborted.store(true, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(wake.get(), &one, sizeof(one));
  }
};

struct Stats {
  uint64_t sent = 0, completed = 0, ok = 0, shed = 0, degraded = 0, other_status = 0, timeouts = 0,
           connection_errors = 0, dropped = 0, reconnects = 0, tls_handshakes = 0, tls_resumed = 0;
  std::vector<uint64_t> by_status = std::vector<uint64_t>(1000);  // the parser yields 100..999
  std::map<std::string, uint64_t> errors;
  LatencyHistogram latency;
  LatencyHistogram ok_latency;
};

// A connection at the start: connected and, with TLS, its handshake done.
struct OpenSocket {
  Fd fd;
  SslPtr ssl;
};

struct Conn {
  // kHandshaking: TCP is up, the TLS handshake is not done; `since` is still the connect start.
  enum class State { kConnecting, kHandshaking, kIdle, kBusy, kBackoff };

  Conn(int index_in_worker, size_t max_response_bytes)
      : index(index_in_worker), parser(max_response_bytes) {}

  int index;
  Fd fd;
  // TLS only. `session`: the last session the server issued on this connection, resumed by the
  // next SSL; `ssl` stores new ones there (AttachSessionSlot), so it is declared after it (and
  // freed first). `ssl` is freed before `fd` is closed.
  SslSessionPtr session;
  SslPtr ssl;
  bool tls_broken = false;  // a fatal TLS error: no close_notify may be sent
  uint32_t generation = 0;  // in the epoll tag; bumped per socket, so stale events are ignored
  uint32_t events = 0;      // registered epoll mask; 0 when not registered
  State state = State::kIdle;
  bool listed_idle = false;  // in Worker::idle_
  bool fresh = true;         // no response completed on this socket yet
  int failures = 0;          // consecutive failures, for the backoff
  // kBusy: send time; kConnecting and kHandshaking: connect start; kBackoff: retry time.
  TimePoint since;
  TimePoint origin;       // kBusy: latency origin (closed loop: send time; open: scheduled time)
  bool measured = false;  // kBusy: the request is in the measurement window
  std::string out;
  size_t out_done = 0;
  std::string in;
  HttpResponseParser parser;
};

// One event loop with its share of the connections. Runs on one thread; externally
// synchronized, except for what it touches in Shared.
class Worker {
 public:
  // "*shared" must outlive the Worker.
  Worker(Shared* shared, int index, std::vector<OpenSocket> sockets);

  absl::Status Init();
  // Runs until the window ends, the run is aborted, or (with max_requests) its work is done.
  void Run();

  const Stats& stats() const { return stats_; }
  TimePoint finished() const { return finished_; }

 private:
  void HandleEvent(const epoll_event& event);
  void Receive(Conn& c);
  void ServerClosed(Conn& c);
  bool Parse(Conn& c, bool eof);
  void Complete(Conn& c);
  bool EndRequest(Conn& c);
  void Transmit(Conn& c);
  bool Send(Conn& c, TimePoint origin, bool measured);
  void DispatchClosed();
  void DispatchBacklog();
  void ScheduleArrivals(TimePoint now);
  void ScanDeadlines(TimePoint now);
  void RetryConnects(TimePoint now);
  void ConnectionError(Conn& c, absl::string_view reason);
  void Reopen(Conn& c);
  void Close(Conn& c);
  void Connect(Conn& c);
  void FinishConnect(Conn& c);
  void Connected(Conn& c);
  void ConnectFailed(Conn& c, absl::string_view reason);
  void EnterBackoff(Conn& c, TimePoint retry);
  bool Watch(Conn& c, uint32_t events);
  void MakeIdle(Conn& c);
  Conn* PopIdle();
  void CountError(absl::string_view reason);
  bool Done() const;
  TimePoint NextDeadline() const;
  void ArmTimer(TimePoint deadline);

  // The TLS path (load_worker_tls.cc), taken when tls_.
  void HandleTlsEvent(Conn& c, uint32_t generation);
  void ReceiveTls(Conn& c);
  void TransmitTls(Conn& c);
  void StartTls(Conn& c);
  void Handshake(Conn& c);
  void CloseTls(Conn& c);

  Shared* const shared_;
  const LoadOptions& options_;
  const int index_;
  const bool tls_;  // shared_->tls != nullptr
  Fd epoll_;
  Fd timer_;
  std::vector<Conn> conns_;       // never resized after construction
  std::vector<int> idle_;         // may hold connections no longer idle; PopIdle skips them
  std::deque<uint64_t> backlog_;  // open loop: arrivals waiting for a connection, oldest first
  uint64_t next_arrival_ = 0;     // open loop: this thread's next arrival, counted per thread
  TimePoint next_arrival_at_;
  bool arrivals_done_ = false;    // open loop: no more arrivals in the window
  bool arrivals_capped_ = false;  // ... because max_requests were scheduled
  bool claims_done_ = false;      // closed loop: max_requests were claimed
  uint64_t measured_in_flight_ = 0;
  TimePoint next_scan_;
  int backoff_count_ = 0;
  TimePoint next_retry_ = TimePoint::max();
  TimePoint armed_ = TimePoint::max();  // max: the timer is not armed
  TimePoint finished_;
  LoadRequest request_;
  std::unique_ptr<char[]> scratch_;
  Stats stats_;
};

}  // namespace vigil::loadgen_internal

#endif  // VIGIL_LOADGEN_INTERNAL_LOAD_WORKER_H_
