// CaseTally: the figures a compliance team asks of its cases (docs/cases.md, "Dashboard"):
// cases opened and closed per day, outcomes, time to close, and per reason (rule id or watchlist
// hit) how often its cases turned out false positives, the figure asked first of a rule.
//
// A case counts for each distinct reason it holds; its outcome is its last closing's (a
// reopened case counts as unclosed until it is closed again).
//
// Thread safety: a value built by one thread.
#ifndef VIGIL_CASES_CASE_TALLY_H_
#define VIGIL_CASES_CASE_TALLY_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vigil/cases/case_file.h"

namespace vigil::cases {

// Outcomes in CaseOutcome order, kNone (unclosed) first.
inline constexpr size_t kOutcomeCount = 5;
using OutcomeCounts = std::array<uint64_t, kOutcomeCount>;

struct DayTally {
  std::string day;  // "YYYY-MM-DD", UTC
  uint64_t opened = 0, closed = 0;
  // The cases opened that day, by each distinct reason they hold (a case counts for each).
  std::map<std::string, uint64_t> opened_by_reason;
};

struct ReasonTally {
  std::string reason;
  uint64_t cases = 0;
  OutcomeCounts outcomes{};  // [0]: unclosed
  // false_positive / closed cases; NaN when none of its cases is closed.
  double false_positive_rate() const;
};

// Cases by their highest model score, in tenths ("0.0-0.1" ... "0.9-1.0"), and those rules
// alone decided ("rules_only"): whether analysts find the model's high bands worth their time.
inline constexpr size_t kScoreBands = 11;
// Band "band" (0..kScoreBands-1): "0.0-0.1" ... "0.9-1.0", then "rules_only".
std::string ScoreBandName(size_t band);
struct BandTally {
  std::string band;
  uint64_t cases = 0;
  OutcomeCounts outcomes{};
  double false_positive_rate() const;  // as ReasonTally's
};

struct CaseTallyReport {
  uint64_t cases = 0, overdue = 0;
  std::array<uint64_t, 5> states{};  // CaseState order
  OutcomeCounts outcomes{};
  // Hours from opening to closing of the closed cases: median and 90th percentile (nearest
  // rank); NaN when none is closed.
  double close_hours_median = 0, close_hours_p90 = 0;
  std::vector<DayTally> days;        // ascending, days with something only
  std::vector<ReasonTally> reasons;  // by cases, most first; ties by reason
  std::array<BandTally, kScoreBands> bands;  // the ten score bands ascending, then rules_only
};

class CaseTally {
 public:
  CaseTally(UtcTime now, const CasePolicy& policy);
  void Add(const Case& c);
  CaseTallyReport Finish() &&;

 private:
  UtcTime now_;
  CasePolicy policy_;
  CaseTallyReport report_;
  std::map<std::string, DayTally> days_;
  std::map<std::string, ReasonTally> reasons_;
  std::vector<double> close_hours_;
};

}  // namespace vigil::cases

#endif  // VIGIL_CASES_CASE_TALLY_H_
