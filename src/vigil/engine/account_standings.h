// RecordAccountStandings: the pipeline's account step, after a payment is decided and before
// its decision is recorded or answered. Folds the decision into both parties' account risk
// (features/account_risk.h) under the policy's account alert thresholds and puts their
// standings, with any account alert, in the Decision (core/account_standing.h). vigil serve
// and vigil replay both run it, so a backtest raises the alerts production would.
//
// What counts: the decision's model score (a rules-only, drift-frozen or degraded decision
// has none) and whether an active rule that reviews, blocks or tags fired (a rule reason that
// is not shadow; an `allow` rule is an exemption, not a hit). The payment's
// action does not change: an account alert is work for an analyst, not a verdict on the
// payment.
//
// Thread safety: the caller holds the extractor's lock (the extractor is externally
// synchronized).
#ifndef VIGIL_ENGINE_ACCOUNT_STANDINGS_H_
#define VIGIL_ENGINE_ACCOUNT_STANDINGS_H_

#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/rules/policy.h"

namespace vigil {

// Whether an active (not shadow) rule of "policy" other than an `allow` rule fired in "d". A
// rule the policy does not hold (it was swapped since) counts.
bool ActiveRuleFired(const Decision& d, const Policy& policy);

// REQUIRES: "tx" was applied to "features" (Process or ProcessBatch) and "d" decides it.
void RecordAccountStandings(FeatureExtractor& features, const Policy& policy,
                            const Transaction& tx, Decision& d);

}  // namespace vigil

#endif  // VIGIL_ENGINE_ACCOUNT_STANDINGS_H_
