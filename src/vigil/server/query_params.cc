#include "vigil/server/query_params.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace vigil {
namespace {

absl::string_view Absl(std::string_view s) { return {s.data(), s.size()}; }
std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace

std::optional<std::string_view> QueryParam(std::string_view query, std::string_view name) {
  for (absl::string_view part : absl::StrSplit(Absl(query), '&')) {
    const size_t eq = part.find('=');
    if (View(part.substr(0, eq)) == name) {
      return eq == absl::string_view::npos ? std::string_view() : View(part.substr(eq + 1));
    }
  }
  return std::nullopt;
}

std::optional<std::string> DecodedQueryParam(std::string_view query, std::string_view name) {
  const std::optional<std::string_view> raw = QueryParam(query, name);
  if (!raw.has_value()) return std::nullopt;
  std::string out;
  out.reserve(raw->size());
  for (size_t i = 0; i < raw->size(); ++i) {
    const char c = (*raw)[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c != '%') {
      out.push_back(c);
    } else {
      unsigned value = 0;
      if (i + 2 >= raw->size()) return std::nullopt;
      const auto [end, ec] = std::from_chars(raw->data() + i + 1, raw->data() + i + 3, value, 16);
      if (ec != std::errc() || end != raw->data() + i + 3) return std::nullopt;
      out.push_back(static_cast<char>(value));
      i += 2;
    }
  }
  return out;
}

absl::StatusOr<std::optional<uint64_t>> WholeNumberParam(std::string_view query,
                                                         std::string_view name) {
  const std::optional<std::string_view> raw = QueryParam(query, name);
  if (!raw.has_value()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), value);
  if (raw->empty() || ec != std::errc() || end != raw->data() + raw->size()) {
    return absl::InvalidArgumentError(absl::StrCat("'", Absl(name), "' must be a whole number"));
  }
  return value;
}

}  // namespace vigil
