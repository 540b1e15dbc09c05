// Backtest: what a policy (and model) would have decided on a labelled stream, against the
// labels. An alert is a REVIEW or BLOCK decision; a positive is a record labelled laundering.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_ENGINE_BACKTEST_H_
#define VIGIL_ENGINE_BACKTEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json_fwd.hpp"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"

namespace vigil {

struct BacktestSummary {
  int64_t decisions = 0;
  int64_t labelled = 0;  // decisions on records that carry a label
  // Confusion of alert (REVIEW or BLOCK) against label, over labelled records.
  int64_t true_positives = 0, false_positives = 0, false_negatives = 0, true_negatives = 0;
  double precision = 0, recall = 0, f1 = 0;  // 0 when undefined (no alerts / no positives)
  // Decisions by action ("ALLOW", "REVIEW", "BLOCK") and label ("laundering", "normal",
  // "unlabelled").
  std::map<std::string, std::map<std::string, int64_t>> by_action_and_label;
  struct Typology {
    int64_t positives = 0, alerted = 0;
    double recall = 0;
  };
  std::map<std::string, Typology> by_typology;  // labelled positives with a typology
  int64_t days = 0;                             // UTC calendar days with at least one decision
  double alerts_per_day = 0;                    // alerts / days
  int64_t max_alerts_in_a_day = 0;
  struct RuleHits {
    int64_t hits = 0, on_positives = 0;
    bool shadow = false;
    double precision = 0;  // on_positives / hits, over labelled records
  };
  std::map<std::string, RuleHits> rules;  // every rule that fired
  int64_t score_alerts = 0;               // decisions where the score crossed a threshold
  int64_t degraded = 0;
};

class Backtest {
 public:
  void Add(const Transaction& tx, const Decision& decision);
  BacktestSummary Summary() const;

 private:
  BacktestSummary s_;
  std::map<int64_t, int64_t> alerts_by_day_;  // day number → alerts
  std::map<int64_t, bool> days_;
};

// How the decisions change from one policy to another on the same records.
struct PolicyComparison {
  std::string baseline_version, candidate_version;
  // "ALLOW→REVIEW" etc.: how many decisions moved, and the first few transaction ids with the
  // candidate's fired rules.
  struct Change {
    int64_t count = 0;
    std::vector<std::string> examples;  // "tx-id: rule, rule"
  };
  std::map<std::string, Change> changes;  // only cells where the action differs
  int64_t unchanged = 0;
  BacktestSummary candidate;  // the candidate's own backtest
};

class PolicyComparer {
 public:
  static constexpr size_t kExamples = 5;
  void Add(const Transaction& tx, const Decision& baseline, const Decision& candidate);
  PolicyComparison Summary(std::string baseline_version, std::string candidate_version) const;

 private:
  PolicyComparison c_;
  Backtest candidate_;
};

nlohmann::json BacktestToJson(const BacktestSummary& s);
nlohmann::json ComparisonToJson(const PolicyComparison& c);
std::string ComparisonToText(const PolicyComparison& c);
std::string BacktestToText(const BacktestSummary& s, int top_rules = 10);

}  // namespace vigil

#endif  // VIGIL_ENGINE_BACKTEST_H_
