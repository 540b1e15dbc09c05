#include "vigil/engine/account_standings.h"

#include <algorithm>
#include <array>

namespace vigil {

bool ActiveRuleFired(const Decision& d, const Policy& policy) {
  for (const Reason& r : d.reasons) {
    if (r.kind != Reason::Kind::kRule || r.shadow) continue;
    const auto rule = std::find_if(policy.rules().begin(), policy.rules().end(),
                                   [&](const PolicyRule& p) { return p.id == r.code; });
    if (rule == policy.rules().end() || CountsForAccounts(*rule)) return true;
  }
  return false;
}

void RecordAccountStandings(FeatureExtractor& features, const Policy& policy,
                            const Transaction& tx, Decision& d) {
  const std::array<AccountStanding, 2> s =
      features.RecordRisk(tx, d.score, ActiveRuleFired(d, policy), policy.account_alerts());
  d.accounts_scored = true;
  d.originator_account = s[0];
  d.beneficiary_account = s[1];
}

}  // namespace vigil
