// PathRedactor: keeps the server's file system out of what it answers. A response body may
// carry an engine's error message ("...: IO error: /srv/vigil/data/000012.log: No space left"),
// and a caller must learn neither where the data dir, model, keys or lists live nor what else
// the host holds. Redact() replaces
//
//   - each configured path (the data dir, the model, the policy, key and list files; as given,
//     lexically normal and absolute), with its label ("<data_dir>", "<file>"), and
//   - with RedactAnyPath, also every other absolute path of two or more components outside the
//     API's own routes ("/v1/...") with "<path>".
//
// Thread safety: immutable after construction; Redact from any thread.
#ifndef VIGIL_SERVER_PATH_REDACTOR_H_
#define VIGIL_SERVER_PATH_REDACTOR_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil {

class PathRedactor {
 public:
  PathRedactor() = default;
  // "paths": each path with the label that replaces it; empty paths are skipped.
  explicit PathRedactor(const std::vector<std::pair<std::string, std::string>>& paths);

  enum class Mode { kConfiguredPaths, kAnyPath };
  std::string Redact(std::string_view text, Mode mode) const;

 private:
  // Longest first, so that a file inside the data dir is not half replaced.
  std::vector<std::pair<std::string, std::string>> paths_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_PATH_REDACTOR_H_
