#include "vigil/server/path_redactor.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/ascii.h"

namespace vigil {
namespace {

// Characters that continue a path's name: a match must not start or end inside one.
bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}
bool IsPathChar(char c) { return IsNameChar(c) || c == '/' || c == '~' || c == '+' || c == '@'; }

// The forms in which a configured path may be printed.
std::vector<std::string> Spellings(const std::string& path) {
  std::vector<std::string> out = {path};
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  out.push_back(trimmed);
  std::error_code ec;
  out.push_back(std::filesystem::path(trimmed).lexically_normal().string());
  const std::filesystem::path absolute = std::filesystem::absolute(trimmed, ec);
  if (!ec) out.push_back(absolute.lexically_normal().string());
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(trimmed, ec);
  if (!ec) out.push_back(canonical.string());
  for (std::string& s : out) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
  }
  return out;
}

// Replaces every absolute path of two or more components that is not an API route.
std::string RedactAbsolutePaths(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    // After a label ("<data_dir>/models/..."), the rest is a name inside it, not a path.
    const bool after_name = i > 0 && (IsPathChar(text[i - 1]) || text[i - 1] == '>');
    const bool starts =
        text[i] == '/' && !after_name && i + 1 < text.size() && IsNameChar(text[i + 1]);
    if (!starts) {
      out.push_back(text[i++]);
      continue;
    }
    size_t end = i + 1;
    int slashes = 1;
    while (end < text.size() && IsPathChar(text[end])) slashes += text[end++] == '/';
    const std::string_view token(text.data() + i, end - i);
    const bool route = token.starts_with("/v1/");
    // "/a/" counts as two components only with a name after the second slash.
    const bool two_components = slashes >= 2 && token.find('/', 1) + 1 < token.size();
    if (route || !two_components) {
      out.append(token);
    } else {
      out.append("<path>");
    }
    i = end;
  }
  return out;
}

}  // namespace

PathRedactor::PathRedactor(const std::vector<std::pair<std::string, std::string>>& paths) {
  for (const auto& [path, label] : paths) {
    if (path.empty()) continue;
    for (std::string& s : Spellings(path)) {
      // "/" or "." would match everywhere.
      if (s.size() < 2 || s == "..") continue;
      paths_.emplace_back(std::move(s), label);
    }
  }
  std::sort(paths_.begin(), paths_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  paths_.erase(std::unique(paths_.begin(), paths_.end()), paths_.end());
}

std::string PathRedactor::Redact(std::string_view text, Mode mode) const {
  std::string out(text);
  for (const auto& [path, label] : paths_) {
    size_t at = 0;
    while ((at = out.find(path, at)) != std::string::npos) {
      const size_t end = at + path.size();
      // Whole names only: "data" in "database" or "/srv/data2" is another name.
      const bool whole = (at == 0 || !IsNameChar(out[at - 1]) || path[0] == '/') &&
                         (end == out.size() || !IsNameChar(out[end]));
      // A bare word ("state") is a path only where a name follows it ("state/..."): the
      // same word in a sentence stays.
      const bool bare = path.find_first_of("/.") == std::string::npos;
      const bool inside_another = at > 0 && out[at - 1] == '/' && path[0] != '/';
      if (!whole || inside_another || (bare && (end == out.size() || out[end] != '/'))) {
        at = end;
        continue;
      }
      out.replace(at, path.size(), label);
      at += label.size();
    }
  }
  return mode == Mode::kAnyPath ? RedactAbsolutePaths(out) : out;
}

}  // namespace vigil
