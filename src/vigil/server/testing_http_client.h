// TestHttpClient: a small blocking HTTP/1.1 client over POSIX sockets for the server's tests
// (TESTONLY). It speaks to a real server over loopback: one connection, kept alive across
// requests, every wait bounded by a deadline (a test never hangs on a broken server), and raw
// bytes may be sent for malformed or slow requests.
//
//   TestHttpClient client(port);
//   absl::StatusOr<TestHttpResponse> r = client.Request("POST", "/v1/score", body);
//   ASSERT_OK(r);
//   EXPECT_EQ(r->status, 200);
//
// Responses are read by Content-Length (what the server always sends) or, without one, until the
// peer closes. Chunked responses are not supported (the server never sends them).
//
// HTTPS: give TestTlsOptions; the constructor then also does the TLS handshake (OpenSSL,
// non-blocking under the same deadlines), and connected() is false if it failed (error() says
// why). Everything else works the same over TLS.
//
//   TestHttpClient client(port, {.ca_file = pki.CaCert(), .cert_file = c.cert, .key_file = c.key});
//   ASSERT_TRUE(client.connected()) << client.error();
//
// Under TLS 1.3 the server checks a client certificate after the client's handshake has
// completed: a refused client certificate shows as a failed first read, not as !connected().
//
// Thread safety: externally synchronized (one client per thread).
#ifndef VIGIL_SERVER_TESTING_HTTP_CLIENT_H_
#define VIGIL_SERVER_TESTING_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "openssl/err.h"
#include "openssl/ssl.h"
#include "openssl/x509.h"
#include "openssl/x509_vfy.h"

namespace vigil::testing {

struct TestHttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header of that name (case-insensitive); "" when absent.
  std::string Header(absl::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (absl::EqualsIgnoreCase(n, name)) return v;
    }
    return "";
  }
  bool HasHeader(absl::string_view name) const {
    for (const auto& h : headers) {
      if (absl::EqualsIgnoreCase(h.first, name)) {
        return true;
      }
    }
    return false;
  }
  // The body as JSON; a discarded value when it is not JSON.
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// HTTPS for TestHttpClient.
struct TestTlsOptions {
  std::string ca_file;    // PEM: the CAs the server certificate must chain to
  std::string cert_file;  // PEM: a client certificate for mutual TLS; "" none
  std::string key_file;   // PEM: its key
  // Sent as SNI and verified against the certificate; an IP address is verified against its
  // IP subjectAltName instead (and not sent).
  std::string server_name = "localhost";
  std::string min_version;  // "1.2" or "1.3"; "": OpenSSL's default
  std::string max_version;  // likewise
};

class TestHttpClient {
 public:
  using Millis = std::chrono::milliseconds;

  // Connects to 127.0.0.1:port; connected() says whether that worked (error() why not).
  // "timeout" bounds every later wait for the server (reading a response, writing a request).
  // "source": the local IPv4 address to connect from (another loopback address such as
  // "127.0.0.2" is another client to the server); "" for the kernel's choice.
  explicit TestHttpClient(uint16_t port, Millis timeout = Millis(10000),
                          const std::string& source = "")
      : timeout_(timeout) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      error_ = absl::StrCat("socket: ", std::strerror(errno));
      return;
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (!source.empty()) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      if (::inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
        error_ = absl::StrCat("bind to ", source, ": ", std::strerror(errno));
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      error_ = absl::StrCat("connect to port ", port, ": ", std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
    }
  }
  // Connects to 127.0.0.1:port and does the TLS handshake, both within "timeout".
  TestHttpClient(uint16_t port, const TestTlsOptions& tls, Millis timeout = Millis(10000))
      : TestHttpClient(port, timeout) {
    if (connected()) StartTls(tls);
  }
  ~TestHttpClient() { Close(); }
  TestHttpClient(const TestHttpClient&) = delete;
  TestHttpClient& operator=(const TestHttpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  // Closes the socket at once (under TLS without a close_notify).
  void Close() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ssl_ = nullptr;
    if (tls_ctx_ != nullptr) SSL_CTX_free(tls_ctx_);
    tls_ctx_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Under TLS: the negotiated protocol ("TLSv1.3") and cipher; "" otherwise.
  std::string tls_version() const { return ssl_ != nullptr ? SSL_get_version(ssl_) : ""; }
  std::string tls_cipher() const {
    const char* name = ssl_ != nullptr ? SSL_get_cipher_name(ssl_) : nullptr;
    return name != nullptr ? name : "";
  }

  // Sends "bytes" as they are.
  absl::Status SendRaw(absl::string_view bytes) {
    if (fd_ < 0) return absl::FailedPreconditionError("not connected: " + error_);
    const auto deadline = Clock::now() + timeout_;
    if (ssl_ != nullptr) return SendTls(bytes, deadline);
    while (!bytes.empty()) {
      if (absl::Status s = Wait(POLLOUT, deadline); !s.ok()) return s;
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  // "METHOD target HTTP/1.1" with Host, the headers given, and (when "body" is not empty or the
  // method is POST) Content-Type and Content-Length.
  static std::string Format(absl::string_view method, absl::string_view target,
                            absl::string_view body = "",
                            const std::vector<std::pair<std::string, std::string>>& headers = {},
                            absl::string_view content_type = "application/json") {
    std::string out = absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (const auto& [name, value] : headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
    if (!body.empty() || method == "POST") {
      if (!content_type.empty()) absl::StrAppend(&out, "Content-Type: ", content_type, "\r\n");
      absl::StrAppend(&out, "Content-Length: ", body.size(), "\r\n");
    }
    absl::StrAppend(&out, "\r\n", body);
    return out;
  }

  // Sends one request and reads its response.
  absl::StatusOr<TestHttpResponse> Request(
      absl::string_view method, absl::string_view target, absl::string_view body = "",
      const std::vector<std::pair<std::string, std::string>>& headers = {},
      absl::string_view content_type = "application/json") {
    if (absl::Status s = SendRaw(Format(method, target, body, headers, content_type)); !s.ok()) {
      return s;
    }
    return ReadResponse();
  }

  // Reads one response. Errors: kDeadlineExceeded (nothing complete within the timeout),
  // kUnavailable (the server closed the connection first), kDataLoss (not HTTP).
  absl::StatusOr<TestHttpResponse> ReadResponse() {
    const auto deadline = Clock::now() + timeout_;
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (absl::Status s = Fill(deadline); !s.ok()) return s;
    }
    TestHttpResponse r;
    const std::string head = buffer_.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12) {
      return absl::DataLossError(absl::StrCat("not an HTTP status line: '", status_line, "'"));
    }
    r.status = std::atoi(status_line.substr(9, 3).c_str());
    bool has_length = false;
    size_t length = 0;
    while (line_end != std::string::npos) {
      const size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line = head.substr(start, line_end == std::string::npos
                                                      ? std::string::npos
                                                      : line_end - start);
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      if (absl::EqualsIgnoreCase(name, "Content-Length")) {
        has_length = true;
        length = static_cast<size_t>(std::strtoull(value.c_str(), nullptr, 10));
      }
      r.headers.emplace_back(std::move(name), std::move(value));
    }
    buffer_.erase(0, header_end + 4);
    if (has_length) {
      while (buffer_.size() < length) {
        if (absl::Status s = Fill(deadline); !s.ok()) {
          return absl::Status(s.code(), absl::StrCat(s.message(), " (body ", buffer_.size(),
                                                     " of ", length, " bytes)"));
        }
      }
      r.body = buffer_.substr(0, length);
      buffer_.erase(0, length);
    } else {
      while (true) {
        absl::Status s = Fill(deadline);
        if (absl::IsUnavailable(s)) break;
        if (!s.ok()) return s;
      }
      r.body = std::move(buffer_);
      buffer_.clear();
    }
    return r;
  }

  // Waits up to "within" for the server to close the connection: true once it has (EOF or
  // reset), false if it is still open then or sent data instead.
  bool WaitForClose(Millis within) {
    if (fd_ < 0) return true;
    return absl::IsUnavailable(Fill(Clock::now() + within));  // else: the deadline, or data
  }

 private:
  using Clock = std::chrono::steady_clock;

  absl::Status Wait(short events, Clock::time_point deadline) {
    while (true) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
      if (left <= 0) return absl::DeadlineExceededError("timed out waiting for the server");
      pollfd p{fd_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left));
      if (n > 0) return absl::OkStatus();
      if (n < 0 && errno != EINTR) {
        return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
      }
    }
  }

  // Appends what arrives to buffer_. kUnavailable when the peer closed (or reset) it.
  absl::Status Fill(Clock::time_point deadline) {
    if (fd_ < 0) return absl::UnavailableError("not connected");
    if (ssl_ != nullptr) return FillTls(deadline);
    if (absl::Status s = Wait(POLLIN, deadline); !s.ok()) return s;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return absl::OkStatus();
    }
    if (n == 0) return absl::UnavailableError("the server closed the connection");
    if (errno == EINTR || errno == EAGAIN) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
  }

  static int TlsVersion(const std::string& v) {
    if (v == "1.2") return TLS1_2_VERSION;
    if (v == "1.3") return TLS1_3_VERSION;
    return 0;  // OpenSSL's default
  }

  // The reason of the last OpenSSL failure, clearing the queue.
  std::string TlsReason(int ssl_error) const {
    std::string out;
    if (const unsigned long e = ERR_peek_last_error(); e != 0) {
      const char* reason = ERR_reason_error_string(e);
      out = reason != nullptr ? reason : absl::StrCat("OpenSSL error ", e);
    } else if (ssl_error == SSL_ERROR_SYSCALL) {
      out = errno != 0 ? std::strerror(errno) : "unexpected EOF";
    } else {
      out = absl::StrCat("SSL error ", ssl_error);
    }
    if (ssl_ != nullptr) {
      if (const long v = SSL_get_verify_result(ssl_); v != X509_V_OK) {
        absl::StrAppend(&out, ": ", X509_verify_cert_error_string(v));
      }
    }
    ERR_clear_error();
    return out;
  }

  // Sets up TLS on the connected socket and does the handshake; on failure sets error_ and
  // closes.
  void StartTls(const TestTlsOptions& tls) {
    const auto fail = [this](const std::string& what) {
      error_ = absl::StrCat(what, ": ", TlsReason(SSL_ERROR_SSL));
      Close();
    };
    ERR_clear_error();
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);  // OpenSSL waits on WANT_*
    tls_ctx_ = SSL_CTX_new(TLS_client_method());
    if (tls_ctx_ == nullptr) return fail("SSL_CTX_new");
    if (SSL_CTX_load_verify_locations(tls_ctx_, tls.ca_file.c_str(), nullptr) != 1) {
      return fail("CA file " + tls.ca_file);
    }
    SSL_CTX_set_verify(tls_ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_min_proto_version(tls_ctx_, TlsVersion(tls.min_version));
    SSL_CTX_set_max_proto_version(tls_ctx_, TlsVersion(tls.max_version));
    if (!tls.cert_file.empty()) {
      if (SSL_CTX_use_certificate_chain_file(tls_ctx_, tls.cert_file.c_str()) != 1) {
        return fail("client certificate " + tls.cert_file);
      }
      if (SSL_CTX_use_PrivateKey_file(tls_ctx_, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
        return fail("client key " + tls.key_file);
      }
    }
    ssl_ = SSL_new(tls_ctx_);
    if (ssl_ == nullptr) return fail("SSL_new");
    SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_set_fd(ssl_, fd_);
    in_addr ip{};
    if (::inet_pton(AF_INET, tls.server_name.c_str(), &ip) == 1) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), tls.server_name.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl_, tls.server_name.c_str());
      SSL_set1_host(ssl_, tls.server_name.c_str());
    }
    const auto deadline = Clock::now() + timeout_;
    while (true) {
      ERR_clear_error();
      errno = 0;
      const int ret = SSL_connect(ssl_);
      if (ret == 1) return;
      if (absl::Status s = WaitTls(SSL_get_error(ssl_, ret), deadline); !s.ok()) {
        error_ = absl::StrCat("TLS handshake: ", s.message());
        Close();
        return;
      }
    }
  }

  // After an SSL call returned "ssl_error": OK once it may be retried (the socket is ready);
  // else kDeadlineExceeded, or kUnavailable with the reason (closed, alert, verify failure).
  absl::Status WaitTls(int ssl_error, Clock::time_point deadline) {
    switch (ssl_error) {
      case SSL_ERROR_WANT_READ:
        return Wait(POLLIN, deadline);
      case SSL_ERROR_WANT_WRITE:
        return Wait(POLLOUT, deadline);
      case SSL_ERROR_ZERO_RETURN:
        return absl::UnavailableError("the server closed the connection (close_notify)");
      default:
        return absl::UnavailableError(TlsReason(ssl_error));
    }
  }

  absl::Status SendTls(absl::string_view bytes, Clock::time_point deadline) {
    while (!bytes.empty()) {
      ERR_clear_error();
      errno = 0;
      const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
      if (n > 0) {
        bytes.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (absl::Status s = WaitTls(SSL_get_error(ssl_, n), deadline); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status FillTls(Clock::time_point deadline) {
    while (true) {
      char chunk[65536];
      ERR_clear_error();
      errno = 0;
      const int n = SSL_read(ssl_, chunk, sizeof(chunk));
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
        return absl::OkStatus();
      }
      if (absl::Status s = WaitTls(SSL_get_error(ssl_, n), deadline); !s.ok()) return s;
    }
  }

  int fd_ = -1;
  Millis timeout_;
  std::string error_;
  std::string buffer_;  // received, not yet returned
  SSL_CTX* tls_ctx_ = nullptr;  // TLS only
  SSL* ssl_ = nullptr;          // TLS only
};

// One request on a fresh connection.
inline absl::StatusOr<TestHttpResponse> HttpOnce(
    uint16_t port, absl::string_view method, absl::string_view target, absl::string_view body = "",
    const std::vector<std::pair<std::string, std::string>>& headers = {},
    absl::string_view content_type = "application/json") {
  TestHttpClient client(port);
  if (!client.connected()) return absl::UnavailableError(client.error());
  return client.Request(method, target, body, headers, content_type);
}

}  // namespace vigil::testing

#endif  // VIGIL_SERVER_TESTING_HTTP_CLIENT_H_
