#include "vigil/loadgen/internal/tls_client.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "openssl/bio.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/x509.h"
#include "openssl/x509_vfy.h"
#include "openssl/x509v3.h"
#include "vigil/common/status_macros.h"
#include "vigil/crypto/pem_private_key.h"
#include "vigil/loadgen/internal/socket.h"

namespace vigil::loadgen_internal {
namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// The BIO write of NewSocketBio: BIO_s_socket's, but with MSG_NOSIGNAL (OpenSSL 3.0 writes with
// write(2), which raises SIGPIPE on a connection the peer reset).
int SendNoSignal(BIO* bio, const char* data, int size) {
  const int fd = static_cast<int>(BIO_get_fd(bio, nullptr));
  const int n = static_cast<int>(send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL));
  BIO_clear_retry_flags(bio);
  if (n <= 0 && BIO_sock_should_retry(n)) BIO_set_retry_write(bio);
  return n;
}

// BIO_s_socket with SendNoSignal; made once, never freed (the process may use it until exit).
const BIO_METHOD* SocketMethod() {
  static const BIO_METHOD* const method = []() -> const BIO_METHOD* {
    const int index = BIO_get_new_index();
    if (index == -1) return nullptr;
    BIO_METHOD* m = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "vigil socket (MSG_NOSIGNAL)");
    if (m == nullptr) return nullptr;
    const BIO_METHOD* base = BIO_s_socket();
    if (BIO_meth_set_write(m, SendNoSignal) != 1 ||
        BIO_meth_set_read(m, BIO_meth_get_read(base)) != 1 ||
        BIO_meth_set_puts(m, BIO_meth_get_puts(base)) != 1 ||
        BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base)) != 1 ||
        BIO_meth_set_create(m, BIO_meth_get_create(base)) != 1 ||
        BIO_meth_set_destroy(m, BIO_meth_get_destroy(base)) != 1) {
      BIO_meth_free(m);
      return nullptr;
    }
    return m;
  }();
  return method;
}

// The new-session callback: stores "session" in the SSL's slot (AttachSessionSlot), taking the
// reference (returns 1), or declines it (0) when the SSL has no slot yet.
int StoreSession(SSL* ssl, SSL_SESSION* session) {
  auto* slot = static_cast<SslSessionPtr*>(SSL_get_app_data(ssl));
  if (slot == nullptr) return 0;
  slot->reset(session);
  return 1;
}

// OK when "path" names a regular file this process can read; else kInvalidArgument naming
// "field" and the path.
absl::Status CheckReadable(const std::string& path, absl::string_view field) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " '", path, "' is a directory, not a PEM file"));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " '", path, "' cannot be read: ", ErrnoText(errno)));
  }
  std::fclose(f);
  return absl::OkStatus();
}

// SNI and subjectAltName take a DNS name (at most 253 characters) or an address; reject text
// that can be neither rather than fail every handshake.
absl::Status CheckServerName(const std::string& name) {
  if (name.size() > 253) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls.server_name is longer than 253 characters: '", name, "'"));
  }
  for (const char c : name) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c)) ||
        absl::ascii_iscntrl(static_cast<unsigned char>(c)) || c == '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("tls.server_name '", name, "' is not a host name or an IP address"));
    }
  }
  return absl::OkStatus();
}

bool IsIpAddress(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

absl::Status LoadTrustAnchors(const LoadTls& tls, SSL_CTX* ctx) {
  if (tls.ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tls.ca_file is empty and the system trust store cannot be loaded: ",
                       crypto::TakeOpenSslReason()));
    }
    return absl::OkStatus();
  }
  VIGIL_RETURN_IF_ERROR(CheckReadable(tls.ca_file, "tls.ca_file"));
  if (SSL_CTX_load_verify_locations(ctx, tls.ca_file.c_str(), nullptr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls.ca_file '", tls.ca_file,
                     "' holds no usable PEM certificate: ", crypto::TakeOpenSslReason()));
  }
  return absl::OkStatus();
}

absl::Status LoadClientCertificate(const LoadTls& tls, SSL_CTX* ctx) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        tls.cert_file.empty()
            ? "tls.cert_file must be set with tls.key_file (a client certificate needs both)"
            : "tls.key_file must be set with tls.cert_file (a client certificate needs both)");
  }
  if (tls.cert_file.empty()) return absl::OkStatus();
  VIGIL_RETURN_IF_ERROR(CheckReadable(tls.cert_file, "tls.cert_file"));
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls.cert_file '", tls.cert_file,
                     "' holds no usable PEM certificate: ", crypto::TakeOpenSslReason()));
  }
  VIGIL_RETURN_IF_ERROR(CheckReadable(tls.key_file, "tls.key_file"));
  VIGIL_ASSIGN_OR_RETURN(EVP_PKEY * key,
                         crypto::ReadUnencryptedPrivateKey(tls.key_file, "tls.key_file"));
  const bool matches = X509_check_private_key(SSL_CTX_get0_certificate(ctx), key) == 1;
  ERR_clear_error();
  const bool used = matches && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!matches) {
    return absl::InvalidArgumentError(absl::StrCat("tls.key_file '", tls.key_file,
                                                   "' does not match the certificate in "
                                                   "tls.cert_file '",
                                                   tls.cert_file, "'"));
  }
  if (!used) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tls.key_file '", tls.key_file, "' cannot be used: ", crypto::TakeOpenSslReason()));
  }
  return absl::OkStatus();
}

// Which server certificates are accepted: chains to the trust anchors, for "name".
absl::Status SetPeerCheck(const LoadTls& tls, const std::string& name, SSL_CTX* ctx) {
  if (!tls.verify_peer) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return absl::OkStatus();
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  const bool set = IsIpAddress(name)
                       ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1
                       : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1;
  if (!set) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(tls.server_name.empty() ? "host" : "tls.server_name", " '", name,
                     "' cannot be checked against the server certificate"));
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return absl::OkStatus();
}

}  // namespace

std::string TlsErrorReason(SSL* ssl, int ret) {
  const int saved_errno = errno;
  const int error = SSL_get_error(ssl, ret);
  if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
    ERR_clear_error();
    if (error == SSL_ERROR_SYSCALL && saved_errno != 0) return ErrnoText(saved_errno);
    return "the server closed the connection";
  }
  std::string reason = crypto::TakeOpenSslReason();
  if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK) {
    absl::StrAppend(&reason, ": ", X509_verify_cert_error_string(verify));
  }
  return reason;
}

BIO* NewSocketBio(int fd) {
  const BIO_METHOD* method = SocketMethod();
  if (method == nullptr) return nullptr;
  BIO* bio = BIO_new(method);
  if (bio != nullptr) BIO_set_fd(bio, fd, BIO_NOCLOSE);
  return bio;
}

absl::StatusOr<std::unique_ptr<TlsClient>> TlsClient::Create(const LoadTls& tls,
                                                             const std::string& host) {
  VIGIL_RETURN_IF_ERROR(CheckServerName(tls.server_name));
  const std::string& name = tls.server_name.empty() ? host : tls.server_name;
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) {
    return absl::InternalError(absl::StrCat("SSL_CTX_new: ", crypto::TakeOpenSslReason()));
  }
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot require TLS 1.2: ", crypto::TakeOpenSslReason()));
  }
  // IGNORE_UNEXPECTED_EOF: a server that closes without close_notify reads as a close, as over
  // plain TCP (a response delimited by the close completes; one cut short is still an error).
  SSL_CTX_set_options(
      ctx.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // A send is retried from where it stopped (c.out + out_done), not with the same arguments.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Sessions go to the connection's slot (StoreSession), not to a cache shared by the threads.
  SSL_CTX_set_session_cache_mode(ctx.get(),
                                 SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx.get(), StoreSession);
  VIGIL_RETURN_IF_ERROR(LoadTrustAnchors(tls, ctx.get()));
  VIGIL_RETURN_IF_ERROR(LoadClientCertificate(tls, ctx.get()));
  VIGIL_RETURN_IF_ERROR(SetPeerCheck(tls, name, ctx.get()));
  return std::unique_ptr<TlsClient>(
      new TlsClient(ctx.release(), IsIpAddress(name) ? std::string() : name));
}

TlsClient::~TlsClient() { SSL_CTX_free(ctx_); }

absl::StatusOr<SslPtr> TlsClient::NewSsl(int fd) const {
  SslPtr ssl(SSL_new(ctx_));
  if (ssl == nullptr)
    return absl::InternalError(absl::StrCat("SSL_new: ", crypto::TakeOpenSslReason()));
  BIO* bio = NewSocketBio(fd);
  if (bio == nullptr)
    return absl::InternalError(absl::StrCat("BIO_new: ", crypto::TakeOpenSslReason()));
  SSL_set_bio(ssl.get(), bio, bio);  // the SSL owns the BIO
  SSL_set_connect_state(ssl.get());
  if (!sni_.empty() && SSL_set_tlsext_host_name(ssl.get(), sni_.c_str()) != 1) {
    return absl::InternalError(absl::StrCat("cannot set SNI: ", crypto::TakeOpenSslReason()));
  }
  return ssl;
}

void AttachSessionSlot(SSL* ssl, SslSessionPtr* slot) {
  SSL_set_app_data(ssl, slot);
  // Under TLS 1.3 the session comes later, in a ticket (StoreSession); the one the handshake
  // left is not resumable.
  if (slot == nullptr || !SSL_is_init_finished(ssl) || SSL_version(ssl) >= TLS1_3_VERSION) return;
  SslSessionPtr session(SSL_get1_session(ssl));
  if (session != nullptr && SSL_SESSION_is_resumable(session.get())) *slot = std::move(session);
}

absl::Status HandshakeUntil(SSL* ssl, int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl);
    if (rc == 1) return absl::OkStatus();
    short events = 0;
    switch (SSL_get_error(ssl, rc)) {
      case SSL_ERROR_WANT_READ:
        events = POLLIN;
        break;
      case SSL_ERROR_WANT_WRITE:
        events = POLLOUT;
        break;
      default:
        return absl::UnavailableError(TlsErrorReason(ssl, rc));
    }
    int ready;
    do {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("timed out");
      pollfd p{fd, events, 0};
      ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
    } while (ready == 0 || (ready < 0 && errno == EINTR));
    if (ready < 0) return absl::UnavailableError(absl::StrCat("poll: ", ErrnoText(errno)));
  }
}

}  // namespace vigil::loadgen_internal
