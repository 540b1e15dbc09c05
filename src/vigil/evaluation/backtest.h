// Backtest: what a policy (and model) would have decided on a labelled stream, against the
// labels. An alert is a REVIEW or BLOCK decision; a positive is a record labelled laundering.
// Per account too: the account alerts of the account step (engine/account_standings.h) and
// the accounts that any payment alert falls on, against accounts that send or receive
// laundering; precision, recall and false-positive rate over accounts, and the accounts'
// average precision by their highest payment score.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_EVALUATION_BACKTEST_H_
#define VIGIL_EVALUATION_BACKTEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json_fwd.hpp"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"

namespace vigil::evaluation {

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

  // Per account (either party of a labelled payment); an account is laundering when it sends
  // or receives a payment labelled laundering.
  struct Accounts {
    int64_t accounts = 0, laundering = 0;
    // Account alerts (the policy's `accounts:` thresholds, raised by the account step): how
    // many were raised, and the distinct accounts they fell on.
    int64_t alerts = 0;
    int64_t alerted = 0, alerted_laundering = 0;
    double recall = 0, precision = 0, false_positive_rate = 0;
    double alerts_per_day = 0;
    // Accounts with at least one payment alert (REVIEW or BLOCK): what the payment decisions
    // alone put in front of an analyst.
    int64_t payment_alerted = 0, payment_alerted_laundering = 0;
    double payment_recall = 0, payment_precision = 0, payment_false_positive_rate = 0;
    // Average precision over accounts ranked by their highest payment score, with a bootstrap
    // 95% interval (200 resamples over accounts); absent when no payment was scored.
    bool scored = false;
    double pr_auc = 0, pr_auc_low = 0, pr_auc_high = 0;
  };
  Accounts accounts;
};

class Backtest {
 public:
  void Add(const Transaction& tx, const Decision& decision);
  BacktestSummary Summary() const;

 private:
  struct AccountTally {
    double max_score = -1;  // -1: none scored
    bool laundering = false, alerted = false, payment_alerted = false;
  };
  void AddAccount(const Party& party, const AccountStanding& standing, bool positive,
                  const Decision& d);

  BacktestSummary s_;
  std::map<int64_t, int64_t> alerts_by_day_;  // day number → alerts
  std::map<int64_t, bool> days_;
  // "<bank>\x1f<account>" of every party of a labelled payment.
  absl::flat_hash_map<std::string, AccountTally> accounts_;
  int64_t account_alerts_ = 0;
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

}  // namespace vigil::evaluation

#endif  // VIGIL_EVALUATION_BACKTEST_H_
