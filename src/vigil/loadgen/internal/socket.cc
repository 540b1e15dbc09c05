#include "vigil/loadgen/internal/socket.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace vigil::loadgen_internal {

std::string ErrnoText(int err) {
  char buf[256];
  return strerror_r(err, buf, sizeof(buf));  // the GNU variant returns the message
}

absl::StatusOr<Endpoint> Resolve(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("host: cannot resolve \"", host, "\": ", gai_strerror(rc)));
  }
  Endpoint ep;
  std::memcpy(&ep.addr, found->ai_addr, found->ai_addrlen);
  ep.addr_len = found->ai_addrlen;
  freeaddrinfo(found);
  const bool bracket = absl::StrContains(host, ':');  // an IPv6 literal
  ep.authority = absl::StrCat(bracket ? "[" : "", host, bracket ? "]:" : ":", port);
  return ep;
}

Fd StartConnect(const Endpoint& ep, bool* in_progress, int* err) {
  Fd fd(socket(ep.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
  if (!fd) {
    *err = errno;
    return fd;
  }
  // A request is written whole; Nagle would hold a partial one back waiting for an ACK.
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  *in_progress = false;
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&ep.addr), ep.addr_len) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      *err = errno;
      return Fd();
    }
    *in_progress = true;  // EINTR too: the handshake goes on asynchronously
  }
  return fd;
}

absl::StatusOr<Fd> ConnectWithTimeout(const Endpoint& ep, std::chrono::milliseconds timeout) {
  bool in_progress = false;
  int err = 0;
  Fd fd = StartConnect(ep, &in_progress, &err);
  if (fd && in_progress) {
    pollfd p{fd.get(), POLLOUT, 0};
    int rc;
    do {
      rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(timeout.count(), INT32_MAX)));
    } while (rc < 0 && errno == EINTR);
    socklen_t len = sizeof(err);
    if (rc == 0) {
      err = ETIMEDOUT;
    } else if (rc < 0 || getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
      err = errno;
    }
    if (err != 0) fd.Reset();
  }
  if (!fd) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to ", ep.authority, ": ", ErrnoText(err)));
  }
  return fd;
}

}  // namespace vigil::loadgen_internal
