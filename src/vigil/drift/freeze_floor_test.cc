#include "vigil/drift/freeze_floor.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;

Decision Ruled(Action action) {
  Decision d;
  d.action = action;
  return d;
}

TEST(FreezeFloor, WhatTheFrozenModelWouldHaveRaisedIsHeldForReview) {
  Decision d = Ruled(Action::kAllow);
  EXPECT_TRUE(ApplyFreezeFloor(0.5, 0.62, d));
  EXPECT_EQ(d.action, Action::kReview);
  ASSERT_EQ(d.reasons.size(), 1u);
  EXPECT_EQ(d.reasons[0].code, kFreezeFloorCode);
  EXPECT_THAT(d.reasons[0].text, HasSubstr("0.62"));
  EXPECT_THAT(d.reasons[0].text, HasSubstr("review threshold 0.5"));
  // At the threshold exactly, as the model's own band.
  Decision at = Ruled(Action::kAllow);
  EXPECT_TRUE(ApplyFreezeFloor(0.5, 0.5, at));
  // A score above the block threshold is held for review, never blocked on its own.
  Decision high = Ruled(Action::kAllow);
  EXPECT_TRUE(ApplyFreezeFloor(0.5, 0.99, high));
  EXPECT_EQ(high.action, Action::kReview);
}

TEST(FreezeFloor, LeavesEverythingElseAsTheRulesDecided) {
  Decision low = Ruled(Action::kAllow);
  EXPECT_FALSE(ApplyFreezeFloor(0.5, 0.49, low));
  EXPECT_EQ(low.action, Action::kAllow);
  EXPECT_TRUE(low.reasons.empty());
  Decision unscored = Ruled(Action::kAllow);
  EXPECT_FALSE(ApplyFreezeFloor(0.5, std::nan(""), unscored));
  EXPECT_EQ(unscored.action, Action::kAllow);
  Decision blocked = Ruled(Action::kBlock);
  EXPECT_FALSE(ApplyFreezeFloor(0.5, 0.9, blocked));
  EXPECT_EQ(blocked.action, Action::kBlock);
  Decision reviewed = Ruled(Action::kReview);
  EXPECT_FALSE(ApplyFreezeFloor(0.5, 0.9, reviewed));
  EXPECT_TRUE(reviewed.reasons.empty());
}

}  // namespace
}  // namespace vigil::drift
