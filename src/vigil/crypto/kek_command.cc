#include "vigil/crypto/kek_command.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

extern char** environ;

namespace vigil::crypto {
namespace {

using Clock = std::chrono::steady_clock;

// The most the command may print on stdout: a data key is 32 or 48 bytes (64 base64 digits),
// so this is plenty, and a command that prints more is not answering with a key.
constexpr size_t kMaxStdoutBytes = 4096;
// What is kept of its stderr (for the first line); the rest is read and dropped.
constexpr size_t kMaxStderrBytes = 4096;
// The first line of stderr quoted in errors, at most.
constexpr size_t kMaxQuotedBytes = 300;

// Wipes a string that may hold key bytes (or their base64) when it goes out of scope.
struct Wiped {
  std::string bytes;
  ~Wiped() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

// A file descriptor, closed when this goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe whose ends are both above 2, so that dup2 onto 0, 1 and 2 in the child
// never overwrites another pipe's end (when this process runs with one of them closed).
absl::Status MakePipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  for (int& fd : fds) {
    if (fd > 2) continue;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int error = errno;
    ::close(fd);
    fd = moved;
    if (moved < 0) {  // this end is closed and -1 now; close the other
      for (int other : fds) {
        if (other >= 0) ::close(other);
      }
      return absl::UnavailableError(absl::StrCat("cannot make a pipe: ", std::strerror(error)));
    }
  }
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return absl::OkStatus();
}

std::string Duration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return absl::StrCat(d.count() / 1000, " s");
  return absl::StrCat(d.count(), " ms");
}

// The first line of "text" that is not blank, trimmed, with control characters shown as '?'
// and cut to kMaxQuotedBytes; "" when there is none.
std::string FirstLine(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    absl::string_view line = absl::StripAsciiWhitespace(ToAbsl(text.substr(0, end)));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    std::string out(line.substr(0, kMaxQuotedBytes));
    for (char& c : out) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (line.size() > kMaxQuotedBytes) out += "...";
    return out;
  }
  return "";
}

// ": <first line of stderr>", or " (nothing on stderr)".
std::string StderrSuffix(std::string_view err) {
  const std::string line = FirstLine(err);
  return line.empty() ? std::string(" (nothing on stderr)") : absl::StrCat(": ", line);
}

// " (stderr: <first line of stderr>)", or "" when it printed nothing there.
std::string StderrNote(std::string_view err) {
  const std::string line = FirstLine(err);
  return line.empty() ? std::string() : absl::StrCat(" (stderr: ", line, ")");
}

bool IsBase64Digit(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
}

// The data key in "out", the command's stdout. kDataLoss when it is not one line of base64;
// the message describes the output by its size only, and quotes the first line of "err", its
// stderr (in a pipeline whose decrypting step failed, that says why; the exit status is the
// last step's).
absl::StatusOr<std::string> ParseOutput(std::string_view out, std::string_view err) {
  const absl::string_view text = absl::StripAsciiWhitespace(ToAbsl(out));
  if (text.empty()) {
    return absl::DataLossError(
        absl::StrCat("the command exited 0 but printed no data key on stdout (", out.size(),
                     " bytes)", StderrNote(err)));
  }
  if (text.find('\n') != absl::string_view::npos) {
    return absl::DataLossError(absl::StrCat("the command printed more than one line on stdout (",
                                            out.size(), " bytes; one line of base64 is wanted)",
                                            StderrNote(err)));
  }
  size_t digits = 0;
  while (digits < text.size() && IsBase64Digit(text[digits])) ++digits;
  size_t padding = digits;
  while (padding < text.size() && text[padding] == '=') ++padding;
  std::string key;
  if (padding != text.size() || padding - digits > 2 || (padding > digits && padding % 4 != 0) ||
      !absl::Base64Unescape(text, &key) || key.empty()) {
    OPENSSL_cleanse(key.data(), key.size());
    return absl::DataLossError(absl::StrCat("the command's output is not base64 (", text.size(),
                                            " characters on one line; the data key in base64 is "
                                            "wanted)",
                                            StderrNote(err)));
  }
  return key;
}

// A started command: its process (the leader of its own process group) is killed with the
// whole group and reaped when this goes before Wait.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      KillGroup();
      Reap(0);
    }
  }

  void KillGroup() {
    if (pid_ > 0) ::kill(-pid_, SIGKILL);  // pid_ > 0: never kill(0) nor kill(-1)
  }
  // waitpid with "flags": the wait status when it was reaped, -1 when not yet (WNOHANG), or on
  // an error.
  int Reap(int flags) {
    if (pid_ <= 0) return -1;
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, flags);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return -1;
    pid_ = -1;
    return r < 0 ? -1 : status;
  }
  // The wait status once the command is reaped within "deadline" (-1 on an error); otherwise
  // kills its group, reaps it and returns kTimedOut.
  int WaitUntil(Clock::time_point deadline) {
    auto pause = std::chrono::milliseconds(1);
    while (true) {
      const pid_t pid = pid_;
      const int status = Reap(WNOHANG);
      if (pid_ != pid || pid_ <= 0) return status;
      if (Clock::now() >= deadline) {
        KillGroup();
        Reap(0);
        return kTimedOut;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
  }
  static constexpr int kTimedOut = -2;

 private:
  pid_t pid_;
};

// Runs "command" once with "stdin_line" on its stdin: the data key it prints.
absl::StatusOr<std::string> RunCommand(const std::string& command,
                                       const std::vector<std::string>& extra_env,
                                       std::string_view stdin_line,
                                       std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  Fd in_read, in_write, out_read, out_write, err_read, err_write;
  for (auto [r, w] : {std::pair<Fd*, Fd*>{&in_read, &in_write},
                      {&out_read, &out_write},
                      {&err_read, &err_write}}) {
    if (absl::Status s = MakePipe(*r, *w); !s.ok()) return s;
  }
  // The line goes into the pipe before the command starts and the pipe is closed after it: a
  // wrapped key (at most 2048 bytes for RSA-16384, 2.7 KiB in base64) fits in a pipe's buffer
  // (at least one 4 KiB page), so nothing here blocks, and a command that exits without
  // reading it cannot raise SIGPIPE in this process.
  if (::fcntl(in_write.get(), F_SETFL, O_NONBLOCK) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot set up the command's stdin: ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < stdin_line.size()) {
    const ssize_t n =
        ::write(in_write.get(), stdin_line.data() + written, stdin_line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("the wrapped key (", stdin_line.size(),
                                                     " bytes in base64) does not fit the command's "
                                                     "stdin pipe"));
    }
    written += static_cast<size_t>(n);
  }
  in_write.Reset();

  // This process's environment without the two variables the command is given.
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("VIGIL_KEK_ID=") || entry.starts_with("VIGIL_KEK_ALGORITHM=")) continue;
    env_strings.emplace_back(entry);
  }
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", command_arg = command;
  char* argv[] = {sh.data(), dash_c.data(), command_arg.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &all_signals);
  // Its own session: a process group to kill as a whole on timeout, and no terminal to prompt
  // on (a prompt would wait for the timeout).
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, sh.c_str(), &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot start /bin/sh for the command: ", std::strerror(spawned)));
  }
  Child child(pid);
  in_read.Reset();
  out_write.Reset();
  err_write.Reset();

  // Its stdout and stderr until both end, the output grows too long, or the time is up.
  Wiped out;
  out.bytes.reserve(kMaxStdoutBytes + 1024);  // never reallocated: no unwiped copy left behind
  std::string err;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd fds[2] = {{out_open ? out_read.get() : -1, POLLIN, 0},
                     {err_open ? err_read.get() : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1'000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot read the command's output: ", std::strerror(errno)));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[1024];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      if (i == 1) {
        err.append(buf, std::min(static_cast<size_t>(n), kMaxStderrBytes - err.size()));
        continue;
      }
      out.bytes.append(buf, static_cast<size_t>(n));
      OPENSSL_cleanse(buf, sizeof(buf));
      if (out.bytes.size() > kMaxStdoutBytes) {
        child.KillGroup();
        child.Reap(0);
        return absl::DataLossError(absl::StrCat("the command printed more than ", kMaxStdoutBytes,
                                                " bytes on stdout; it was stopped (the data key "
                                                "in base64, one line, is wanted)",
                                                StderrNote(err)));
      }
    }
  }
  const int status = (out_open || err_open) ? Child::kTimedOut : child.WaitUntil(deadline);
  if (status == Child::kTimedOut) {
    child.KillGroup();
    child.Reap(0);
    return absl::DeadlineExceededError(absl::StrCat("the command did not finish within ",
                                                    Duration(timeout), "; it was killed",
                                                    StderrNote(err)));
  }
  if (status < 0) {
    return absl::UnavailableError("the command's exit status cannot be read");
  }
  if (WIFSIGNALED(status)) {
    return absl::UnavailableError(
        absl::StrCat("the command was killed by signal ", WTERMSIG(status), StderrSuffix(err)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(
        absl::StrCat("the command exited with status ", WEXITSTATUS(status), StderrSuffix(err)));
  }
  return ParseOutput(out.bytes, err);
}

}  // namespace

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKeyWithCommand(const std::string& public_key_file,
                                                             std::string command,
                                                             KekCommandOptions options) {
  if (absl::StripAsciiWhitespace(command).empty()) {
    return absl::InvalidArgumentError("key-management hook: the command is empty");
  }
  if (options.timeout.count() <= 0) {
    return absl::InvalidArgumentError("key-management hook: the timeout must be positive");
  }
  absl::StatusOr<KeyEncryptionKey> key = KeyEncryptionKey::LoadPublicKeyFile(public_key_file);
  if (!key.ok()) return key.status();
  const std::vector<std::string> env = {
      absl::StrCat("VIGIL_KEK_ID=", key->key_id()),
      absl::StrCat("VIGIL_KEK_ALGORITHM=", ToAbsl(KeyWrapAlgorithmName(key->algorithm())))};
  const std::chrono::milliseconds timeout = options.timeout;
  return KeyEncryptionKey::WithUnwrapHook(
      *std::move(key),
      [command = std::move(command), env,
       timeout](std::string_view wrapped) -> absl::StatusOr<std::string> {
        std::string line;
        absl::Base64Escape(ToAbsl(wrapped), &line);
        line.push_back('\n');
        return RunCommand(command, env, line, timeout);
      });
}

}  // namespace vigil::crypto
