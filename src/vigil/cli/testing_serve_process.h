// What the tests of `vigil serve` as a child process share (serve_crash_test.cc,
// serve_fault_test.cc): the child itself, a policy whose decisions state the originator's
// payment count, and transactions for it. Test-only.
#ifndef VIGIL_CLI_TESTING_SERVE_PROCESS_H_
#define VIGIL_CLI_TESTING_SERVE_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"

namespace vigil::testing {

// Every decision states the originator's payments in the last 24 h; the transactions of Tx all
// share one timestamp, so that is every payment of the account the feature state holds.
inline constexpr char kCountingPolicy[] = R"(version: "count"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: amount_reporting > 0
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

inline std::string Tx(const std::string& id, const std::string& account) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":")", account, R"(","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":"9000.00","currency":"USD"}})");
}

// The count a decision of kCountingPolicy states; -1 when it states none.
inline int CountOf(const nlohmann::json& decision) {
  if (!decision.is_object() || !decision.contains("reasons") || !decision["reasons"].is_array()) {
    return -1;
  }
  for (const nlohmann::json& reason : decision["reasons"]) {
    if (reason.value("code", "") == "count") return std::atoi(reason.value("text", "").c_str());
  }
  return -1;
}

// A `vigil serve` child: stdout read through a pipe for its "listening on" line (and kept open
// until the child is reaped, so that a late write cannot kill it with SIGPIPE), stderr appended
// to a log file. The destructor kills and reaps a child still running.
class ServeProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ServeProcess>> Start(std::vector<std::string> argv,
                                                             const std::string& log) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    auto p = std::unique_ptr<ServeProcess>(new ServeProcess());
    const int spawned =
        posix_spawn(&p->pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    p->out_ = out[0];
    if (spawned != 0) {
      p->pid_ = -1;
      return absl::InternalError(absl::StrCat("cannot start ", argv[0], ": ",
                                              std::strerror(spawned)));
    }
    // The line comes once the server is ready (the model loaded, the log opened).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::string text;
    constexpr char kListening[] = "vigil serve: listening on 127.0.0.1:";
    while (text.find('\n') == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd pfd{p->out_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) == 0) {
        return absl::DeadlineExceededError("no 'listening on' line within 60 s; see " + log);
      }
      char buf[256];
      const ssize_t n = ::read(p->out_, buf, sizeof(buf));
      if (n == 0) {
        return absl::UnavailableError(absl::StrCat("the server exited with status ", p->Wait(),
                                                   " before listening: ",
                                                   ::vigil::testing::ReadFile(log)));
      }
      if (n > 0) text.append(buf, static_cast<size_t>(n));
    }
    const size_t at = text.find(kListening);
    int port = 0;
    if (at == std::string::npos ||
        !absl::SimpleAtoi(text.substr(at + sizeof(kListening) - 1,
                                      text.find('\n') - at - (sizeof(kListening) - 1)),
                          &port)) {
      return absl::DataLossError("unexpected first stdout line: " + text);
    }
    p->port_ = static_cast<uint16_t>(port);
    return p;
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
    if (out_ >= 0) ::close(out_);
  }

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  // Sends "signal" and reaps the child: its exit code, or 128 + the signal that ended it; -1
  // when it was reaped already.
  int Stop(int signal) {
    if (pid_ <= 0) return -1;  // never kill(-1, ...): that is every process of the user
    ::kill(pid_, signal);
    return Wait();
  }

 private:
  ServeProcess() = default;
  int Wait() {
    if (pid_ <= 0) return -1;  // never waitpid(-1, ...): that is any child
    int status = 0;
    const pid_t reaped = ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (reaped <= 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid_ = -1;
  int out_ = -1;
  uint16_t port_ = 0;
};

}  // namespace vigil::testing

#endif  // VIGIL_CLI_TESTING_SERVE_PROCESS_H_
