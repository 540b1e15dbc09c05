#include "vigil/loadgen/test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

namespace vigil::loadgen_testing {
namespace {

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until "buf" holds at least "size" bytes; false at EOF or error.
bool ReadAtLeast(int fd, size_t size, std::string* buf) {
  char chunk[4096];
  while (buf->size() < size) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf->append(chunk, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestHttpServer>> TestHttpServer::Start(
    TestHttpServerOptions options) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 1024) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("listen on 127.0.0.1: ", std::strerror(err)));
  }
  return std::unique_ptr<TestHttpServer>(
      new TestHttpServer(std::move(options), fd, ntohs(addr.sin_port)));
}

TestHttpServer::TestHttpServer(TestHttpServerOptions options, int listen_fd, uint16_t port)
    : options_(std::move(options)), listen_fd_(listen_fd), port_(port) {
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
    absl::MutexLock lock(&mu_);
    fds_.push_back(fd);  // closed by the destructor, so a thread never closes a reused number
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestHttpServer::Serve(int fd) {
  std::string buf;
  for (;;) {
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!ReadAtLeast(fd, buf.size() + 1, &buf)) {
        shutdown(fd, SHUT_RDWR);
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
    if (!ReadAtLeast(fd, request_size, &buf)) break;
    buf.erase(0, request_size);
    ++requests_;
    if (!Answer(fd, path)) break;
  }
  shutdown(fd, SHUT_RDWR);
}

bool TestHttpServer::Answer(int fd, absl::string_view path) {
  Wait(options_.delay);
  if (path == "/drop") return false;
  if (path == "/garbage") {
    SendAll(fd, "THIS IS NOT HTTP\r\n\r\n");
    return false;
  }
  if (path == "/chunked") {
    SendAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
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
  return SendAll(fd, response) && !close;
}

void TestHttpServer::Wait(std::chrono::microseconds d) {
  if (d > std::chrono::microseconds(0)) stop_.WaitForNotificationWithTimeout(absl::FromChrono(d));
}

}  // namespace vigil::loadgen_testing
