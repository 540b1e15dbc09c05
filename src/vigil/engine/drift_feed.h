// What the drift monitor is fed for each decided payment, the same from `vigil serve` and
// `vigil replay` (docs/drift.md): its event time, its feature row, its score and who it comes
// from (drift/source_ledger.h: both parties' accounts by bank and account id, and the client
// that submitted it).
#ifndef VIGIL_ENGINE_DRIFT_FEED_H_
#define VIGIL_ENGINE_DRIFT_FEED_H_

#include <cstdint>

#include "absl/types/span.h"
#include "vigil/core/transaction.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/drift/source_ledger.h"

namespace vigil {

// "client": drift::SourceHash of the request's actor; 0 for a file (one unknown client).
drift::RowSource DriftSourceOf(const Transaction& tx, uint64_t client);

// Appends one payment to "batch": "row" is its feature row (the monitor's width), "score" its
// model score (NaN: none to watch).
void AppendDriftRow(const Transaction& tx, absl::Span<const double> row, double score,
                    uint64_t client, drift::DriftTap::Rows& batch);

}  // namespace vigil

#endif  // VIGIL_ENGINE_DRIFT_FEED_H_
