// TCP client sockets for the load generator: an owning file descriptor, a resolved server
// address, and non-blocking connects (started for the event loop, or waited for at startup).
//
// Private to the loadgen module. Thread safety: Fd and Endpoint are externally synchronized;
// the functions are thread-compatible.
#ifndef VIGIL_LOADGEN_INTERNAL_SOCKET_H_
#define VIGIL_LOADGEN_INTERNAL_SOCKET_H_

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace vigil::loadgen_internal {

// The text of errno value "err" ("Connection refused").
std::string ErrnoText(int err);

// Owns a file descriptor: closes it on destruction or Reset().
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string authority;  // host:port ([host]:port for IPv6), for the Host header and messages
};

// Resolves "host" (a numeric address or a name; the first address is used).
// Errors: kInvalidArgument naming the host.
absl::StatusOr<Endpoint> Resolve(const std::string& host, uint16_t port);

// Opens a non-blocking TCP socket (TCP_NODELAY) and starts connecting it to "ep". Returns the
// socket, with "*in_progress" set while the handshake is unfinished (it completes when the
// socket turns writable; SO_ERROR then tells the outcome), or no socket with "*err" set to the
// errno.
Fd StartConnect(const Endpoint& ep, bool* in_progress, int* err);

// Connects to "ep", waiting at most "timeout". The socket is non-blocking.
// Errors: kUnavailable with host:port and the errno text.
absl::StatusOr<Fd> ConnectWithTimeout(const Endpoint& ep, std::chrono::milliseconds timeout);

}  // namespace vigil::loadgen_internal

#endif  // VIGIL_LOADGEN_INTERNAL_SOCKET_H_
