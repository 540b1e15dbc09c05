// ApiAccess: who may call which endpoint of `vigil serve` (docs/security.md).
//
// A caller is known by a bearer token of the data dir (AccessTokens: "Authorization: Bearer
// vgl_…") or, under mutual TLS, by its client certificate's subject when auth.certificate_roles
// grants that subject a role. A request that needs a role and brings neither is 401
// (WWW-Authenticate: Bearer); one whose role does not allow the endpoint is 403. A bad token
// is 401 whatever the reason (unknown id, wrong secret, malformed): the answer does not say
// which, and never repeats the token. The log and the metrics get the reason and the token's
// id at most.
//
// The actor recorded in the audit log for a request: "tls:<subject>" under mutual TLS,
// "token:<id>" for a bearer token, both separated by a space when both were presented.
//
// Tokens are read from <data_dir>/access_tokens.jsonl at start and again when the file changes
// (ReloadIfChanged: size, modification and change time, inode, mode), so `vigil token create`
// and `revoke` take effect without a restart. A file that no longer reads (say, made readable
// by others) keeps the tokens in force, and is reported once per change, not on every poll.
//
// Thread safety: Check from any thread; ReloadIfChanged from one thread at a time.
#ifndef VIGIL_SERVER_API_ACCESS_H_
#define VIGIL_SERVER_API_ACCESS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/http_server.h"

namespace vigil {

// Why a request was refused, for the metrics' "reason" label.
enum class AccessDenial : uint8_t {
  kNone,
  kMissing,    // no credential at all (401)
  kMalformed,  // an Authorization header that is not "Bearer <token>" (401)
  kInvalid,    // a token that does not authenticate (401)
  kForbidden,  // authenticated, but the role does not allow the endpoint (403)
};
inline constexpr int kNumAccessDenials = 5;
std::string_view AccessDenialName(AccessDenial denial);  // "missing", "malformed", ...

struct AccessDecision {
  AccessDenial denial = AccessDenial::kNone;
  std::string actor;     // who asked (see the file comment); "" when unknown
  std::string token_id;  // the presented token's id when well formed, for the log
  std::optional<Role> role;
  bool allowed() const { return denial == AccessDenial::kNone; }
};

class ApiAccess {
 public:
  // Reads the tokens of "data_dir". "certificate_roles": subject → role.
  static absl::StatusOr<std::unique_ptr<ApiAccess>> Open(
      std::string data_dir, std::vector<std::pair<std::string, Role>> certificate_roles);

  // Whether "request" may call an endpoint that admits any of "roles" (RoleAllows: admin, and a
  // supervisor where an analyst is admitted, too); empty: any authenticated caller (any role).
  AccessDecision Check(const HttpRequest& request, absl::Span<const Role> roles) const;
  // The same for an endpoint of one role ("need"), or of any role (std::nullopt).
  AccessDecision Check(const HttpRequest& request, std::optional<Role> need) const {
    return need.has_value() ? Check(request, absl::MakeConstSpan(&*need, 1))
                            : Check(request, absl::Span<const Role>());
  }

  // Reads the token file again when it changed. Returns whether it was reloaded; an error when
  // it changed but cannot be read (the tokens in force stay).
  absl::StatusOr<bool> ReloadIfChanged();

  size_t token_count() const;

 private:
  struct FileStamp {
    bool exists = false;
    int64_t size = 0, mtime_ns = 0, ctime_ns = 0;  // ctime: a chmod or chown changes it
    uint64_t inode = 0;
    uint32_t mode = 0;
    bool operator==(const FileStamp&) const = default;
  };
  ApiAccess(std::string data_dir, std::vector<std::pair<std::string, Role>> certificate_roles)
      : data_dir_(std::move(data_dir)), certificate_roles_(std::move(certificate_roles)) {}
  FileStamp Stamp() const;
  std::shared_ptr<const AccessTokens> tokens() const;

  const std::string data_dir_;
  const std::vector<std::pair<std::string, Role>> certificate_roles_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const AccessTokens> tokens_ ABSL_GUARDED_BY(mu_);
  FileStamp stamp_;  // the reloading thread's
};

}  // namespace vigil

#endif  // VIGIL_SERVER_API_ACCESS_H_
