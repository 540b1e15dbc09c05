#include "vigil/evaluation/account_evaluation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::evaluation {
namespace {

TEST(EvaluateAccounts, AnAccountScoresItsRiskiestPaymentAndIsLaunderingIfAnyPaymentIs) {
  // Accounts A..E. A -> B laundering (0.9); C -> B ordinary (0.2); C -> D ordinary (0.6);
  // E -> D ordinary (0.1); E -> A ordinary (0.3).
  const std::vector<double> scores = {0.9, 0.2, 0.6, 0.1, 0.3};
  const std::vector<uint8_t> labels = {1, 0, 0, 0, 0};
  const std::vector<std::string> from = {"A", "C", "C", "E", "E"};
  const std::vector<std::string> to = {"B", "B", "D", "D", "A"};
  AccountEvaluationOptions o;
  o.threshold = 0.5;
  o.max_fpr = 0.0;
  o.bootstrap_resamples = 20;
  const AccountEvaluation e = EvaluateAccounts(scores, labels, from, to, o);
  EXPECT_EQ(e.accounts, 5u);
  EXPECT_EQ(e.laundering, 2u);  // A and B
  // Scores: A 0.9, B 0.9, C 0.6, D 0.6, E 0.3. At 0.5: A, B (laundering), C, D alerted.
  EXPECT_EQ(e.at_threshold.tp, 2u);
  EXPECT_EQ(e.at_threshold.fp, 2u);
  EXPECT_EQ(e.at_threshold.tn, 1u);
  EXPECT_DOUBLE_EQ(e.pr_auc.estimate, 1.0);  // both laundering accounts rank first
  // No false alert allowed: threshold 0.9, both found.
  EXPECT_EQ(e.at_max_fpr.threshold, 0.9);
  EXPECT_DOUBLE_EQ(e.at_max_fpr.at.recall(), 1.0);
}

TEST(EvaluateAccounts, AnEmptyPartyCountsForTheOtherOnly) {
  const std::vector<double> scores = {0.7};
  const std::vector<uint8_t> labels = {1};
  const std::vector<std::string> from = {""}, to = {"B"};
  const AccountEvaluation e = EvaluateAccounts(scores, labels, from, to, {});
  EXPECT_EQ(e.accounts, 1u);
  EXPECT_EQ(e.laundering, 1u);
}

}  // namespace
}  // namespace vigil::evaluation
