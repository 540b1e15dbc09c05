// Runs a program to completion for end-to-end tests (the vigil binary), with its stdout and
// stderr captured into one file when "log" is given.
#ifndef VIGIL_TESTING_SUBPROCESS_H_
#define VIGIL_TESTING_SUBPROCESS_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <string>
#include <vector>

extern char** environ;

namespace vigil::testing {

// Exit status of "binary args...": its exit code, 128 + the signal when killed, -1 when it
// could not be started.
inline int RunProcess(const std::string& binary, std::vector<std::string> args,
                      const std::string& log = "") {
  args.insert(args.begin(), binary);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_SUBPROCESS_H_
