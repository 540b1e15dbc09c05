// TestHttpServer: a small, real HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for the load
// generator's tests; one thread per connection, keep-alive, Content-Length bodies. The request
// path picks the answer, so a test states the exact mix it expects:
//
//   /degraded      200 {"degraded":true}
//   /status/NNN    status NNN, a small JSON body
//   /close         200 with Connection: close, then the server closes
//   /garbage       bytes that are not HTTP, then the server closes
//   /drop          the server closes without answering
//   /chunked       200 with Transfer-Encoding: chunked, then the server closes
//   /slow          200 after TestHttpServerOptions::slow_delay
//   anything else  200 {"degraded":false}
//
// Every answer is preceded by TestHttpServerOptions::delay. Test-only: linked into the loadgen
// test binary, never into the library.
//
// HTTPS: with TestHttpServerOptions::tls.cert_file set, every connection starts with a TLS
// handshake (OpenSSL, blocking), optionally requiring a client certificate; the accessors tell
// what the handshakes saw (client subjects, failures, resumed sessions).
//
// Thread safety: the accessors are safe for concurrent use with the serving threads.
#ifndef VIGIL_LOADGEN_TEST_HTTP_SERVER_H_
#define VIGIL_LOADGEN_TEST_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "openssl/ssl.h"

namespace vigil::loadgen_testing {

struct TestHttpServerTls {
  // Both set: HTTPS with this certificate (PEM, chain after it) and its unencrypted key.
  std::string cert_file;
  std::string key_file;
  // Mutual TLS: a client certificate is required and must chain to the CAs in this PEM file.
  std::string client_ca_file;
  // 0: up to the newest version OpenSSL has (TLS 1.3); TLS1_2_VERSION (0x0303): TLS 1.2 only.
  int max_version = 0;
};

struct TestHttpServerOptions {
  // Before every answer: simulated service time (the connection's thread waits).
  std::chrono::microseconds delay{0};
  // Before the answer to /slow.
  std::chrono::milliseconds slow_delay{2000};
  TestHttpServerTls tls;
};

class TestHttpServer {
 public:
  // Errors: kInvalidArgument for unusable TLS files, kInternal when it cannot listen.
  static absl::StatusOr<std::unique_ptr<TestHttpServer>> Start(TestHttpServerOptions options);
  // Stops accepting, closes every connection (waits are cut short) and joins the threads.
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  uint16_t port() const { return port_; }
  // Connections accepted and requests read so far.
  uint64_t accepts() const { return accepts_.load(); }
  uint64_t requests() const { return requests_.load(); }

  // HTTPS: handshakes completed, and how many of them resumed a session.
  uint64_t tls_handshakes() const { return tls_handshakes_.load(); }
  uint64_t tls_resumed() const { return tls_resumed_.load(); }
  // The subject (RFC 2253, "CN=name,O=vigil tests") of the verified client certificate of every
  // completed handshake that had one, in completion order.
  std::vector<std::string> client_subjects() const;
  // Why handshakes failed on the server's side ("peer did not return a certificate").
  std::vector<std::string> tls_failures() const;

  // From now on, new connections of an HTTPS server get a plain-text HTTP 400 instead of a
  // handshake, and are closed: the client's handshake fails.
  void RefuseTls() { refuse_tls_.store(true); }

 private:
  class Stream;

  TestHttpServer(TestHttpServerOptions options, int listen_fd, uint16_t port, SSL_CTX* ctx);
  void AcceptLoop();
  void Serve(int fd);
  // Answers one request; false when the connection is to be closed.
  bool Answer(Stream& stream, absl::string_view path);
  void Wait(std::chrono::microseconds d);

  // Constant after construction.
  const TestHttpServerOptions options_;
  const int listen_fd_;
  const uint16_t port_;
  SSL_CTX* const ctx_;  // owned; nullptr without TLS

  std::atomic<uint64_t> accepts_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> tls_handshakes_{0};
  std::atomic<uint64_t> tls_resumed_{0};
  std::atomic<bool> refuse_tls_{false};
  absl::Notification stop_;
  std::thread acceptor_;
  mutable absl::Mutex mu_;
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> client_subjects_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> tls_failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::loadgen_testing

#endif  // VIGIL_LOADGEN_TEST_HTTP_SERVER_H_
