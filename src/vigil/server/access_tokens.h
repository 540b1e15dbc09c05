// AccessTokens: the API tokens of a data directory and the role each grants (docs/security.md).
//
// A token is "vgl_<id>_<secret>": a 16-hex-digit id and 32 random bytes in unpadded base64url.
// Only the id, the role and SHA-256 of the secret are stored, one JSON line per token in
// <data_dir>/access_tokens.jsonl (mode 0600); the token itself is shown once, when created.
// Presented tokens are checked by recomputing the hash and comparing in constant time; an
// unknown id costs the same comparison, so timing does not tell which ids exist.
//
// Roles: scorer (score endpoints), policy-admin (policy ingest, model activation), auditor
// (audit verify and export, drift), analyst (cases), supervisor (cases, with the supervisor's
// rights: docs/cases.md), admin (everything).
//
// Thread safety: an AccessTokens is immutable; Authenticate may run concurrently. Create and
// Revoke change the file (one process at a time; the server reads it at start).
#ifndef VIGIL_SERVER_ACCESS_TOKENS_H_
#define VIGIL_SERVER_ACCESS_TOKENS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil {

enum class Role : uint8_t { kScorer, kPolicyAdmin, kAuditor, kAdmin, kAnalyst, kSupervisor };

// "scorer", "policy-admin", "auditor", "admin", "analyst", "supervisor".
std::string_view RoleName(Role role);
// kInvalidArgument naming the roles for anything else.
absl::StatusOr<Role> ParseRole(std::string_view name);
// Whether a token of role "have" may call an endpoint that needs "need": the same role, admin,
// or supervisor where an analyst is needed.
bool RoleAllows(Role have, Role need);

struct AccessToken {
  std::string id;             // 16 hex digits
  Role role = Role::kScorer;
  std::string secret_sha256;  // hex
  std::string created;        // RFC 3339, UTC
  std::string description;
};

class AccessTokens {
 public:
  static constexpr std::string_view kFileName = "access_tokens.jsonl";

  // Reads <data_dir>/access_tokens.jsonl (none: no tokens). Refuses (kPermissionDenied) a file
  // its group or others may read or write, and names the line of a malformed record.
  static absl::StatusOr<AccessTokens> Open(const std::string& data_dir);
  // Adds a token of "role" and returns its text: the only time the secret exists outside the
  // caller's hands.
  static absl::StatusOr<std::string> Create(const std::string& data_dir, Role role,
                                            std::string_view description);
  // Removes the token with this id; kNotFound when there is none.
  static absl::Status Revoke(const std::string& data_dir, std::string_view id);

  // The role of "token" (the text after "Bearer "), or kUnauthenticated with a message that
  // never repeats the token.
  absl::StatusOr<Role> Authenticate(std::string_view token) const;
  // The token's id when "token" is well formed, for logs (never the secret); "" otherwise.
  static std::string IdOf(std::string_view token);

  const std::vector<AccessToken>& tokens() const { return tokens_; }

 private:
  std::vector<AccessToken> tokens_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_ACCESS_TOKENS_H_
