#include "vigil/loadgen/internal/load_worker.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace vigil::loadgen_internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr uint64_t kTimerTag = ~uint64_t{0};
constexpr uint64_t kWakeTag = kTimerTag - 1;
constexpr int kMaxEvents = 256;
constexpr size_t kMaxErrorReasons = 16;
constexpr nanoseconds kMaxBackoff = milliseconds(100);
// No delay for the first failure (a server closing an idle connection is routine), then 1 ms
// doubling up to kMaxBackoff, so a dead server is not hammered.
nanoseconds Backoff(int failures) {
  if (failures <= 1) return nanoseconds(0);
  return std::min<nanoseconds>(milliseconds(1) * (int64_t{1} << std::min(failures - 2, 10)),
                               kMaxBackoff);
}

}  // namespace

void AddReason(std::map<std::string, uint64_t>* reasons, absl::string_view reason, uint64_t n) {
  auto it = reasons->find(std::string(reason));
  if (it == reasons->end()) {
    it = reasons->size() < kMaxErrorReasons ? reasons->emplace(reason, 0).first
                                            : reasons->emplace("other", 0).first;
  }
  it->second += n;
}

Worker::Worker(Shared* shared, int index, std::vector<OpenSocket> sockets)
    : shared_(shared),
      options_(*shared->options),
      index_(index),
      tls_(shared->tls != nullptr),
      scratch_(new char[kReadChunk]) {
  conns_.reserve(sockets.size());  // no reallocation below: AttachSessionSlot keeps &c.session
  for (OpenSocket& s : sockets) {
    Conn& c = conns_.emplace_back(static_cast<int>(conns_.size()), options_.max_response_bytes);
    c.fd = std::move(s.fd);
    c.ssl = std::move(s.ssl);
    if (c.ssl != nullptr) AttachSessionSlot(c.ssl.get(), &c.session);
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
  if (tls_) {  // the one TLS branch on the receive path; constant for the run
    HandleTlsEvent(c, generation);
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
    if (n == 0) {
      ServerClosed(c);
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ConnectionError(c, absl::StrCat("recv: ", ErrnoText(errno)));
    }
    return;
  }
}

// The server closed "c": completes a response delimited by the close (or fails a cut one).
void Worker::ServerClosed(Conn& c) {
  if (c.state == Conn::State::kBusy) {
    Parse(c, /*eof=*/true);
  } else {
    // Closing an idle connection is routine, but not before it ever answered: back off.
    if (c.fresh) ++c.failures;
    Reopen(c);
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
  if (tls_) {  // the one TLS branch on the send path
    TransmitTls(c);
  } else {
    Transmit(c);
  }
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
    if (c.state != Conn::State::kBusy && c.state != Conn::State::kConnecting &&
        c.state != Conn::State::kHandshaking) {
      continue;
    }
    const TimePoint deadline = c.since + options_.response_timeout;
    if (deadline > now) {
      next_scan_ = std::min(next_scan_, deadline);
    } else if (c.state != Conn::State::kBusy) {
      const bool tcp = c.state == Conn::State::kConnecting;
      Close(c);
      ConnectFailed(c, tcp ? absl::StrCat("connect: ", ErrnoText(ETIMEDOUT))
                           : std::string("TLS handshake: timed out"));
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
  if (c.ssl != nullptr) CloseTls(c);
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
  c.since = SteadyClock::now();
  if (!in_progress) {
    Connected(c);
    return;
  }
  c.state = Conn::State::kConnecting;
  if (!Watch(c, EPOLLOUT)) {
    Close(c);
    ConnectFailed(c, "epoll_ctl failed");
  }
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
  Connected(c);
}

// The TCP connection of "c" is up: it is idle, or (TLS) its handshake starts.
void Worker::Connected(Conn& c) {
  if (tls_) {
    StartTls(c);
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

}  // namespace vigil::loadgen_internal
