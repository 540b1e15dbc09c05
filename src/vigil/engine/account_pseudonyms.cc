#include "vigil/engine/account_pseudonyms.h"

#include <openssl/crypto.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/private_file.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil {

std::string DefaultPseudonymKeyPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "state_pseudonym.key").string();
}

absl::StatusOr<crypto::Pseudonymizer::Hash> ParsePseudonymHash(std::string_view name) {
  if (name == "hmac-sha256") return crypto::Pseudonymizer::Hash::kHmacSha256;
  if (name == "hmac-sm3") return crypto::Pseudonymizer::Hash::kHmacSm3;
  return absl::InvalidArgumentError(absl::StrCat("pseudonym hash must be hmac-sha256 or hmac-sm3, not \"",
                                                 ToAbsl(name), "\""));
}

absl::StatusOr<std::shared_ptr<const crypto::Pseudonymizer>> LoadAccountPseudonyms(
    const std::string& configured, const std::string& data_dir, std::string_view hash) {
  VIGIL_ASSIGN_OR_RETURN(const crypto::Pseudonymizer::Hash h, ParsePseudonymHash(hash));
  const std::string path = configured.empty() ? DefaultPseudonymKeyPath(data_dir) : configured;
  if (configured.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string bytes, crypto::RandomBytes(32));
    std::string text = absl::StrCat(absl::BytesToHexString(bytes), "\n");
    OPENSSL_cleanse(bytes.data(), bytes.size());
    const absl::StatusOr<bool> created =
        CreatePrivateFileOnce(path, text, "state pseudonym key");
    OPENSSL_cleanse(text.data(), text.size());
    if (!created.ok()) return created.status();
  }
  VIGIL_RETURN_IF_ERROR(CheckOwnerOnly(path, "state pseudonym key"));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("state pseudonym key '", path, "' cannot be read"));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const absl::string_view hex = absl::StripAsciiWhitespace(text);
  std::string key;
  const bool valid = hex.size() >= 64 && hex.size() % 2 == 0 &&
                     std::all_of(hex.begin(), hex.end(), absl::ascii_isxdigit);
  if (valid) key = absl::HexStringToBytes(hex);
  OPENSSL_cleanse(text.data(), text.size());
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "state pseudonym key '", path,
        "' must hold at least 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`"));
  }
  VIGIL_ASSIGN_OR_RETURN(crypto::Pseudonymizer p, crypto::Pseudonymizer::Create(h, std::move(key)));
  return std::make_shared<const crypto::Pseudonymizer>(std::move(p));
}

}  // namespace vigil
