#include "vigil/evaluation/payment_evaluation.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::evaluation {
namespace {

TEST(EvaluatePayments, SlicesByTypologyAndAmountBand) {
  // Six payments: two laundering under 100 (fan-out, found), one laundering over 1,000
  // (cycle, missed), three ordinary.
  const std::vector<double> scores = {0.9, 0.8, 0.2, 0.7, 0.1, 0.3};
  const std::vector<uint8_t> labels = {1, 1, 1, 0, 0, 0};
  const std::vector<std::string> typ = {"FAN-OUT", "FAN-OUT", "CYCLE", "", "", ""};
  const std::vector<double> amounts = {50, 99.99, 5000, 120, 60, 20000};
  PaymentEvaluationOptions o;
  o.threshold = 0.5;
  o.top_k = 2;
  o.bootstrap_resamples = 50;
  const PaymentEvaluation e = EvaluatePayments(scores, labels, typ, amounts, o);
  EXPECT_EQ(e.all.rows, 6u);
  EXPECT_EQ(e.all.positives, 3u);
  EXPECT_DOUBLE_EQ(e.base_rate, 0.5);
  EXPECT_EQ(e.all.at_threshold.tp, 2u);
  EXPECT_EQ(e.all.at_threshold.fp, 1u);
  EXPECT_DOUBLE_EQ(e.precision_at_k, 1.0);
  EXPECT_DOUBLE_EQ(e.all.pr_auc.estimate, AveragePrecision(scores, labels));
  ASSERT_EQ(e.typologies.size(), 2u);
  EXPECT_EQ(e.typologies[0].name, "CYCLE");
  EXPECT_DOUBLE_EQ(e.typologies[0].at_threshold.recall(), 0.0);
  EXPECT_EQ(e.typologies[1].name, "FAN-OUT");
  EXPECT_DOUBLE_EQ(e.typologies[1].at_threshold.recall(), 1.0);
  ASSERT_EQ(e.amount_bands.size(), 4u);
  EXPECT_EQ(e.amount_bands[0].name, "< 100");
  EXPECT_EQ(e.amount_bands[0].rows, 3u);  // 50, 99.99, 60
  EXPECT_EQ(e.amount_bands[0].positives, 2u);
  EXPECT_EQ(e.amount_bands[1].name, "[100, 1000)");
  EXPECT_EQ(e.amount_bands[1].positives, 0u);
  EXPECT_TRUE(std::isnan(e.amount_bands[1].pr_auc.estimate));  // nothing to find there
  EXPECT_EQ(e.amount_bands[3].name, ">= 10000");
  EXPECT_EQ(e.amount_bands[3].rows, 1u);
  // Without amounts or typologies, no slices.
  const PaymentEvaluation bare = EvaluatePayments(scores, labels, {}, {}, o);
  EXPECT_TRUE(bare.typologies.empty());
  EXPECT_TRUE(bare.amount_bands.empty());
}

}  // namespace
}  // namespace vigil::evaluation
