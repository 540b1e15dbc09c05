// PolicySource: where decisions get the policy they apply. Each decision (or batch) asks once
// and keeps what it got to the end, so a swap never splits a decision between versions.
//
// Thread safety: implementations are safe for concurrent use.
#ifndef VIGIL_RULES_POLICY_SOURCE_H_
#define VIGIL_RULES_POLICY_SOURCE_H_

#include <memory>

#include "vigil/rules/policy.h"

namespace vigil {

class PolicySource {
 public:
  virtual ~PolicySource() = default;
  // The policy in force now; nullptr only before any was made active.
  virtual std::shared_ptr<const Policy> Active() const = 0;
};

// One policy for the whole run (a file given to `vigil replay --policy`).
class FixedPolicy final : public PolicySource {
 public:
  explicit FixedPolicy(std::shared_ptr<const Policy> policy) : policy_(std::move(policy)) {}
  std::shared_ptr<const Policy> Active() const override { return policy_; }

 private:
  std::shared_ptr<const Policy> policy_;
};

}  // namespace vigil

#endif  // VIGIL_RULES_POLICY_SOURCE_H_
