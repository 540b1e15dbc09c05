// ScreeningClearances: watchlist hits that an analyst cleared for one party of a payment until a
// date (docs/screening.md, "Clearances"): "this beneficiary account is not SDN entry 1234",
// with the case, who and why. While a clearance holds, a hit of that entry on that party does
// not count: DecisionMaker records it as a shadow reason (seen, did not decide) and leaves it
// out of the screening score the policy reads. Clearances come from the analysts' case events
// in the decision log (cases::CaseBook keeps this set), so each one is itself on the record.
//
// A party is named by what identifies it across payments (ScreenedParty): its account for a
// party, its BIC or bank code for a bank, else its name as written.
//
// Thread safety: every method may be called concurrently; lookups take a shared lock.
#ifndef VIGIL_SCREENING_SCREENING_CLEARANCES_H_
#define VIGIL_SCREENING_SCREENING_CLEARANCES_H_

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "vigil/core/transaction.h"

namespace vigil::screening {

struct ScreeningClearance {
  std::string hit;    // "<list>:<entry id>", a screening reason's code
  std::string party;  // ScreenedParty of the payment's party the hit was on
  UtcTime expires{};  // the clearance holds before this
  std::string case_id, actor, reason;
  UtcTime granted{};
};

// What identifies the party "role" of "tx" (a ScreeningHit's party: "originator",
// "beneficiary", "ultimate_originator", "ultimate_beneficiary", an agent's role, or
// "originator_bank" / "beneficiary_bank"): "account:<id>", "bank:<BIC or code>", or
// "name:<name>" when the party has no identifier; "" when the payment has no such party.
std::string ScreenedParty(const Transaction& tx, std::string_view role);

// The party role a screening reason's text begins with (DecisionMaker writes "<role> name
// matches ..." and "<role> identifier is listed ..."); "" when it begins otherwise.
std::string_view HitPartyRole(std::string_view reason_text);

class ScreeningClearances {
 public:
  // Adds "c", replacing a clearance of the same hit and party.
  void Grant(ScreeningClearance c) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the clearance of that hit and party, if any.
  void Revoke(std::string_view hit, std::string_view party) ABSL_LOCKS_EXCLUDED(mu_);
  // The clearance of "hit" on "party" that holds at "at", if any.
  std::optional<ScreeningClearance> Find(std::string_view hit, std::string_view party,
                                         UtcTime at) const ABSL_LOCKS_EXCLUDED(mu_);
  // Those holding at "at", by hit then party.
  std::vector<ScreeningClearance> Holding(UtcTime at) const ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether none is kept, without the lock: a decision whose payment has hits asks this first,
  // so that a bank that clears nothing pays nothing for clearances.
  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  mutable absl::Mutex mu_;
  // Keyed by hit, '\n', party (neither holds a newline: list codes and party keys are one line).
  absl::flat_hash_map<std::string, ScreeningClearance> by_key_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> count_{0};  // by_key_.size(), kept under mu_
};

}  // namespace vigil::screening

#endif  // VIGIL_SCREENING_SCREENING_CLEARANCES_H_
