#include "vigil/loadgen/http_load.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <deque>
#include <system_error>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/status_macros.h"
#include "vigil/loadgen/internal/http_codec.h"
#include "vigil/loadgen/internal/socket.h"

namespace vigil {
namespace {

using loadgen_internal::AppendRequest;
using loadgen_internal::ConnectWithTimeout;
using loadgen_internal::Endpoint;
using loadgen_internal::ErrnoText;
using loadgen_internal::Fd;
using loadgen_internal::HttpResponseParser;
using loadgen_internal::Resolve;
using loadgen_internal::StartConnect;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// The generator reads steady_clock directly, not an injected vigil::Clock: its deadlines are
// armed on a CLOCK_MONOTONIC timerfd, which is the clock steady_clock reads on Linux, and a fake
// clock could not drive the kernel's timer. Its tests run against a real server instead.
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

constexpr uint64_t kTimerTag = ~uint64_t{0};
constexpr uint64_t kWakeTag = kTimerTag - 1;
constexpr int kMaxEvents = 256;
constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kMaxErrorReasons = 16;
constexpr double kMaxOfferedRps = 1e7;
constexpr nanoseconds kMaxBackoff = milliseconds(100);

absl::Status ValidateOptions(const LoadOptions& o) {
  if (o.host.empty()) return absl::InvalidArgumentError("host must not be empty");
  if (o.port == 0) return absl::InvalidArgumentError("port must be set (1..65535), got 0");
  if (o.connections < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("connections must be >= 1, got ", o.connections));
  }
  if (o.threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat("threads must be >= 1, got ", o.threads));
  }
  if (o.mode == LoadOptions::Mode::kOpen &&
      !(o.offered_rps > 0 && o.offered_rps <= kMaxOfferedRps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("offered_rps must be in (0, 1e7] for open-loop load, got ", o.offered_rps));
  }
  if (o.duration <= milliseconds(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration must be > 0, got ", o.duration.count(), " ms"));
  }
  if (o.warmup < milliseconds(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup must be >= 0, got ", o.warmup.count(), " ms"));
  }
  if (o.response_timeout <= milliseconds(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("response_timeout must be > 0, got ", o.response_timeout.count(), " ms"));
  }
  if (o.max_response_bytes < 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_response_bytes must be >= 1024, got ", o.max_response_bytes));
  }
  return absl::OkStatus();
}

void AddReason(std::map<std::string, uint64_t>* reasons, absl::string_view reason, uint64_t n) {
  auto it = reasons->find(std::string(reason));
  if (it == reasons->end()) {
    it = reasons->size() < kMaxErrorReasons ? reasons->emplace(reason, 0).first
                                            : reasons->emplace("other", 0).first;
  }
  it->second += n;
}

// No delay for the first failure (a server closing an idle connection is routine), then 1 ms
// doubling up to kMaxBackoff, so a dead server is not hammered.
nanoseconds Backoff(int failures) {
  if (failures <= 1) return nanoseconds(0);
  return std::min<nanoseconds>(milliseconds(1) * (int64_t{1} << std::min(failures - 2, 10)),
                               kMaxBackoff);
}

// State shared by the event-loop threads of one run.
struct Shared {
  // Constant once the threads start.
  const LoadOptions* options = nullptr;
  const RequestSource* source = nullptr;
  Endpoint endpoint;
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
    return start + nanoseconds(std::llround(static_cast<double>(arrival) * ns_per_arrival));
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
           connection_errors = 0, dropped = 0, reconnects = 0;
  std::vector<uint64_t> by_status = std::vector<uint64_t>(1000);  // the parser yields 100..999
  std::map<std::string, uint64_t> errors;
  LatencyHistogram latency;
  LatencyHistogram ok_latency;
};

struct Conn {
  enum class State { kConnecting, kIdle, kBusy, kBackoff };

  Conn(int index_in_worker, size_t max_response_bytes)
      : index(index_in_worker), parser(max_response_bytes) {}

  int index;
  Fd fd;
  uint32_t generation = 0;  // in the epoll tag; bumped per socket, so stale events are ignored
  uint32_t events = 0;      // registered epoll mask; 0 when not registered
  State state = State::kIdle;
  bool listed_idle = false;  // in Worker::idle_
  bool fresh = true;         // no response completed on this socket yet
  int failures = 0;          // consecutive failures, for the backoff
  TimePoint since;           // kBusy: send time; kConnecting: connect start; kBackoff: retry time
  TimePoint origin;          // kBusy: latency origin (closed loop: send time; open: scheduled time)
  bool measured = false;     // kBusy: the request is in the measurement window
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
  Worker(Shared* shared, int index, std::vector<Fd> sockets);

  absl::Status Init();
  // Runs until the window ends, the run is aborted, or (with max_requests) its work is done.
  void Run();

  const Stats& stats() const { return stats_; }
  TimePoint finished() const { return finished_; }

 private:
  void HandleEvent(const epoll_event& event);
  void Receive(Conn& c);
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
  void ConnectFailed(Conn& c, absl::string_view reason);
  void EnterBackoff(Conn& c, TimePoint retry);
  bool Watch(Conn& c, uint32_t events);
  void MakeIdle(Conn& c);
  Conn* PopIdle();
  void CountError(absl::string_view reason);
  bool Done() const;
  TimePoint NextDeadline() const;
  void ArmTimer(TimePoint deadline);

  Shared* const shared_;
  const LoadOptions& options_;
  const int index_;
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

Worker::Worker(Shared* shared, int index, std::vector<Fd> sockets)
    : shared_(shared), options_(*shared->options), index_(index), scratch_(new char[kReadChunk]) {
  conns_.reserve(sockets.size());
  for (Fd& fd : sockets) {
    conns_.emplace_back(static_cast<int>(conns_.size()), options_.max_response_bytes);
    conns_.back().fd = std::move(fd);
  }
}

absl::Status Worker::Init() {
  epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) return absl::InternalError(absl::StrCat("epoll_create1: ", ErrnoText(errno)));
  timer_ = Fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!timer_) return absl::InternalError(absl::StrCat("timerfd_create: ", ErrnoText(errno)));
  const std::pair<int, uint64_t> watched[] = {{timer_.get(), kTimerTag},
                                              {shared_->wake.get(), kWakeTag}};
  for (const auto& [fd, tag] : watched) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", ErrnoText(errno)));
    }
  }
  for (Conn& c : conns_) {
    if (!Watch(c, EPOLLIN)) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", ErrnoText(errno)));
    }
    MakeIdle(c);
  }
  return absl::OkStatus();
}

void Worker::Run() {
  finished_ = shared_->end;
  next_scan_ = shared_->start + options_.response_timeout;
  next_arrival_at_ = shared_->start;
  epoll_event events[kMaxEvents];
  int ready = 0;
  for (;;) {
    // Events that were waiting when the window ended are not read: their time is unknown.
    if (SteadyClock::now() >= shared_->end) return;
    for (int e = 0; e < ready && !shared_->aborted.load(std::memory_order_acquire); ++e) {
      HandleEvent(events[e]);
    }
    const TimePoint now = SteadyClock::now();
    if (now >= next_scan_) ScanDeadlines(now);
    if (backoff_count_ > 0 && now >= next_retry_) RetryConnects(now);
    if (shared_->open) {
      DispatchBacklog();
      ScheduleArrivals(now);
    } else {
      DispatchClosed();
    }
    if (shared_->aborted.load(std::memory_order_acquire)) return;
    if (Done()) {
      finished_ = std::min(SteadyClock::now(), shared_->end);
      return;
    }
    ArmTimer(NextDeadline());
    ready = epoll_wait(epoll_.get(), events, kMaxEvents, -1);
    if (ready < 0) {
      if (errno != EINTR) {
        shared_->Abort(absl::InternalError(absl::StrCat("epoll_wait: ", ErrnoText(errno))));
        return;
      }
      ready = 0;
    }
  }
}

void Worker::HandleEvent(const epoll_event& event) {
  if (event.data.u64 == kTimerTag) {
    uint64_t expirations;
    [[maybe_unused]] const ssize_t n = read(timer_.get(), &expirations, sizeof(expirations));
    armed_ = TimePoint::max();
    return;
  }
  if (event.data.u64 == kWakeTag) return;  // Run sees `aborted`
  Conn& c = conns_[event.data.u64 & 0xffffffffu];
  const uint32_t generation = static_cast<uint32_t>(event.data.u64 >> 32);
  if (c.generation != generation) return;  // for a socket since replaced
  if (c.state == Conn::State::kConnecting) {
    FinishConnect(c);
    return;
  }
  if (event.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) Receive(c);
  if ((event.events & EPOLLOUT) && c.generation == generation && c.state == Conn::State::kBusy) {
    Transmit(c);
  }
}

void Worker::Receive(Conn& c) {
  for (;;) {
    const ssize_t n = recv(c.fd.get(), scratch_.get(), kReadChunk, 0);
    if (n > 0) {
      if (c.state != Conn::State::kBusy) {
        ConnectionError(c, "bytes from the server with no request outstanding");
        return;
      }
      c.in.append(scratch_.get(), static_cast<size_t>(n));
      if (!Parse(c, /*eof=*/false)) return;
      if (static_cast<size_t>(n) < kReadChunk) return;  // drained; epoll reports more
      continue;
    }
    if (n == 0) {  // the server closed
      if (c.state == Conn::State::kBusy) {
        Parse(c, /*eof=*/true);
      } else {
        // Closing an idle connection is routine, but not before it ever answered: back off.
        if (c.fresh) ++c.failures;
        Reopen(c);
      }
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ConnectionError(c, absl::StrCat("recv: ", ErrnoText(errno)));
    }
    return;
  }
}

// Returns true while the response is incomplete and the connection is waiting for more.
bool Worker::Parse(Conn& c, bool eof) {
  switch (c.parser.Parse(c.in, eof)) {
    case HttpResponseParser::State::kIncomplete:
      return true;
    case HttpResponseParser::State::kError:
      ConnectionError(c, c.parser.error());
      return false;
    case HttpResponseParser::State::kComplete:
      break;
  }
  Complete(c);
  c.failures = 0;
  c.fresh = false;
  if (c.in.size() > c.parser.size()) {
    ConnectionError(c, "bytes after the response");
  } else if (c.parser.close() || eof || c.out_done < c.out.size()) {
    // The server asked to close, closed, or answered before reading all of the request.
    Reopen(c);
  } else {
    MakeIdle(c);
  }
  return false;
}

void Worker::Complete(Conn& c) {
  const TimePoint done = SteadyClock::now();
  if (!EndRequest(c)) return;
  const nanoseconds latency = done - c.origin;
  const int status = c.parser.status();
  ++stats_.completed;
  ++stats_.by_status[static_cast<size_t>(status)];
  stats_.latency.Record(latency);
  if (status >= 200 && status < 300) {
    ++stats_.ok;
    stats_.ok_latency.Record(latency);
    if (absl::StrContains(c.parser.body(c.in), "\"degraded\":true")) ++stats_.degraded;
  } else if (status == 503) {
    ++stats_.shed;
  } else {
    ++stats_.other_status;
  }
}

// Ends the outstanding request of "c", if any. Returns whether it counts (in the window).
bool Worker::EndRequest(Conn& c) {
  if (c.state != Conn::State::kBusy) return false;
  c.state = Conn::State::kIdle;
  if (!c.measured) return false;
  c.measured = false;
  --measured_in_flight_;
  return true;
}

void Worker::Transmit(Conn& c) {
  while (c.out_done < c.out.size()) {
    const ssize_t n =
        send(c.fd.get(), c.out.data() + c.out_done, c.out.size() - c.out_done, MSG_NOSIGNAL);
    if (n >= 0) {
      c.out_done += static_cast<size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!Watch(c, EPOLLIN | EPOLLOUT)) ConnectionError(c, "epoll_ctl failed");
      return;
    } else if (errno != EINTR) {
      ConnectionError(c, absl::StrCat("send: ", ErrnoText(errno)));
      return;
    }
  }
  if (!Watch(c, EPOLLIN)) ConnectionError(c, "epoll_ctl failed");
}

// Sends the next request on idle connection "c". Returns false when the run was aborted
// because the source made an invalid request.
bool Worker::Send(Conn& c, TimePoint origin, bool measured) {
  const uint64_t i = shared_->next_index.fetch_add(1, std::memory_order_relaxed);
  request_ = LoadRequest();
  (*shared_->source)(i, &request_);
  c.out.clear();
  c.out_done = 0;
  if (absl::Status s = AppendRequest(request_, shared_->endpoint.authority, &c.out); !s.ok()) {
    shared_->Abort(absl::InvalidArgumentError(absl::StrCat("request ", i, ": ", s.message())));
    MakeIdle(c);
    return false;
  }
  c.in.clear();
  c.parser.Reset(request_.method == "HEAD");
  c.state = Conn::State::kBusy;
  c.measured = measured;
  c.since = SteadyClock::now();
  c.origin = shared_->open ? origin : c.since;
  if (measured) {
    ++stats_.sent;
    ++measured_in_flight_;
  }
  Transmit(c);
  return true;
}

void Worker::DispatchClosed() {
  while (!claims_done_) {
    Conn* c = PopIdle();
    if (c == nullptr) return;
    const TimePoint now = SteadyClock::now();
    const bool measured = now >= shared_->measure;
    if (measured && options_.max_requests > 0 &&
        shared_->measured_claims.fetch_add(1, std::memory_order_relaxed) >= options_.max_requests) {
      claims_done_ = true;
      MakeIdle(*c);
      return;
    }
    if (!Send(*c, now, measured)) return;
  }
}

void Worker::DispatchBacklog() {
  while (!backlog_.empty()) {
    Conn* c = PopIdle();
    if (c == nullptr) return;
    const uint64_t arrival = backlog_.front();
    backlog_.pop_front();
    if (!Send(*c, shared_->Scheduled(arrival), arrival >= shared_->first_measured_arrival)) {
      return;
    }
  }
}

// Takes every arrival of this thread that is due at "now": sent at once when a connection is
// free and none is waiting, else queued, else (backlog full) dropped.
void Worker::ScheduleArrivals(TimePoint now) {
  const uint64_t first = shared_->first_measured_arrival;
  while (!arrivals_done_) {
    // Thread j takes arrivals j, j + threads, j + 2 * threads, ...: the merged stream stays
    // evenly spaced.
    const uint64_t arrival =
        next_arrival_ * static_cast<uint64_t>(shared_->threads) + static_cast<uint64_t>(index_);
    const bool measured = arrival >= first;
    if (options_.max_requests > 0 && measured && arrival - first >= options_.max_requests) {
      arrivals_done_ = arrivals_capped_ = true;
      return;
    }
    const TimePoint at = shared_->Scheduled(arrival);
    if (at >= shared_->end) {
      arrivals_done_ = true;
      return;
    }
    if (at > now) {
      next_arrival_at_ = at;
      return;
    }
    ++next_arrival_;
    if (backlog_.empty()) {
      if (Conn* c = PopIdle()) {
        if (!Send(*c, at, measured)) return;
        continue;
      }
    }
    if (backlog_.size() < shared_->backlog_per_thread) {
      backlog_.push_back(arrival);
    } else if (measured) {
      ++stats_.dropped;
    }
  }
}

// Times out responses and handshakes older than response_timeout. Sends after this scan have
// later deadlines than any found here, so the next scan is due at the earliest one found.
void Worker::ScanDeadlines(TimePoint now) {
  next_scan_ = now + options_.response_timeout;
  for (Conn& c : conns_) {
    if (c.state != Conn::State::kBusy && c.state != Conn::State::kConnecting) continue;
    const TimePoint deadline = c.since + options_.response_timeout;
    if (deadline > now) {
      next_scan_ = std::min(next_scan_, deadline);
    } else if (c.state == Conn::State::kConnecting) {
      Close(c);
      ConnectFailed(c, absl::StrCat("connect: ", ErrnoText(ETIMEDOUT)));
    } else {
      if (EndRequest(c)) ++stats_.timeouts;
      Reopen(c);
    }
  }
}

void Worker::RetryConnects(TimePoint now) {
  next_retry_ = TimePoint::max();
  for (Conn& c : conns_) {
    if (c.state != Conn::State::kBackoff) continue;
    if (c.since <= now) {
      --backoff_count_;
      Connect(c);  // on failure, re-enters backoff with a later retry time
    } else {
      next_retry_ = std::min(next_retry_, c.since);
    }
  }
}

// "c" failed: counts the error (against its request, if one is outstanding) and reopens it.
void Worker::ConnectionError(Conn& c, absl::string_view reason) {
  const bool counts =
      c.state == Conn::State::kBusy ? EndRequest(c) : SteadyClock::now() >= shared_->measure;
  if (counts) CountError(reason);
  ++c.failures;
  Reopen(c);
}

void Worker::CountError(absl::string_view reason) {
  ++stats_.connection_errors;
  AddReason(&stats_.errors, reason, 1);
}

// Replaces the socket of "c": at once, or after the backoff for its failures.
void Worker::Reopen(Conn& c) {
  EndRequest(c);
  Close(c);
  const TimePoint now = SteadyClock::now();
  if (now >= shared_->measure) ++stats_.reconnects;
  const nanoseconds delay = Backoff(c.failures);
  if (delay == nanoseconds(0)) {
    Connect(c);
  } else {
    EnterBackoff(c, now + delay);
  }
}

void Worker::Close(Conn& c) {
  c.fd.Reset();  // also leaves the epoll set
  ++c.generation;
  c.events = 0;
  c.in.clear();
  c.out.clear();
  c.out_done = 0;
  c.fresh = true;
}

void Worker::Connect(Conn& c) {
  bool in_progress = false;
  int err = 0;
  c.fd = StartConnect(shared_->endpoint, &in_progress, &err);
  if (!c.fd) {
    ConnectFailed(c, absl::StrCat("connect: ", ErrnoText(err)));
    return;
  }
  c.state = in_progress ? Conn::State::kConnecting : Conn::State::kIdle;
  c.since = SteadyClock::now();
  if (!Watch(c, in_progress ? EPOLLOUT : EPOLLIN)) {
    Close(c);
    ConnectFailed(c, "epoll_ctl failed");
    return;
  }
  if (!in_progress) MakeIdle(c);
}

void Worker::FinishConnect(Conn& c) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    Close(c);
    ConnectFailed(c, absl::StrCat("connect: ", ErrnoText(err)));
    return;
  }
  if (!Watch(c, EPOLLIN)) {
    Close(c);
    ConnectFailed(c, "epoll_ctl failed");
    return;
  }
  MakeIdle(c);
}

// REQUIRES: "c" has no socket.
void Worker::ConnectFailed(Conn& c, absl::string_view reason) {
  const TimePoint now = SteadyClock::now();
  if (now >= shared_->measure) CountError(reason);
  ++c.failures;
  EnterBackoff(c, now + std::max<nanoseconds>(Backoff(c.failures), milliseconds(1)));
}

void Worker::EnterBackoff(Conn& c, TimePoint retry) {
  c.state = Conn::State::kBackoff;
  c.since = retry;
  ++backoff_count_;
  next_retry_ = std::min(next_retry_, retry);
}

// Registers (or updates) the epoll interest of "c"'s socket. False on failure (errno set).
bool Worker::Watch(Conn& c, uint32_t events) {
  if (c.events == events) return true;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = (uint64_t{c.generation} << 32) | static_cast<uint32_t>(c.index);
  const int op = c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (epoll_ctl(epoll_.get(), op, c.fd.get(), &ev) != 0) return false;
  c.events = events;
  return true;
}

void Worker::MakeIdle(Conn& c) {
  c.state = Conn::State::kIdle;
  if (!c.listed_idle) {
    c.listed_idle = true;
    idle_.push_back(c.index);
  }
}

Conn* Worker::PopIdle() {
  while (!idle_.empty()) {
    Conn& c = conns_[static_cast<size_t>(idle_.back())];
    idle_.pop_back();
    c.listed_idle = false;
    if (c.state == Conn::State::kIdle) return &c;
  }
  return nullptr;
}

bool Worker::Done() const {
  if (options_.max_requests == 0 || measured_in_flight_ > 0) return false;
  return shared_->open ? arrivals_capped_ && backlog_.empty() : claims_done_;
}

TimePoint Worker::NextDeadline() const {
  TimePoint t = std::min(shared_->end, next_scan_);
  if (backoff_count_ > 0) t = std::min(t, next_retry_);
  if (shared_->open && !arrivals_done_) t = std::min(t, next_arrival_at_);
  return t;
}

void Worker::ArmTimer(TimePoint deadline) {
  if (deadline == armed_) return;
  // steady_clock counts CLOCK_MONOTONIC nanoseconds; a zero it_value would disarm the timer.
  const int64_t ns = std::max<int64_t>(1, nanoseconds(deadline.time_since_epoch()).count());
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  if (timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    shared_->Abort(absl::InternalError(absl::StrCat("timerfd_settime: ", ErrnoText(errno))));
    return;
  }
  armed_ = deadline;
}

// The first arrival scheduled at or after the window start.
uint64_t FirstMeasuredArrival(const Shared& shared) {
  const double warmup_ns = static_cast<double>(nanoseconds(shared.measure - shared.start).count());
  auto arrival = static_cast<uint64_t>(std::ceil(warmup_ns / shared.ns_per_arrival));
  while (arrival > 0 && shared.Scheduled(arrival - 1) >= shared.measure) --arrival;
  while (shared.Scheduled(arrival) < shared.measure) ++arrival;
  return arrival;
}

LoadResult Merge(const Shared& shared, const std::vector<std::unique_ptr<Worker>>& workers) {
  LoadResult r;
  r.mode = shared.options->mode;
  r.offered_rps = shared.open ? shared.options->offered_rps : 0;
  r.latency = std::make_unique<LatencyHistogram>();
  r.ok_latency = std::make_unique<LatencyHistogram>();
  TimePoint finished = shared.measure;
  for (const auto& w : workers) {
    const Stats& s = w->stats();
    finished = std::max(finished, w->finished());
    r.sent += s.sent;
    r.completed += s.completed;
    r.ok += s.ok;
    r.shed += s.shed;
    r.degraded += s.degraded;
    r.other_status += s.other_status;
    r.timeouts += s.timeouts;
    r.connection_errors += s.connection_errors;
    r.dropped += s.dropped;
    r.reconnects += s.reconnects;
    for (size_t status = 0; status < s.by_status.size(); ++status) {
      if (s.by_status[status] != 0) r.by_status[static_cast<int>(status)] += s.by_status[status];
    }
    for (const auto& [reason, n] : s.errors) AddReason(&r.errors_by_reason, reason, n);
    r.latency->Merge(s.latency);
    r.ok_latency->Merge(s.ok_latency);
  }
  r.seconds = std::chrono::duration<double>(finished - shared.measure).count();
  r.achieved_rps = r.seconds > 0 ? static_cast<double>(r.completed) / r.seconds : 0;
  return r;
}

}  // namespace

absl::string_view LoadModeName(LoadOptions::Mode mode) {
  return mode == LoadOptions::Mode::kOpen ? "open" : "closed";
}

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, const RequestSource& source) {
  VIGIL_RETURN_IF_ERROR(ValidateOptions(options));
  Shared shared;
  VIGIL_ASSIGN_OR_RETURN(shared.endpoint, Resolve(options.host, options.port));
  shared.options = &options;
  shared.source = &source;
  shared.open = options.mode == LoadOptions::Mode::kOpen;
  shared.threads = std::min(options.threads, options.connections);

  std::vector<std::vector<Fd>> sockets(static_cast<size_t>(shared.threads));
  for (int c = 0; c < options.connections; ++c) {
    VIGIL_ASSIGN_OR_RETURN(Fd fd, ConnectWithTimeout(shared.endpoint, options.response_timeout));
    sockets[static_cast<size_t>(c % shared.threads)].push_back(std::move(fd));
  }
  shared.wake = Fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!shared.wake) return absl::InternalError(absl::StrCat("eventfd: ", ErrnoText(errno)));
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < shared.threads; ++t) {
    workers.push_back(
        std::make_unique<Worker>(&shared, t, std::move(sockets[static_cast<size_t>(t)])));
    VIGIL_RETURN_IF_ERROR(workers.back()->Init());
  }

  shared.start = SteadyClock::now();
  shared.measure = shared.start + options.warmup;
  shared.end = shared.measure + options.duration;
  if (shared.open) {
    shared.ns_per_arrival = 1e9 / options.offered_rps;
    shared.first_measured_arrival = FirstMeasuredArrival(shared);
    const size_t threads = static_cast<size_t>(shared.threads);
    shared.backlog_per_thread =
        options.max_backlog / threads + (options.max_backlog % threads != 0);
  }

  std::vector<std::thread> running;
  try {
    for (auto& w : workers) running.emplace_back([worker = w.get()] { worker->Run(); });
  } catch (const std::system_error& e) {
    shared.Abort(absl::InternalError(absl::StrCat("cannot start a load thread: ", e.what())));
  }
  for (std::thread& t : running) t.join();
  {
    absl::MutexLock lock(&shared.mu);
    if (!shared.error.ok()) return shared.error;
  }
  return Merge(shared, workers);
}

}  // namespace vigil
