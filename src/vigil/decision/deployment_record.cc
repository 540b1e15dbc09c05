#include "vigil/decision/deployment_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace vigil {
namespace {

bool IsRef(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

absl::Status Damaged(const std::string& path, std::string_view what) {
  return absl::DataLossError(absl::StrCat("the model activation stored in ", path, " ",
                                          absl::string_view(what.data(), what.size()),
                                          ": restore the file from a backup, or remove it to "
                                          "start from --model / --model-ref"));
}

// The ref in member "key" ("" for null or absent); false when it is something else.
bool RefMember(const nlohmann::json& j, const char* key, std::string* out) {
  if (!j.contains(key) || j[key].is_null()) return true;
  if (!j[key].is_string() || !IsRef(j[key].get<std::string>())) return false;
  *out = j[key].get<std::string>();
  return true;
}

absl::Status WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) return absl::UnavailableError(std::strerror(error));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<DeploymentRecord>> ReadDeploymentRecord(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (ec) return absl::UnavailableError(absl::StrCat(path, ": ", ec.message()));
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat(path, ": cannot open"));
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Damaged(path, "is not a JSON object");
  DeploymentRecord r;
  if (!RefMember(j, "champion", &r.champion) || !RefMember(j, "challenger", &r.challenger) ||
      !RefMember(j, "shadow", &r.shadow)) {
    return Damaged(path, "names a model by something other than its SHA-256");
  }
  if (j.contains("traffic_weight")) {
    if (!j["traffic_weight"].is_number()) {
      return Damaged(path, "has a traffic_weight that is not a number");
    }
    r.traffic_weight = j["traffic_weight"].get<double>();
  }
  const bool weighted = r.traffic_weight > 0 && r.traffic_weight < 1;
  if (r.challenger.empty() ? r.traffic_weight != 0 : (!weighted || r.champion.empty())) {
    return Damaged(path, "holds a challenger and traffic_weight that do not go together");
  }
  if (j.contains("activated_at") && j["activated_at"].is_string()) {
    r.activated_at = j["activated_at"].get<std::string>();
  }
  return r;
}

absl::Status WriteDeploymentRecord(const std::string& path, const DeploymentRecord& record) {
  const auto ref = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  nlohmann::json j = {{"champion", ref(record.champion)},
                      {"challenger", ref(record.challenger)},
                      {"traffic_weight", record.traffic_weight},
                      {"shadow", ref(record.shadow)},
                      {"activated_at", record.activated_at}};
  const std::string bytes = j.dump() + "\n";
  const std::string temp = absl::StrCat(path, ".tmp.", ::getpid());
  const auto failed = [&](std::string_view step, const absl::Status& s) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return absl::UnavailableError(absl::StrCat("cannot store the model activation in ", path,
                                               " (", absl::string_view(step.data(), step.size()),
                                               "): ", s.message()));
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed("create", absl::UnavailableError(std::strerror(errno)));
  absl::Status written = WriteAll(fd, bytes);
  if (written.ok() && ::fsync(fd) != 0) written = absl::UnavailableError(std::strerror(errno));
  ::close(fd);
  if (!written.ok()) return failed("write", written);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return failed("rename", absl::UnavailableError(std::strerror(errno)));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (absl::Status s = SyncDirectory(dir.empty() ? "." : dir); !s.ok()) return failed("sync", s);
  return absl::OkStatus();
}

}  // namespace vigil
