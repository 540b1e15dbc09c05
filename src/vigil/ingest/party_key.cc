#include "vigil/ingest/party_key.h"

#include "absl/strings/ascii.h"
#include "vigil/common/string_view.h"

namespace vigil {
namespace {

std::string NormalizedName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool space = false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace

std::string PartyAccountKey(std::string_view account, std::string_view party_bic,
                            std::string_view bank_bic, std::string_view name) {
  const std::string_view trimmed = ToStd(absl::StripAsciiWhitespace(ToAbsl(account)));
  if (!trimmed.empty() && trimmed != "NOTPROVIDED") return std::string(trimmed);
  if (!party_bic.empty()) return std::string(party_bic);
  std::string normalized = NormalizedName(name);
  if (normalized.empty()) return normalized;
  if (bank_bic.empty()) return normalized;
  std::string key(bank_bic);
  key += ':';
  key += normalized;
  return key;
}

}  // namespace vigil
