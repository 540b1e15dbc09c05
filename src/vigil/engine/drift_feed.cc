#include "vigil/engine/drift_feed.h"

#include "absl/strings/str_cat.h"

namespace vigil {
namespace {

uint64_t AccountSource(const Party& p) {
  return drift::SourceHash(absl::StrCat(p.bank_id, "\x1f", p.account_id));
}

}  // namespace

drift::RowSource DriftSourceOf(const Transaction& tx, uint64_t client) {
  return {AccountSource(tx.originator), AccountSource(tx.beneficiary), client};
}

void AppendDriftRow(const Transaction& tx, absl::Span<const double> row, double score,
                    uint64_t client, drift::DriftTap::Rows& batch) {
  batch.times.push_back(tx.event_time);
  batch.scores.push_back(score);
  batch.features.insert(batch.features.end(), row.begin(), row.end());
  batch.sources.push_back(DriftSourceOf(tx, client));
}

}  // namespace vigil
