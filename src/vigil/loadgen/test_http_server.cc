#include "vigil/loadgen/test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "openssl/err.h"
#include "openssl/x509.h"
#include "vigil/crypto/pem_private_key.h"
#include "vigil/loadgen/internal/tls_client.h"

namespace vigil::loadgen_testing {
namespace {

using loadgen_internal::NewSocketBio;
using crypto::TakeOpenSslReason;

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

absl::StatusOr<SSL_CTX*> MakeServerContext(const TestHttpServerTls& tls) {
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) return absl::InternalError("SSL_CTX_new failed");
  const auto fail = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", TakeOpenSslReason()));
  };
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
      (tls.max_version != 0 && SSL_CTX_set_max_proto_version(ctx.get(), tls.max_version) != 1)) {
    return fail("TLS versions");
  }
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1) {
    return fail(tls.cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    return fail(tls.key_file);
  }
  // Sessions may be resumed (tickets); with client verification OpenSSL requires a context id.
  static constexpr unsigned char kSessionContext[] = "vigil-loadgen-test";
  SSL_CTX_set_session_id_context(ctx.get(), kSessionContext, sizeof(kSessionContext) - 1);
  if (!tls.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), tls.client_ca_file.c_str(), nullptr) != 1) {
      return fail(tls.client_ca_file);
    }
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx.release();
}

// The subject of "cert", RFC 2253.
std::string Subject(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "";
  std::string out;
  if (X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, static_cast<size_t>(n));
  }
  BIO_free(bio);
  return out;
}

}  // namespace

// One accepted connection: the socket, and its SSL over HTTPS. Blocking.
class TestHttpServer::Stream {
 public:
  // "fd" stays owned by the server; "ssl" (may be null) is freed with the Stream.
  Stream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Stream() { SSL_free(ssl_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  bool SendAll(absl::string_view data) {
    while (!data.empty()) {
      const int max = static_cast<int>(std::min<size_t>(data.size(), 1 << 20));
      const ssize_t n = ssl_ != nullptr ? SSL_write(ssl_, data.data(), max)
                                        : send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && ssl_ == nullptr && errno == EINTR) continue;
      if (n <= 0) return Failed();
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads until "buf" holds at least "size" bytes; false at EOF or error.
  bool ReadAtLeast(size_t size, std::string* buf) {
    char chunk[4096];
    while (buf->size() < size) {
      const ssize_t n = ssl_ != nullptr ? SSL_read(ssl_, chunk, sizeof(chunk))
                                        : recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && ssl_ == nullptr && errno == EINTR) continue;
      if (n <= 0) return Failed();
      buf->append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  // Ends the connection: close_notify over HTTPS (unless TLS failed), then FIN.
  void Close() {
    if (ssl_ != nullptr && !broken_) SSL_shutdown(ssl_);
    ERR_clear_error();
    shutdown(fd_, SHUT_RDWR);
  }

 private:
  bool Failed() {
    if (ssl_ != nullptr) {
      broken_ = true;
      ERR_clear_error();
    }
    return false;
  }

  const int fd_;
  SSL* const ssl_;
  bool broken_ = false;
};

absl::StatusOr<std::unique_ptr<TestHttpServer>> TestHttpServer::Start(
    TestHttpServerOptions options) {
  SSL_CTX* ctx = nullptr;
  if (!options.tls.cert_file.empty()) {
    absl::StatusOr<SSL_CTX*> made = MakeServerContext(options.tls);
    if (!made.ok()) return made.status();
    ctx = *made;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    SSL_CTX_free(ctx);
    return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 1024) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    SSL_CTX_free(ctx);
    return absl::InternalError(absl::StrCat("listen on 127.0.0.1: ", std::strerror(err)));
  }
  return std::unique_ptr<TestHttpServer>(
      new TestHttpServer(std::move(options), fd, ntohs(addr.sin_port), ctx));
}

TestHttpServer::TestHttpServer(TestHttpServerOptions options, int listen_fd, uint16_t port,
                               SSL_CTX* ctx)
    : options_(std::move(options)), listen_fd_(listen_fd), port_(port), ctx_(ctx) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TestHttpServer::~TestHttpServer() {
  stop_.Notify();
  shutdown(listen_fd_, SHUT_RDWR);  // accept() returns
  acceptor_.join();
  std::vector<std::thread> threads;
  std::vector<int> fds;
  {
    absl::MutexLock lock(&mu_);
    threads.swap(threads_);
    fds.swap(fds_);
  }
  for (int fd : fds) shutdown(fd, SHUT_RDWR);  // blocked recv/send return
  for (std::thread& t : threads) t.join();
  for (int fd : fds) close(fd);
  close(listen_fd_);
  SSL_CTX_free(ctx_);
}

std::vector<std::string> TestHttpServer::client_subjects() const {
  absl::MutexLock lock(&mu_);
  return client_subjects_;
}

std::vector<std::string> TestHttpServer::tls_failures() const {
  absl::MutexLock lock(&mu_);
  return tls_failures_;
}

void TestHttpServer::AcceptLoop() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stop_.HasBeenNotified()) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    ++accepts_;
    // A TLS 1.3 server writes its session tickets and the first response as separate records:
    // with Nagle, each waits for the client's (delayed) ACK of the one before.
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    absl::MutexLock lock(&mu_);
    fds_.push_back(fd);  // closed by the destructor, so a thread never closes a reused number
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestHttpServer::Serve(int fd) {
  SSL* ssl = nullptr;
  if (ctx_ != nullptr) {
    if (refuse_tls_.load()) {
      Stream(fd, nullptr).SendAll("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
      shutdown(fd, SHUT_RDWR);
      return;
    }
    ssl = SSL_new(ctx_);
    BIO* bio = ssl != nullptr ? NewSocketBio(fd) : nullptr;
    if (bio == nullptr) {
      SSL_free(ssl);
      shutdown(fd, SHUT_RDWR);
      return;
    }
    SSL_set_bio(ssl, bio, bio);
    if (SSL_accept(ssl) != 1) {
      {
        absl::MutexLock lock(&mu_);
        tls_failures_.push_back(TakeOpenSslReason());
      }
      SSL_free(ssl);
      shutdown(fd, SHUT_RDWR);
      return;
    }
    ++tls_handshakes_;
    if (SSL_session_reused(ssl)) ++tls_resumed_;
    if (X509* cert = SSL_get0_peer_certificate(ssl); cert != nullptr) {
      absl::MutexLock lock(&mu_);
      client_subjects_.push_back(Subject(cert));
    }
  }
  Stream stream(fd, ssl);
  std::string buf;
  for (;;) {
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!stream.ReadAtLeast(buf.size() + 1, &buf)) {
        stream.Close();
        return;
      }
    }
    const std::vector<absl::string_view> lines =
        absl::StrSplit(absl::string_view(buf).substr(0, head_end), "\r\n");
    const std::vector<absl::string_view> request_line = absl::StrSplit(lines[0], ' ');
    const std::string path(request_line.size() > 1 ? request_line[1] : "");
    size_t length = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      if (absl::StartsWithIgnoreCase(lines[i], "content-length:")) {
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(lines[i].substr(15)), &length);
      }
    }
    const size_t request_size = head_end + 4 + length;
    if (!stream.ReadAtLeast(request_size, &buf)) break;
    buf.erase(0, request_size);
    ++requests_;
    if (!Answer(stream, path)) break;
  }
  stream.Close();
}

bool TestHttpServer::Answer(Stream& stream, absl::string_view path) {
  Wait(options_.delay);
  if (path == "/drop") return false;
  if (path == "/garbage") {
    stream.SendAll("THIS IS NOT HTTP\r\n\r\n");
    return false;
  }
  if (path == "/chunked") {
    stream.SendAll("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    return false;
  }
  if (path == "/slow") Wait(options_.slow_delay);
  int status = 200;
  std::string body = R"({"degraded":false})";
  if (path == "/degraded") body = R"({"degraded":true})";
  if (absl::ConsumePrefix(&path, "/status/") && absl::SimpleAtoi(path, &status)) {
    body = absl::StrCat(R"({"status":)", status, "}");
  }
  const bool close = path == "/close";
  const std::string response = absl::StrCat(
      "HTTP/1.1 ", status, " X\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
      "\r\n", close ? "Connection: close\r\n" : "", "\r\n", body);
  return stream.SendAll(response) && !close;
}

void TestHttpServer::Wait(std::chrono::microseconds d) {
  if (d > std::chrono::microseconds(0)) stop_.WaitForNotificationWithTimeout(absl::FromChrono(d));
}

}  // namespace vigil::loadgen_testing
