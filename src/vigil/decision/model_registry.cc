#include "vigil/decision/model_registry.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/model_file.h"

namespace vigil {

std::string ModelVersionName(std::string_view ref) {
  return absl::StrCat("model@", absl::string_view(ref.data(), ref.size()).substr(0, 12));
}
namespace {

constexpr char kSuffix[] = ".model";
constexpr size_t kMinPrefix = 8;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": ", ec.message()));
  if (size > kMaxModelFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", size, " bytes; models of at most ",
                                                   kMaxModelFileBytes, " bytes are accepted"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": read error"));
  return bytes.str();
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f'); });
}

}  // namespace

absl::StatusOr<ModelRegistry> ModelRegistry::Open(std::string dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("model registry ", dir, ": ", ec.message()));
  return ModelRegistry(std::move(dir));
}

absl::StatusOr<ModelRegistry::Entry> ModelRegistry::Add(const std::string& path) const {
  VIGIL_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  VIGIL_RETURN_IF_ERROR(ParseModel(bytes, path).status());
  Entry entry;
  entry.ref = Sha256Hex(bytes);
  entry.path = (std::filesystem::path(dir_) / (entry.ref + kSuffix)).string();
  entry.bytes = bytes.size();
  if (std::filesystem::exists(entry.path)) return entry;
  const std::string temp = absl::StrCat(entry.path, ".tmp.", ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(temp);
      return absl::UnavailableError(absl::StrCat("model registry: cannot write ", temp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, entry.path, ec);
  if (ec) {
    std::filesystem::remove(temp);
    return absl::UnavailableError(
        absl::StrCat("model registry: cannot store ", entry.path, ": ", ec.message()));
  }
  return entry;
}

absl::StatusOr<std::vector<ModelRegistry::Entry>> ModelRegistry::List() const {
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = f.path().filename().string();
    if (!name.ends_with(kSuffix)) continue;
    const std::string ref = name.substr(0, name.size() - std::string_view(kSuffix).size());
    if (ref.size() != 64 || !IsHex(ref)) continue;
    entries.push_back({ref, f.path().string(), static_cast<uint64_t>(f.file_size(ec))});
  }
  if (ec) return absl::UnavailableError(absl::StrCat("model registry ", dir_, ": ", ec.message()));
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.ref < b.ref; });
  return entries;
}

absl::StatusOr<ModelRegistry::Entry> ModelRegistry::Resolve(std::string_view ref_view) const {
  const absl::string_view ref(ref_view.data(), ref_view.size());
  if (ref.size() < kMinPrefix || !IsHex(ref_view)) {
    return absl::InvalidArgumentError(absl::StrCat("model ref '", ref,
                                                   "': give the model's SHA-256, or at least ",
                                                   kMinPrefix, " of its leading hex digits"));
  }
  VIGIL_ASSIGN_OR_RETURN(std::vector<Entry> entries, List());
  std::vector<Entry> matches;
  for (Entry& e : entries) {
    if (std::string_view(e.ref).starts_with(ref_view)) matches.push_back(std::move(e));
  }
  if (matches.empty()) {
    return absl::NotFoundError(absl::StrCat("model ref '", ref, "': no such model in ", dir_));
  }
  if (matches.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model ref '", ref, "' is ambiguous: ", matches.size(), " models start with it"));
  }
  return matches.front();
}

absl::StatusOr<std::shared_ptr<const TreeEnsemble>> ModelRegistry::Load(
    std::string_view ref) const {
  VIGIL_ASSIGN_OR_RETURN(Entry entry, Resolve(ref));
  VIGIL_ASSIGN_OR_RETURN(std::string bytes, ReadFile(entry.path));
  if (Sha256Hex(bytes) != entry.ref) {
    return absl::DataLossError(
        absl::StrCat("model registry: ", entry.path, " no longer matches its SHA-256"));
  }
  return ParseModel(bytes, entry.path);
}

}  // namespace vigil
