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
// Thread safety: the accessors are safe for concurrent use with the serving threads.
#ifndef VIGIL_LOADGEN_TEST_HTTP_SERVER_H_
#define VIGIL_LOADGEN_TEST_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace vigil::loadgen_testing {

struct TestHttpServerOptions {
  // Before every answer: simulated service time (the connection's thread waits).
  std::chrono::microseconds delay{0};
  // Before the answer to /slow.
  std::chrono::milliseconds slow_delay{2000};
};

class TestHttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<TestHttpServer>> Start(TestHttpServerOptions options);
  // Stops accepting, closes every connection (waits are cut short) and joins the threads.
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  uint16_t port() const { return port_; }
  // Connections accepted and requests read so far.
  uint64_t accepts() const { return accepts_.load(); }
  uint64_t requests() const { return requests_.load(); }

 private:
  TestHttpServer(TestHttpServerOptions options, int listen_fd, uint16_t port);
  void AcceptLoop();
  void Serve(int fd);
  // Answers one request; false when the connection is to be closed.
  bool Answer(int fd, absl::string_view path);
  void Wait(std::chrono::microseconds d);

  // Constant after construction.
  const TestHttpServerOptions options_;
  const int listen_fd_;
  const uint16_t port_;

  std::atomic<uint64_t> accepts_{0};
  std::atomic<uint64_t> requests_{0};
  absl::Notification stop_;
  std::thread acceptor_;
  absl::Mutex mu_;
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::loadgen_testing

#endif  // VIGIL_LOADGEN_TEST_HTTP_SERVER_H_
