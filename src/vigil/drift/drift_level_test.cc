#include "vigil/drift/drift_level.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

// LevelChange has no operator==; compare member-wise.
MATCHER_P2(IsChange, from, to,
           std::string("is a change from ") + std::string(DriftLevelName(from)) + " to " +
               std::string(DriftLevelName(to))) {
  if (!arg.has_value()) {
    *result_listener << "no change";
    return false;
  }
  *result_listener << "change from " << DriftLevelName(arg->from) << " to "
                   << DriftLevelName(arg->to);
  return arg->from == from && arg->to == to;
}

MATCHER(NoChange, "is no change") {
  if (arg.has_value()) {
    *result_listener << "change from " << DriftLevelName(arg->from) << " to "
                     << DriftLevelName(arg->to);
  }
  return !arg.has_value();
}

constexpr DriftLevel kNone = DriftLevel::kNone;
constexpr DriftLevel kL1 = DriftLevel::kL1;
constexpr DriftLevel kL2 = DriftLevel::kL2;
constexpr DriftLevel kL3 = DriftLevel::kL3;

TEST(DriftLevelName, NamesEachLevel) {
  EXPECT_EQ(DriftLevelName(kNone), "none");
  EXPECT_EQ(DriftLevelName(kL1), "L1");
  EXPECT_EQ(DriftLevelName(kL2), "L2");
  EXPECT_EQ(DriftLevelName(kL3), "L3");
}

TEST(LevelCutoffs, EnterAtGivesEachLevelsCutoff) {
  LevelCutoffs c;
  c.l1 = 0.4;
  c.l2 = 0.6;
  c.l3 = 0.8;
  EXPECT_EQ(c.EnterAt(kNone), 0);
  EXPECT_EQ(c.EnterAt(kL1), 0.4);
  EXPECT_EQ(c.EnterAt(kL2), 0.6);
  EXPECT_EQ(c.EnterAt(kL3), 0.8);
}

TEST(LevelCutoffs, DefaultsAndBoundaryValuesAreValid) {
  EXPECT_OK(LevelCutoffs().Validate());
  LevelCutoffs c;
  c.l3 = 1.0;              // l3 <= 1 is allowed
  c.release_margin = 0;    // 0 <= margin
  c.release_after = 1;     // >= 1
  EXPECT_OK(c.Validate());
}

TEST(LevelCutoffs, ValidateNamesTheMember) {
  struct Case {
    std::string label;
    void (*mutate)(LevelCutoffs&);
    std::string member;
  };
  const Case cases[] = {
      {"l1 zero", [](LevelCutoffs& c) { c.l1 = 0; }, "l1"},
      {"l1 negative", [](LevelCutoffs& c) { c.l1 = -0.1; }, "l1"},
      {"l1 NaN", [](LevelCutoffs& c) { c.l1 = std::numeric_limits<double>::quiet_NaN(); }, "l1"},
      {"l1 equals l2", [](LevelCutoffs& c) { c.l1 = c.l2; }, "l1"},
      {"l1 above l2", [](LevelCutoffs& c) { c.l1 = 0.8; }, "l1"},
      {"l2 equals l3", [](LevelCutoffs& c) { c.l2 = c.l3; }, "l3"},
      {"l2 above l3", [](LevelCutoffs& c) { c.l2 = 0.95; }, "l3"},
      {"l3 above 1", [](LevelCutoffs& c) { c.l3 = 1.01; }, "l3"},
      {"margin negative", [](LevelCutoffs& c) { c.release_margin = -0.01; }, "release_margin"},
      {"margin equals l1", [](LevelCutoffs& c) { c.release_margin = c.l1; }, "release_margin"},
      {"margin above l1", [](LevelCutoffs& c) { c.release_margin = 0.6; }, "release_margin"},
      {"release_after zero", [](LevelCutoffs& c) { c.release_after = 0; }, "release_after"},
      {"release_after negative", [](LevelCutoffs& c) { c.release_after = -2; }, "release_after"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.label);
    LevelCutoffs c;
    tc.mutate(c);
    EXPECT_THAT(c.Validate(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(tc.member)));
  }
  // The l1 error names l1, not the margin or release_after.
  LevelCutoffs c;
  c.l1 = 0;
  EXPECT_THAT(c.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     ::testing::Not(HasSubstr("release"))));
}

TEST(LevelTracker, StartsAtNoneAndStaysThereBelowL1) {
  LevelCutoffs c;
  LevelTracker t(&c);
  EXPECT_EQ(t.level(), kNone);
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.49), NoChange());
  EXPECT_EQ(t.level(), kNone);
}

TEST(LevelTracker, EntersALevelAsSoonAsSeverityReachesItsCutoff) {
  // Exactly representable cut-offs so "reaches" is tested at the boundary.
  LevelCutoffs c;
  c.l1 = 0.5;
  c.l2 = 0.75;
  c.l3 = 0.875;
  c.release_margin = 0.125;
  LevelTracker t(&c);
  EXPECT_THAT(t.Observe(0.5), IsChange(kNone, kL1));
  EXPECT_EQ(t.level(), kL1);
  EXPECT_THAT(t.Observe(0.75), IsChange(kL1, kL2));
  EXPECT_THAT(t.Observe(0.875), IsChange(kL2, kL3));
  EXPECT_EQ(t.level(), kL3);
  // Staying high is no change.
  EXPECT_THAT(t.Observe(1.0), NoChange());
  EXPECT_EQ(t.level(), kL3);
}

TEST(LevelTracker, EntersSeveralLevelsAtOnce) {
  LevelCutoffs c;
  {
    LevelTracker t(&c);
    EXPECT_THAT(t.Observe(0.95), IsChange(kNone, kL3));
    EXPECT_EQ(t.level(), kL3);
  }
  {
    LevelTracker t(&c);
    EXPECT_THAT(t.Observe(0.75), IsChange(kNone, kL2));
    EXPECT_EQ(t.level(), kL2);
  }
  {
    LevelTracker t(&c);
    EXPECT_THAT(t.Observe(0.55), IsChange(kNone, kL1));
    EXPECT_THAT(t.Observe(0.99), IsChange(kL1, kL3));
    EXPECT_EQ(t.level(), kL3);
  }
}

TEST(LevelTracker, RisesImmediatelyEvenWhileCountingDown) {
  LevelCutoffs c;  // release points: L1 0.4, L2 0.6, L3 0.8
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.55), IsChange(kNone, kL1));
  EXPECT_THAT(t.Observe(0.1), NoChange());
  EXPECT_THAT(t.Observe(0.1), NoChange());  // two of three below L1's release point
  EXPECT_THAT(t.Observe(0.91), IsChange(kL1, kL3));
  EXPECT_EQ(t.level(), kL3);
  // The count restarted: two low evaluations do not bring L3 down.
  EXPECT_THAT(t.Observe(0.1), NoChange());
  EXPECT_THAT(t.Observe(0.1), NoChange());
  EXPECT_EQ(t.level(), kL3);
  EXPECT_THAT(t.Observe(0.1), IsChange(kL3, kL2));
}

TEST(LevelTracker, StepsDownOneLevelAfterReleaseAfterConsecutiveEvaluationsBelow) {
  LevelCutoffs c;  // release_after 3, release points: L1 0.4, L2 0.6, L3 0.8
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.95), IsChange(kNone, kL3));
  // Severity 0 would be level none, but the level comes down one step per 3 evaluations.
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_EQ(t.level(), kL3);
  EXPECT_THAT(t.Observe(0.0), IsChange(kL3, kL2));
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), IsChange(kL2, kL1));
  EXPECT_EQ(t.level(), kL1);
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), IsChange(kL1, kNone));
  EXPECT_EQ(t.level(), kNone);
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_EQ(t.level(), kNone);
}

TEST(LevelTracker, StepsDownOnlyToTheLevelTheSeverityStillJustifies) {
  LevelCutoffs c;  // release points: L1 0.4, L2 0.6, L3 0.8
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.95), IsChange(kNone, kL3));
  // 0.55: below L3's and L2's release points, above L1's.
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), IsChange(kL3, kL2));
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), IsChange(kL2, kL1));
  for (int i = 0; i < 10; ++i) EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_EQ(t.level(), kL1);
}

TEST(LevelTracker, AValueInTheMarginBandResetsTheCountAndDoesNotDrop) {
  LevelCutoffs c;  // L2 at 0.7, its release point 0.6: the band is [0.6, 0.7)
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.75), IsChange(kNone, kL2));
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.65), NoChange());  // in the band: resets
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_THAT(t.Observe(0.55), NoChange());
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Observe(0.55), IsChange(kL2, kL1));
}

TEST(LevelTracker, HoveringAroundTheCutoffDoesNotFlap) {
  LevelCutoffs c;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.72), IsChange(kNone, kL2));
  for (int i = 0; i < 20; ++i) {
    EXPECT_THAT(t.Observe(i % 2 == 0 ? 0.68 : 0.71), NoChange()) << i;
    EXPECT_THAT(t.Observe(0.62), NoChange()) << i;
  }
  EXPECT_EQ(t.level(), kL2);
}

TEST(LevelTracker, TheReleasePointItselfIsNotBelow) {
  // Exactly representable: L2 0.75 − margin 0.125 = 0.625.
  LevelCutoffs c;
  c.l1 = 0.5;
  c.l2 = 0.75;
  c.l3 = 0.875;
  c.release_margin = 0.125;
  c.release_after = 2;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.75), IsChange(kNone, kL2));
  EXPECT_THAT(t.Observe(0.625), NoChange());
  EXPECT_THAT(t.Observe(0.625), NoChange());
  EXPECT_THAT(t.Observe(0.625), NoChange());
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Observe(0.624), NoChange());
  EXPECT_THAT(t.Observe(0.624), IsChange(kL2, kL1));
}

TEST(LevelTracker, ZeroMarginReleasesJustBelowTheCutoff) {
  LevelCutoffs c;
  c.release_margin = 0;
  c.release_after = 1;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.5), IsChange(kNone, kL1));
  EXPECT_THAT(t.Observe(0.5), NoChange());
  EXPECT_THAT(t.Observe(0.49), IsChange(kL1, kNone));
}

TEST(LevelTracker, ReleaseAfterOneStepsDownAtTheFirstLowEvaluation) {
  LevelCutoffs c;
  c.release_after = 1;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.95), IsChange(kNone, kL3));
  EXPECT_THAT(t.Observe(0.0), IsChange(kL3, kL2));
  EXPECT_THAT(t.Observe(0.0), IsChange(kL2, kL1));
  EXPECT_THAT(t.Observe(0.0), IsChange(kL1, kNone));
  EXPECT_THAT(t.Observe(0.0), NoChange());
}

TEST(LevelTracker, RaiseToL3FromNone) {
  LevelCutoffs c;
  LevelTracker t(&c);
  EXPECT_THAT(t.Raise(kL3), IsChange(kNone, kL3));
  EXPECT_EQ(t.level(), kL3);
  // The usual hysteresis then brings it down.
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), IsChange(kL3, kL2));
}

TEST(LevelTracker, RaiseToALowerOrEqualLevelIsANoOp) {
  LevelCutoffs c;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.75), IsChange(kNone, kL2));
  EXPECT_THAT(t.Raise(kL1), NoChange());
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Raise(kNone), NoChange());
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Raise(kL2), NoChange());
  EXPECT_EQ(t.level(), kL2);
  EXPECT_THAT(t.Raise(kL3), IsChange(kL2, kL3));
  EXPECT_THAT(t.Raise(kL3), NoChange());
  EXPECT_EQ(t.level(), kL3);
}

TEST(LevelTracker, RaiseRestartsTheCountDown) {
  LevelCutoffs c;
  LevelTracker t(&c);
  ASSERT_THAT(t.Observe(0.75), IsChange(kNone, kL2));
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Raise(kL3), IsChange(kL2, kL3));
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_THAT(t.Observe(0.0), NoChange());
  EXPECT_EQ(t.level(), kL3);
  EXPECT_THAT(t.Observe(0.0), IsChange(kL3, kL2));
}

// With a dwell, a level rises one step at a time, each step after the first only once the
// dwell has passed since the previous rise: a second of severity 1 reaches L1 and no further.
TEST(LevelTracker, ADwellRateLimitsTheRises) {
  LevelCutoffs c;
  const auto minutes = [](int m) { return FromUnixMicros(int64_t{m} * 60'000'000); };
  LevelTracker t(&c, std::chrono::minutes(15));
  EXPECT_THAT(t.Observe(1.0, minutes(0)), IsChange(kNone, kL1));
  for (int m = 1; m < 15; ++m) EXPECT_THAT(t.Observe(1.0, minutes(m)), NoChange()) << m;
  EXPECT_EQ(t.level(), kL1);
  EXPECT_THAT(t.Raise(kL3, minutes(14)), NoChange());  // an escalation waits for the dwell too
  EXPECT_THAT(t.Observe(1.0, minutes(15)), IsChange(kL1, kL2));
  EXPECT_THAT(t.Raise(kL3, minutes(29)), NoChange());
  EXPECT_THAT(t.Raise(kL3, minutes(30)), IsChange(kL2, kL3));
  // Down again with the usual hysteresis; a new rise from none is immediate.
  for (int i = 0; i < 3 * 3; ++i) t.Observe(0.0, minutes(31 + i));
  EXPECT_EQ(t.level(), kNone);
  EXPECT_THAT(t.Observe(0.95, minutes(41)), IsChange(kNone, kL1));
  EXPECT_THAT(t.Lower(kNone), IsChange(kL1, kNone));
  EXPECT_THAT(t.Lower(kL2), NoChange());
}

}  // namespace
}  // namespace vigil::drift
