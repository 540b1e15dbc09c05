// NatsServers: real nats-server processes with JetStream for the cluster tests, started on
// loopback ports in a test's temporary directory and stopped by the test (docs/cluster.md).
// One server, or a cluster of three (or more) joined by routes, each with its own store. A
// server can be killed (SIGKILL), paused (SIGSTOP) and started again with its store, as a
// machine of a real cluster would crash, stall and come back. Test-only.
//
// The binary is $VIGIL_NATS_SERVER, else /usr/sbin/nats-server (Debian's nats-server, which
// scripts/setup installs).
#ifndef VIGIL_CLUSTER_TESTING_NATS_SERVERS_H_
#define VIGIL_CLUSTER_TESTING_NATS_SERVERS_H_

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "vigil/cluster/nats_connection.h"

extern char** environ;

namespace vigil::cluster::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice for port 0).
inline int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    socklen_t length = sizeof(address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

inline std::string NatsServerBinary() {
  const char* configured = std::getenv("VIGIL_NATS_SERVER");
  return configured != nullptr && *configured != '\0' ? configured : "/usr/sbin/nats-server";
}

class NatsServers {
 public:
  // Starts "count" servers under "dir" (which must exist) and waits until each answers
  // JetStream requests (a cluster: until its JetStream has a leader).
  static absl::StatusOr<std::unique_ptr<NatsServers>> Start(int count, const std::string& dir) {
    if (access(NatsServerBinary().c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          NatsServerBinary(), " is not installed (scripts/setup installs Debian's nats-server)"));
    }
    std::unique_ptr<NatsServers> servers(new NatsServers());
    for (int k = 0; k < count; ++k) {
      servers->servers_.push_back({FreeLoopbackPort(), FreeLoopbackPort(), -1});
    }
    for (int k = 0; k < count; ++k) {
      const std::string conf = absl::StrCat(dir, "/n", k, ".conf");
      std::ofstream out(conf);
      out << "server_name: n" << k << "\n"
          << "listen: 127.0.0.1:" << servers->servers_[k].client_port << "\n"
          << "jetstream { store_dir: \"" << dir << "/n" << k
          << "\", max_memory_store: 268435456, max_file_store: 4294967296 }\n";
      if (count > 1) {
        std::vector<std::string> routes;
        for (const Server& s : servers->servers_) {
          routes.push_back(absl::StrCat("nats-route://127.0.0.1:", s.cluster_port));
        }
        out << "cluster { name: vigil-test, listen: 127.0.0.1:" << servers->servers_[k].cluster_port
            << ", routes: [" << absl::StrJoin(routes, ", ") << "] }\n";
      }
      servers->servers_[k].conf = conf;
      servers->servers_[k].log = absl::StrCat(dir, "/n", k, ".log");
    }
    for (int k = 0; k < count; ++k) {
      if (absl::Status s = servers->Spawn(k); !s.ok()) return s;
    }
    if (absl::Status s = servers->WaitReady(std::chrono::seconds(30)); !s.ok()) return s;
    return servers;
  }

  ~NatsServers() {
    for (Server& s : servers_) {
      if (s.pid > 0) {
        kill(s.pid, SIGCONT);
        kill(s.pid, SIGTERM);
      }
    }
    for (Server& s : servers_) {
      if (s.pid <= 0) continue;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      int status = 0;
      while (waitpid(s.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > give_up) {
          kill(s.pid, SIGKILL);
          waitpid(s.pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

  int size() const { return static_cast<int>(servers_.size()); }
  std::string url(int k) const {
    return absl::StrCat("nats://127.0.0.1:", servers_[k].client_port);
  }
  std::vector<std::string> urls() const {
    std::vector<std::string> out;
    for (int k = 0; k < size(); ++k) out.push_back(url(k));
    return out;
  }
  const std::string& log(int k) const { return servers_[k].log; }

  // A client of all the servers (it reconnects to another when one goes).
  absl::StatusOr<std::unique_ptr<NatsConnection>> Connect() const {
    NatsOptions options;
    options.servers = urls();
    options.name = "test";
    return NatsConnection::Connect(options);
  }
  bool running(int k) const { return servers_[k].pid > 0; }

  // SIGKILL, reaped: the server's process is gone at once, as in a crash.
  void Kill(int k) {
    Server& s = servers_[k];
    if (s.pid <= 0) return;
    kill(s.pid, SIGKILL);
    int status = 0;
    waitpid(s.pid, &status, 0);
    s.pid = -1;
  }
  // Starts a stopped or killed server again on its ports with its store, and waits until it
  // answers JetStream requests.
  absl::Status Restart(int k) {
    if (servers_[k].pid > 0) return absl::OkStatus();
    if (absl::Status s = Spawn(k); !s.ok()) return s;
    return WaitReady(std::chrono::seconds(30));
  }
  void Pause(int k) { kill(servers_[k].pid, SIGSTOP); }
  void Resume(int k) { kill(servers_[k].pid, SIGCONT); }

  // Until every running server answers a JetStream request within "timeout".
  absl::Status WaitReady(std::chrono::milliseconds timeout) const {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    for (int k = 0; k < size(); ++k) {
      if (!running(k)) continue;
      absl::Status last = absl::UnavailableError("not tried");
      while (std::chrono::steady_clock::now() < give_up) {
        NatsOptions options;
        options.servers = {url(k)};
        options.connect_timeout = std::chrono::milliseconds(500);
        options.request_timeout = std::chrono::milliseconds(500);
        absl::StatusOr<std::unique_ptr<NatsConnection>> c = NatsConnection::Connect(options);
        last = c.ok() ? (*c)->CheckJetStream() : c.status();
        if (last.ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!last.ok()) {
        return absl::DeadlineExceededError(
            absl::StrCat("nats-server ", k, " (", log(k), ") not ready: ", last.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Server {
    int client_port;
    int cluster_port;
    pid_t pid;
    std::string conf;
    std::string log;
  };

  NatsServers() = default;

  absl::Status Spawn(int k) {
    Server& s = servers_[k];
    const std::string binary = NatsServerBinary();
    std::vector<std::string> args = {binary, "-c", s.conf};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, s.log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int spawned =
        posix_spawn(&s.pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      s.pid = -1;
      return absl::InternalError(absl::StrCat("could not start ", binary));
    }
    return absl::OkStatus();
  }

  std::vector<Server> servers_;
};

}  // namespace vigil::cluster::testing

#endif  // VIGIL_CLUSTER_TESTING_NATS_SERVERS_H_
