#include "vigil/core/account_standing.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(AccountStandingTest, CauseNames) {
  EXPECT_EQ(AccountAlertCauseName(AccountAlertCause::kNone), "");
  EXPECT_EQ(AccountAlertCauseName(AccountAlertCause::kScore), "score");
  EXPECT_EQ(AccountAlertCauseName(AccountAlertCause::kRuleHits), "rule_hits");
}

TEST(AccountStandingTest, ThresholdsAreOffUntilSet) {
  AccountAlertThresholds t;
  EXPECT_FALSE(t.enabled());
  t.rule_hits = 2;
  EXPECT_TRUE(t.enabled());
  t = {};
  t.score = 0.4;
  EXPECT_TRUE(t.enabled());
}

TEST(AccountStandingTest, DefaultStandingHasNoScoreAndNoAlert) {
  const AccountStanding s;
  EXPECT_TRUE(std::isnan(s.score));
  EXPECT_EQ(s.rule_hits, 0u);
  EXPECT_FALSE(s.alert);
  EXPECT_EQ(s.cause, AccountAlertCause::kNone);
}

}  // namespace
}  // namespace vigil
