#include "vigil/core/decision.h"

#include <cmath>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(Action, Names) {
  EXPECT_EQ(ActionName(Action::kAllow), "ALLOW");
  EXPECT_EQ(ActionName(Action::kReview), "REVIEW");
  EXPECT_EQ(ActionName(Action::kBlock), "BLOCK");
}

TEST(Decision, DefaultsToAllowWithNoModelScore) {
  const Decision d;
  EXPECT_EQ(d.action, Action::kAllow);
  EXPECT_TRUE(std::isnan(d.score)) << "NaN means no model ran, distinct from a score of 0";
  EXPECT_FALSE(d.degraded);
  EXPECT_TRUE(d.reasons.empty());
}

}  // namespace
}  // namespace vigil
