#include "vigil/server/api_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil {

std::string_view AccessDenialName(AccessDenial denial) {
  switch (denial) {
    case AccessDenial::kNone:
      return "none";
    case AccessDenial::kMissing:
      return "missing";
    case AccessDenial::kMalformed:
      return "malformed";
    case AccessDenial::kInvalid:
      return "invalid";
    case AccessDenial::kForbidden:
      return "forbidden";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<ApiAccess>> ApiAccess::Open(
    std::string data_dir, std::vector<std::pair<std::string, Role>> certificate_roles) {
  std::unique_ptr<ApiAccess> access(
      new ApiAccess(std::move(data_dir), std::move(certificate_roles)));
  access->stamp_ = access->Stamp();
  VIGIL_ASSIGN_OR_RETURN(AccessTokens tokens, AccessTokens::Open(access->data_dir_));
  absl::MutexLock lock(&access->mu_);
  access->tokens_ = std::make_shared<const AccessTokens>(std::move(tokens));
  return access;
}

ApiAccess::FileStamp ApiAccess::Stamp() const {
  const std::string path =
      (std::filesystem::path(data_dir_) / std::string(AccessTokens::kFileName)).string();
  struct stat st {};
  FileStamp stamp;
  if (::stat(path.c_str(), &st) != 0) return stamp;
  stamp.exists = true;
  stamp.size = static_cast<int64_t>(st.st_size);
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  stamp.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  stamp.inode = static_cast<uint64_t>(st.st_ino);
  stamp.mode = static_cast<uint32_t>(st.st_mode);
  return stamp;
}

absl::StatusOr<bool> ApiAccess::ReloadIfChanged() {
  const FileStamp now = Stamp();
  if (now == stamp_) return false;
  // A file that does not load is reported once per change of it, not on every poll.
  stamp_ = now;
  VIGIL_ASSIGN_OR_RETURN(AccessTokens tokens, AccessTokens::Open(data_dir_));
  absl::MutexLock lock(&mu_);
  tokens_ = std::make_shared<const AccessTokens>(std::move(tokens));
  return true;
}

std::shared_ptr<const AccessTokens> ApiAccess::tokens() const {
  absl::MutexLock lock(&mu_);
  return tokens_;
}

size_t ApiAccess::token_count() const { return tokens()->tokens().size(); }

AccessDecision ApiAccess::Check(const HttpRequest& request, absl::Span<const Role> roles) const {
  AccessDecision d;
  std::optional<Role> role;
  if (!request.client_principal.empty()) {
    d.actor = absl::StrCat("tls:", ToAbsl(request.client_principal));
    for (const auto& [subject, granted] : certificate_roles_) {
      if (subject == request.client_principal) role = granted;
    }
  }
  const std::string_view authorization = request.Header("Authorization");
  if (!authorization.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.size() <= kBearer.size() ||
        !absl::EqualsIgnoreCase(ToAbsl(authorization.substr(0, kBearer.size())),
                                ToAbsl(kBearer))) {
      d.denial = AccessDenial::kMalformed;
      return d;
    }
    const std::string_view token =
        ToStd(absl::StripAsciiWhitespace(ToAbsl(authorization.substr(kBearer.size()))));
    d.token_id = AccessTokens::IdOf(token);
    absl::StatusOr<Role> token_role = tokens()->Authenticate(token);
    if (!token_role.ok()) {
      d.denial = AccessDenial::kInvalid;
      return d;
    }
    // A token and a certificate with a role: the token speaks for this request.
    role = *token_role;
    absl::StrAppend(&d.actor, d.actor.empty() ? "" : " ", "token:", d.token_id);
  }
  if (!role.has_value()) {
    d.denial = AccessDenial::kMissing;
    return d;
  }
  d.role = role;
  if (!roles.empty() && std::none_of(roles.begin(), roles.end(),
                                     [&](Role need) { return RoleAllows(*role, need); })) {
    d.denial = AccessDenial::kForbidden;
  }
  return d;
}

}  // namespace vigil
