// The TLS path of Worker (load_worker.h): each connection's SSL runs over its non-blocking
// socket, and SSL_ERROR_WANT_READ / WANT_WRITE become its epoll interest.
#include <sys/epoll.h>

#include <algorithm>
#include <climits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "openssl/err.h"
#include "openssl/ssl.h"
#include "vigil/loadgen/internal/load_worker.h"
#include "vigil/loadgen/internal/tls_client.h"

namespace vigil::loadgen_internal {

// The thread's OpenSSL error queue is cleared before each sequence of SSL calls: SSL_get_error
// misreads a queue that the RequestSource (or anything else on this thread) left behind.

// Any readiness of an established TLS connection: read (a response, a session ticket, an
// alert), then resume a send that was waiting. Records flow both ways under either readiness,
// so both are tried; the extra SSL_read on a write-only wakeup (rare: a request larger than the
// socket buffer) costs one recv that returns EAGAIN.
void Worker::HandleTlsEvent(Conn& c, uint32_t generation) {
  if (c.state == Conn::State::kHandshaking) {
    Handshake(c);
    return;
  }
  ReceiveTls(c);
  if (c.generation == generation && c.state == Conn::State::kBusy && c.out_done < c.out.size()) {
    TransmitTls(c);
  }
}

void Worker::ReceiveTls(Conn& c) {
  SSL* const ssl = c.ssl.get();
  ERR_clear_error();
  for (;;) {
    const int n = SSL_read(ssl, scratch_.get(), static_cast<int>(kReadChunk));
    if (n > 0) {
      if (c.state != Conn::State::kBusy) {
        ConnectionError(c, "bytes from the server with no request outstanding");
        return;
      }
      c.in.append(scratch_.get(), static_cast<size_t>(n));
      if (!Parse(c, /*eof=*/false)) return;
      // SSL_read returns one record at most. Records OpenSSL has not read are still in the
      // socket, where epoll reports them; bytes it already holds are not: read those now.
      if (!SSL_has_pending(ssl)) return;
      continue;
    }
    switch (SSL_get_error(ssl, n)) {
      case SSL_ERROR_WANT_READ:
        // Drop a write interest that only an earlier read needed (it would spin).
        if (c.events != EPOLLIN && (c.state != Conn::State::kBusy || c.out_done == c.out.size()) &&
            !Watch(c, EPOLLIN)) {
          ConnectionError(c, "epoll_ctl failed");
        }
        return;
      case SSL_ERROR_WANT_WRITE:  // the read must send a record first (a TLS 1.3 key update)
        if (!Watch(c, EPOLLIN | EPOLLOUT)) ConnectionError(c, "epoll_ctl failed");
        return;
      case SSL_ERROR_ZERO_RETURN:  // close_notify, or a close without one (IGNORE_UNEXPECTED_EOF)
        ServerClosed(c);
        return;
      default:
        c.tls_broken = true;
        ConnectionError(c, absl::StrCat("TLS read: ", TlsErrorReason(ssl, n)));
        return;
    }
  }
}

void Worker::TransmitTls(Conn& c) {
  SSL* const ssl = c.ssl.get();
  ERR_clear_error();
  while (c.out_done < c.out.size()) {
    // A retry after WANT_WRITE passes the same bytes again, as SSL_write requires.
    const size_t left = std::min<size_t>(c.out.size() - c.out_done, INT_MAX);
    const int n = SSL_write(ssl, c.out.data() + c.out_done, static_cast<int>(left));
    if (n > 0) {
      c.out_done += static_cast<size_t>(n);
      continue;
    }
    const int error = SSL_get_error(ssl, n);
    if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) {
      // WANT_READ (the write waits for a record from the server): the next readable event
      // retries the send (HandleTlsEvent).
      if (!Watch(c, error == SSL_ERROR_WANT_WRITE ? EPOLLIN | EPOLLOUT : EPOLLIN)) {
        ConnectionError(c, "epoll_ctl failed");
      }
      return;
    }
    c.tls_broken = true;
    ConnectionError(c, absl::StrCat("TLS write: ", TlsErrorReason(ssl, n)));
    return;
  }
  if (!Watch(c, EPOLLIN)) ConnectionError(c, "epoll_ctl failed");
}

// A new SSL over the connected socket of "c", resuming its last session when it has one.
void Worker::StartTls(Conn& c) {
  absl::StatusOr<SslPtr> ssl = shared_->tls->NewSsl(c.fd.get());
  if (!ssl.ok()) {
    Close(c);
    ConnectFailed(c, absl::StrCat("TLS: ", ssl.status().message()));
    return;
  }
  c.ssl = *std::move(ssl);
  AttachSessionSlot(c.ssl.get(), &c.session);
  if (c.session != nullptr) SSL_set_session(c.ssl.get(), c.session.get());
  c.state = Conn::State::kHandshaking;
  Handshake(c);
}

// Advances the handshake of "c"; the event loop calls it again when the socket is ready. A
// failed handshake is a failed connect: counted, and the connection backs off.
void Worker::Handshake(Conn& c) {
  SSL* const ssl = c.ssl.get();
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl);
  std::string reason;
  if (rc == 1) {
    if (SteadyClock::now() >= shared_->measure) {
      ++stats_.tls_handshakes;
      if (SSL_session_reused(ssl)) ++stats_.tls_resumed;
    }
    if (Watch(c, EPOLLIN)) {
      MakeIdle(c);
      return;
    }
    reason = "epoll_ctl failed";
  } else if (const int error = SSL_get_error(ssl, rc);
             error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    if (Watch(c, error == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT)) return;
    reason = "epoll_ctl failed";
  } else {
    c.tls_broken = true;
    reason = absl::StrCat("TLS handshake: ", TlsErrorReason(ssl, rc));
  }
  Close(c);
  ConnectFailed(c, reason);
}

// Frees the SSL of "c" (its socket is closed after). An established, healthy one first sends
// close_notify: the server sees a clean close, and OpenSSL keeps the session resumable (it
// marks the session of an SSL freed without one as not resumable). The send may not complete
// on a full socket; nothing waits for it.
void Worker::CloseTls(Conn& c) {
  if (!c.tls_broken && SSL_is_init_finished(c.ssl.get())) SSL_shutdown(c.ssl.get());
  ERR_clear_error();
  c.ssl.reset();
  c.tls_broken = false;
}

}  // namespace vigil::loadgen_internal
