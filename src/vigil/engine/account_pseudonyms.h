// The key that turns account ids into the pseudonyms the feature state stores
// (FeatureConfig::account_pseudonyms, docs/security.md "Personal data at rest").
//
// The key file holds 64 hex digits (32 random bytes) and a line end; it must be private to its
// owner (mode 0600). A data dir gets its own key, <data_dir>/state_pseudonym.key, created on
// first use; a deployment may configure another (state.pseudonym_key). Losing the key loses
// the state's history: every account would look new. Back it up with the data dir's other
// keys, apart from the data.
#ifndef VIGIL_ENGINE_ACCOUNT_PSEUDONYMS_H_
#define VIGIL_ENGINE_ACCOUNT_PSEUDONYMS_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/crypto/pseudonym.h"

namespace vigil {

// "<data_dir>/state_pseudonym.key".
std::string DefaultPseudonymKeyPath(const std::string& data_dir);

// "hmac-sha256" or "hmac-sm3"; kInvalidArgument naming both otherwise.
absl::StatusOr<crypto::Pseudonymizer::Hash> ParsePseudonymHash(std::string_view name);

// The pseudonymizer of the key at "configured", or, when that is empty, of the data dir's own
// key (created when missing). Errors name the file: unreadable, not 64 hex digits, readable by
// its group or others; never the key.
absl::StatusOr<std::shared_ptr<const crypto::Pseudonymizer>> LoadAccountPseudonyms(
    const std::string& configured, const std::string& data_dir, std::string_view hash);

}  // namespace vigil

#endif  // VIGIL_ENGINE_ACCOUNT_PSEUDONYMS_H_
