// PolicyStore: the versions of a deployment's policy, durable in RocksDB, and the one that is
// active. Adding a version checks it first (a policy that does not check is never stored);
// activating one is durable before it takes effect, then an atomic swap: a decision that already
// holds the previous version finishes on it, the next one gets the new version. Any stored
// version can be activated again (rollback), and every activation is kept as history.
//
// Storage: a RocksDB store of its own at <dir>; keys "v/<id>" (the version record: id, version,
// sha256, author, time, text, and the named lists it was checked with, so that a later change
// to the list library does not change what a stored version means), "a/<n>" (activations:
// id, author, time), "active" (the id).
//
// Thread safety: all methods may be called concurrently; Active() is cheap (a shared_ptr copy
// under a mutex) and is what each decision (or batch of decisions) calls once.
#ifndef VIGIL_RULES_POLICY_STORE_H_
#define VIGIL_RULES_POLICY_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/common/clock.h"
#include "vigil/rules/policy.h"
#include "vigil/rules/policy_inputs.h"
#include "vigil/rules/policy_source.h"
#include "vigil/store/kv_store.h"

namespace vigil {

class PolicyStore final : public PolicySource {
 public:
  struct Entry {
    int64_t id = 0;       // 1, 2, ... in order of adding
    std::string version;  // the policy's own `version`
    std::string sha256;   // of its text
    std::string author;
    UtcTime added{};
  };
  struct Activation {
    int64_t id = 0;  // the entry activated
    std::string author;
    UtcTime at{};
  };

  // Opens (or creates) the store in "dir" and, when a version is active, loads it. New versions
  // are checked against "layout" and "library"; stored ones against "layout" and their own
  // lists. Fails if the active version no longer checks (say, the feature schema changed): the
  // message names it, and nothing starts on a policy it cannot evaluate.
  static absl::StatusOr<std::unique_ptr<PolicyStore>> Open(const std::string& dir,
                                                           PolicyInputLayout layout,
                                                           ListLibrary library, const Clock& clock);

  // Checks "text" (named "file" in errors) and stores it. Text already stored (same SHA-256)
  // is not stored twice: its entry is returned.
  absl::StatusOr<Entry> Add(std::string_view text, std::string_view file, std::string_view author);
  // Makes entry "id" the active policy (durably first). kNotFound for an unknown id.
  absl::Status Activate(int64_t id, std::string_view author);
  // Activates the version that was active before the current one. kFailedPrecondition when
  // there is none.
  absl::Status Rollback(std::string_view author);

  // The active policy; nullptr when none was ever activated.
  std::shared_ptr<const Policy> Active() const override;
  std::optional<int64_t> active_id() const;
  absl::StatusOr<std::vector<Entry>> List() const;
  absl::StatusOr<std::vector<Activation>> History() const;
  absl::StatusOr<std::string> Text(int64_t id) const;

 private:
  PolicyStore(std::unique_ptr<KvStore> kv, PolicyInputLayout layout, ListLibrary library,
              const Clock& clock)
      : kv_(std::move(kv)),
        layout_(std::move(layout)),
        library_(std::move(library)),
        clock_(clock) {}
  absl::StatusOr<std::shared_ptr<const Policy>> Load(int64_t id) const;

  std::unique_ptr<KvStore> kv_;
  PolicyInputLayout layout_;
  ListLibrary library_;
  const Clock& clock_;
  absl::Mutex write_mu_;  // serializes Add / Activate / Rollback
  mutable absl::Mutex mu_;
  std::shared_ptr<const Policy> active_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> active_id_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil

#endif  // VIGIL_RULES_POLICY_STORE_H_
