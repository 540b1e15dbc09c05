#include "vigil/loadgen/http_load.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <system_error>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/status_macros.h"
#include "vigil/loadgen/internal/load_worker.h"
#include "vigil/loadgen/internal/socket.h"
#include "vigil/loadgen/internal/tls_client.h"

namespace vigil {
namespace {

using loadgen_internal::AddReason;
using loadgen_internal::ConnectWithTimeout;
using loadgen_internal::ErrnoText;
using loadgen_internal::Fd;
using loadgen_internal::HandshakeUntil;
using loadgen_internal::OpenSocket;
using loadgen_internal::Resolve;
using loadgen_internal::Shared;
using loadgen_internal::Stats;
using loadgen_internal::SteadyClock;
using loadgen_internal::TimePoint;
using loadgen_internal::TlsClient;
using loadgen_internal::Worker;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr double kMaxOfferedRps = 1e7;

// With TLS off, a TLS field set is a mistake (a CA file given, HTTPS forgotten): refused.
absl::Status ValidateTlsOff(const LoadTls& tls) {
  const char* set = !tls.ca_file.empty()       ? "tls.ca_file"
                    : !tls.cert_file.empty()   ? "tls.cert_file"
                    : !tls.key_file.empty()    ? "tls.key_file"
                    : !tls.server_name.empty() ? "tls.server_name"
                    : !tls.verify_peer         ? "tls.verify_peer"
                                               : nullptr;
  if (set == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(set, " is set but tls.enabled is false"));
}

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
  if (!o.tls.enabled) return ValidateTlsOff(o.tls);
  return absl::OkStatus();  // TlsClient::Create checks the rest
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
    r.tls_handshakes += s.tls_handshakes;
    r.tls_resumed += s.tls_resumed;
    for (size_t status = 0; status < s.by_status.size(); ++status) {
      if (s.by_status[status] != 0) r.by_status[static_cast<int>(status)] += s.by_status[status];
    }
    for (const auto& [reason, n] : s.errors) AddReason(&r.errors_by_reason, reason, n);
    r.latency->Merge(s.latency);
    r.ok_latency->Merge(s.ok_latency);
  }
  // Every initial handshake succeeded, or the run would have failed at the start.
  if (shared.tls != nullptr) r.tls_handshakes += static_cast<uint64_t>(shared.options->connections);
  r.seconds = std::chrono::duration<double>(finished - shared.measure).count();
  r.achieved_rps = r.seconds > 0 ? static_cast<double>(r.completed) / r.seconds : 0;
  return r;
}

// Opens a connection before the run: TCP and, with TLS, the handshake, both within
// response_timeout.
absl::StatusOr<OpenSocket> OpenAtStart(const Shared& shared) {
  const milliseconds timeout = shared.options->response_timeout;
  const TimePoint deadline = SteadyClock::now() + timeout;
  OpenSocket s;
  VIGIL_ASSIGN_OR_RETURN(s.fd, ConnectWithTimeout(shared.endpoint, timeout));
  if (shared.tls == nullptr) return s;
  VIGIL_ASSIGN_OR_RETURN(s.ssl, shared.tls->NewSsl(s.fd.get()));
  if (absl::Status h = HandshakeUntil(s.ssl.get(), s.fd.get(), deadline); !h.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "TLS handshake with ", shared.endpoint.authority, " failed: ", h.message(),
        absl::IsDeadlineExceeded(h)
            ? absl::StrCat(" (response_timeout ", timeout.count(), " ms, TCP connect included)")
            : ""));
  }
  return s;
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
  std::unique_ptr<TlsClient> tls;  // outlives the workers and their SSLs
  if (options.tls.enabled) {
    VIGIL_ASSIGN_OR_RETURN(tls, TlsClient::Create(options.tls, options.host));
    shared.tls = tls.get();
  }

  std::vector<std::vector<OpenSocket>> sockets(static_cast<size_t>(shared.threads));
  for (int c = 0; c < options.connections; ++c) {
    VIGIL_ASSIGN_OR_RETURN(OpenSocket s, OpenAtStart(shared));
    sockets[static_cast<size_t>(c % shared.threads)].push_back(std::move(s));
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
