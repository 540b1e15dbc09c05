#include "vigil/cases/case_tally.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"
#include "vigil/core/transaction.h"

namespace vigil::cases {
namespace {

std::string DayOf(UtcTime t) { return FormatUtc(t).substr(0, 10); }

// The nearest-rank percentile "p" (0..1] of sorted "v"; NaN when empty.
double Percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return std::nan("");
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

double FalsePositiveRate(uint64_t cases, const OutcomeCounts& outcomes) {
  const uint64_t closed = cases - outcomes[0];
  if (closed == 0) return std::nan("");
  return static_cast<double>(outcomes[static_cast<size_t>(CaseOutcome::kFalsePositive)]) /
         static_cast<double>(closed);
}

}  // namespace

double ReasonTally::false_positive_rate() const { return FalsePositiveRate(cases, outcomes); }
double BandTally::false_positive_rate() const { return FalsePositiveRate(cases, outcomes); }

std::string ScoreBandName(size_t band) {
  if (band + 1 >= kScoreBands) return "rules_only";
  return absl::StrFormat("%.1f-%.1f", static_cast<double>(band) / 10,
                         static_cast<double>(band + 1) / 10);
}

CaseTally::CaseTally(UtcTime now, const CasePolicy& policy) : now_(now), policy_(policy) {
  for (size_t b = 0; b < kScoreBands; ++b) report_.bands[b].band = ScoreBandName(b);
}

void CaseTally::Add(const Case& c) {
  ++report_.cases;
  ++report_.states[static_cast<size_t>(c.state)];
  const size_t outcome = c.closed() ? static_cast<size_t>(c.outcome) : 0;
  ++report_.outcomes[outcome];
  if (Overdue(c, now_, policy_)) ++report_.overdue;
  const std::string opened = DayOf(c.opened);
  DayTally& day = days_[opened];
  day.day = opened;
  ++day.opened;
  for (const std::string& reason : c.reasons) ++day.opened_by_reason[reason];
  if (c.closed()) {
    const std::string closed = DayOf(c.closed_at);
    DayTally& d = days_[closed];
    d.day = closed;
    ++d.closed;
    close_hours_.push_back(
        std::chrono::duration<double, std::ratio<3600>>(c.closed_at - c.opened).count());
  }
  const size_t band =
      std::isnan(c.max_score)
          ? kScoreBands - 1
          : std::min<size_t>(static_cast<size_t>(std::max(c.max_score, 0.0) * 10), kScoreBands - 2);
  ++report_.bands[band].cases;
  ++report_.bands[band].outcomes[outcome];
  for (const std::string& reason : c.reasons) {
    ReasonTally& r = reasons_[reason];
    r.reason = reason;
    ++r.cases;
    ++r.outcomes[outcome];
  }
}

CaseTallyReport CaseTally::Finish() && {
  std::sort(close_hours_.begin(), close_hours_.end());
  report_.close_hours_median = Percentile(close_hours_, 0.5);
  report_.close_hours_p90 = Percentile(close_hours_, 0.9);
  for (auto& [day, d] : days_) report_.days.push_back(std::move(d));
  for (auto& [reason, r] : reasons_) report_.reasons.push_back(std::move(r));
  std::stable_sort(report_.reasons.begin(), report_.reasons.end(),
                   [](const ReasonTally& a, const ReasonTally& b) { return a.cases > b.cases; });
  return std::move(report_);
}

}  // namespace vigil::cases
