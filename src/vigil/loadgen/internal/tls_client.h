// Client-side TLS for the load generator: a TlsClient is one run's OpenSSL context (trust
// anchors, optional client certificate, the peer name to check), and makes one SSL per
// connection over a non-blocking socket. The event loop drives the SSL itself (SSL_read,
// SSL_write, SSL_do_handshake); this file holds what is done once per run or once per connect.
//
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<TlsClient> tls, TlsClient::Create(options.tls, host));
//   VIGIL_ASSIGN_OR_RETURN(SslPtr ssl, tls->NewSsl(fd.get()));
//   VIGIL_RETURN_IF_ERROR(HandshakeUntil(ssl.get(), fd.get(), deadline));
//
// Sockets are written with MSG_NOSIGNAL (NewSocketBio): a server that resets a connection makes
// a send fail with EPIPE instead of killing the process with SIGPIPE.
//
// Sessions: AttachSessionSlot makes an SSL store every session the server issues on it (TLS 1.3
// tickets arrive after the handshake, with the first read) into a slot the connection owns; the
// next SSL of that connection resumes it (SSL_set_session). The session of an SSL freed without
// a clean shutdown is not resumable (OpenSSL marks it), so Close sends close_notify first.
//
// Private to the loadgen module. Thread safety: a TlsClient is immutable after Create and safe
// for concurrent use (NewSsl from several threads); each SSL is externally synchronized. The
// functions use this thread's OpenSSL error queue and leave it empty.
#ifndef VIGIL_LOADGEN_INTERNAL_TLS_CLIENT_H_
#define VIGIL_LOADGEN_INTERNAL_TLS_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "openssl/ssl.h"
#include "vigil/loadgen/http_load.h"

namespace vigil::loadgen_internal {

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
struct SslSessionFree {
  void operator()(SSL_SESSION* session) const { SSL_SESSION_free(session); }
};
using SslPtr = std::unique_ptr<SSL, SslFree>;
using SslSessionPtr = std::unique_ptr<SSL_SESSION, SslSessionFree>;

class TlsClient {
 public:
  // Checks "tls" (enabled) and builds the context: TLS 1.2 at least, the server certificate
  // verified against tls.ca_file (or the system store) and against tls.server_name or, when it
  // is empty, "host" (LoadOptions::host), a name or an IP address.
  // Errors: kInvalidArgument naming the field ("tls.ca_file '/x' cannot be read: ..."),
  // kInternal when OpenSSL cannot allocate.
  static absl::StatusOr<std::unique_ptr<TlsClient>> Create(const LoadTls& tls,
                                                           const std::string& host);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // A client SSL over socket "fd" with SNI set, ready for SSL_do_handshake. "fd" is not owned:
  // it must stay open until the SSL is freed, and the caller closes it after.
  // Errors: kInternal with the OpenSSL reason (allocation).
  absl::StatusOr<SslPtr> NewSsl(int fd) const;

 private:
  TlsClient(SSL_CTX* ctx, std::string sni) : ctx_(ctx), sni_(std::move(sni)) {}

  SSL_CTX* const ctx_;     // owned
  const std::string sni_;  // "" for an IP address
};

// Makes "ssl" store the sessions the server issues on it into "*slot" (replacing the one there),
// and stores the session it already has if that one is resumable (a TLS 1.2 handshake issues it
// during the handshake). "*slot" must outlive "ssl", or the slot be detached first with
// AttachSessionSlot(ssl, nullptr).
void AttachSessionSlot(SSL* ssl, SslSessionPtr* slot);

// Runs the handshake of "ssl", whose socket is the non-blocking "fd", waiting for the socket
// with poll until "deadline".
// Errors: kDeadlineExceeded ("timed out") at the deadline; kUnavailable with TlsErrorReason's
// text when the handshake fails.
absl::Status HandshakeUntil(SSL* ssl, int fd, std::chrono::steady_clock::time_point deadline);

// Why the SSL call that returned "ret" on "ssl" failed, for SSL_get_error values other than
// WANT_READ and WANT_WRITE: the first OpenSSL reason, with the certificate verification error
// when there is one ("certificate verify failed: hostname mismatch"), the errno text ("Connection
// reset by peer"), or "the server closed the connection". Never holds key material. Call right
// after the failed call (errno); clears this thread's OpenSSL error queue.
std::string TlsErrorReason(SSL* ssl, int ret);

// A socket BIO over "fd" (not closed by the BIO) that sends with MSG_NOSIGNAL; for SSL_set_bio.
// nullptr when OpenSSL cannot allocate.
BIO* NewSocketBio(int fd);

}  // namespace vigil::loadgen_internal

#endif  // VIGIL_LOADGEN_INTERNAL_TLS_CLIENT_H_
