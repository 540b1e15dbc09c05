#include "vigil/server/access_tokens.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "vigil/common/private_file.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil {
namespace {

constexpr std::string_view kPrefix = "vgl_";
constexpr size_t kIdHexDigits = 16;
constexpr size_t kSecretBytes = 32;
constexpr size_t kSecretChars = 43;  // unpadded base64url of 32 bytes

std::string PathOf(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / std::string(AccessTokens::kFileName)).string();
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Splits "vgl_<id>_<secret>"; false when malformed.
bool Split(std::string_view token, std::string_view* id, std::string_view* secret) {
  if (token.size() != kPrefix.size() + kIdHexDigits + 1 + kSecretChars ||
      token.substr(0, kPrefix.size()) != kPrefix || token[kPrefix.size() + kIdHexDigits] != '_') {
    return false;
  }
  *id = token.substr(kPrefix.size(), kIdHexDigits);
  *secret = token.substr(kPrefix.size() + kIdHexDigits + 1);
  return IsHex(*id);
}

std::string Line(const AccessToken& t) {
  nlohmann::json j = {{"id", t.id},
                      {"role", std::string(RoleName(t.role))},
                      {"secret_sha256", t.secret_sha256},
                      {"created", t.created},
                      {"description", t.description}};
  return j.dump() + "\n";
}

// Writes the whole file anew (ReplacePrivateFile: atomic, mode 0600).
absl::Status WriteAll(const std::string& data_dir, const std::vector<AccessToken>& tokens) {
  std::string text;
  for (const AccessToken& t : tokens) text += Line(t);
  return ReplacePrivateFile(PathOf(data_dir), text, "the token file");
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kScorer:
      return "scorer";
    case Role::kPolicyAdmin:
      return "policy-admin";
    case Role::kAuditor:
      return "auditor";
    case Role::kAdmin:
      return "admin";
    case Role::kAnalyst:
      return "analyst";
    case Role::kSupervisor:
      return "supervisor";
  }
  return "?";
}

absl::StatusOr<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kScorer, Role::kPolicyAdmin, Role::kAuditor, Role::kAdmin, Role::kAnalyst,
                 Role::kSupervisor}) {
    if (RoleName(r) == name) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", ToAbsl(name),
                   "': use scorer, policy-admin, auditor, admin, analyst or supervisor"));
}

bool RoleAllows(Role have, Role need) {
  return have == Role::kAdmin || have == need ||
         (have == Role::kSupervisor && need == Role::kAnalyst);
}

absl::StatusOr<AccessTokens> AccessTokens::Open(const std::string& data_dir) {
  const std::string path = PathOf(data_dir);
  AccessTokens out;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return out;
  VIGIL_RETURN_IF_ERROR(CheckOwnerOnly(path, "token file"));
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read '", path, "'"));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto bad = [&](std::string_view why) {
      return absl::DataLossError(absl::StrCat(path, ":", number, ": ", ToAbsl(why)));
    };
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    AccessToken t;
    if (!j.contains("id") || !j["id"].is_string() || !j.contains("role") ||
        !j["role"].is_string() || !j.contains("secret_sha256") || !j["secret_sha256"].is_string()) {
      return bad("id, role and secret_sha256 are required strings");
    }
    t.id = j["id"].get<std::string>();
    if (t.id.size() != kIdHexDigits || !IsHex(t.id)) return bad("field id: not 16 hex digits");
    absl::StatusOr<Role> role = ParseRole(j["role"].get<std::string>());
    if (!role.ok()) return bad(absl::StrCat("field role: ", role.status().message()));
    t.role = *role;
    t.secret_sha256 = j["secret_sha256"].get<std::string>();
    if (t.secret_sha256.size() != 64 || !IsHex(t.secret_sha256)) {
      return bad("field secret_sha256: not 64 hex digits");
    }
    if (j.contains("created") && j["created"].is_string()) t.created = j["created"];
    if (j.contains("description") && j["description"].is_string()) {
      t.description = j["description"];
    }
    out.tokens_.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<std::string> AccessTokens::Create(const std::string& data_dir, Role role,
                                                 std::string_view description) {
  VIGIL_ASSIGN_OR_RETURN(AccessTokens existing, Open(data_dir));
  VIGIL_ASSIGN_OR_RETURN(const std::string id_bytes, crypto::RandomBytes(kIdHexDigits / 2));
  VIGIL_ASSIGN_OR_RETURN(std::string secret_bytes, crypto::RandomBytes(kSecretBytes));
  std::string secret;
  absl::WebSafeBase64Escape(secret_bytes, &secret);  // unpadded
  AccessToken t;
  t.id = absl::BytesToHexString(id_bytes);
  t.role = role;
  t.secret_sha256 = Sha256Hex(secret);
  t.created = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  t.description = std::string(description);
  existing.tokens_.push_back(t);
  VIGIL_RETURN_IF_ERROR(WriteAll(data_dir, existing.tokens_));
  return absl::StrCat(ToAbsl(kPrefix), t.id, "_", secret);
}

absl::Status AccessTokens::Revoke(const std::string& data_dir, std::string_view id) {
  VIGIL_ASSIGN_OR_RETURN(AccessTokens existing, Open(data_dir));
  const size_t before = existing.tokens_.size();
  std::erase_if(existing.tokens_, [&](const AccessToken& t) { return t.id == id; });
  if (existing.tokens_.size() == before) {
    return absl::NotFoundError(absl::StrCat("no token with id '", ToAbsl(id), "'"));
  }
  return WriteAll(data_dir, existing.tokens_);
}

std::string AccessTokens::IdOf(std::string_view token) {
  std::string_view id, secret;
  return Split(token, &id, &secret) ? std::string(id) : std::string();
}

absl::StatusOr<Role> AccessTokens::Authenticate(std::string_view token) const {
  std::string_view id, secret;
  if (!Split(token, &id, &secret)) {
    return absl::UnauthenticatedError("malformed token (expected vgl_<id>_<secret>)");
  }
  const std::string presented = Sha256Hex(secret);
  // An unknown id is compared against a fixed hash, so the time taken does not say whether
  // the id exists.
  static const std::string kNoSuchToken(64, '0');
  const AccessToken* match = nullptr;
  for (const AccessToken& t : tokens_) {
    if (t.id == id) match = &t;
  }
  const bool equal =
      crypto::ConstantTimeEquals(presented, match != nullptr ? match->secret_sha256 : kNoSuchToken);
  if (match == nullptr || !equal) return absl::UnauthenticatedError("unknown or revoked token");
  return match->role;
}

}  // namespace vigil
