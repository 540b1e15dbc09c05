#include "vigil/drift/escalation.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;
using std::chrono::microseconds;
using std::chrono::seconds;

constexpr int64_t kBaseMicros = 1'700'000'000'000'000;

UtcTime At(double s) { return FromUnixMicros(kBaseMicros + std::llround(s * 1e6)); }

TEST(EscalationPattern, DefaultIsAboveSevenTenthsThenAboveEightyFiveHundredthsWithin30s) {
  EscalationPattern p;
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].above, 0.7);
  EXPECT_EQ(p.steps[1].above, 0.85);
  EXPECT_EQ(p.steps[1].within, seconds(30));
  EXPECT_OK(p.Validate());
}

TEST(EscalationMatcher, DefaultPatternFiresWhenTheSecondStepComesInTime) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.75));
  EXPECT_TRUE(m.Observe(At(10), 0.9));
}

TEST(EscalationMatcher, ExactlyWithinTheWindowStillFires) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.75));
  EXPECT_TRUE(m.Observe(At(30), 0.9));
}

TEST(EscalationMatcher, TooLateDoesNotFire) {
  EscalationPattern p;
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.75));
    EXPECT_FALSE(m.Observe(At(31), 0.9));
  }
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.75));
    EXPECT_FALSE(m.Observe(FromUnixMicros(kBaseMicros + 30'000'001), 0.9));  // 30 s + 1 µs
  }
}

TEST(EscalationMatcher, ThresholdsAreStrict) {
  EscalationPattern p;
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.7));  // not above 0.7
    EXPECT_FALSE(m.Observe(At(1), 0.2));
    EXPECT_FALSE(m.Observe(At(2), 0.9));  // no first step before: this is a first step
  }
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.75));
    EXPECT_FALSE(m.Observe(At(1), 0.85));  // not above 0.85
  }
}

TEST(EscalationMatcher, OneEvaluationAboveBothThresholdsAloneDoesNotFire) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.95));
  // It counts as the first step for a strictly later one.
  EXPECT_TRUE(m.Observe(At(5), 0.95));
}

TEST(EscalationMatcher, EqualTimestampsDoNotCount) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.75));
  EXPECT_FALSE(m.Observe(At(0), 0.9));
  EXPECT_FALSE(m.Observe(At(0), 0.99));
  // One microsecond later is strictly later.
  EXPECT_TRUE(m.Observe(FromUnixMicros(kBaseMicros + 1), 0.9));
}

TEST(EscalationMatcher, LowEvaluationsInBetweenDoNotCancelTheFirstStep) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.75));
  EXPECT_FALSE(m.Observe(At(10), 0.1));
  EXPECT_FALSE(m.Observe(At(20), 0.5));
  EXPECT_TRUE(m.Observe(At(25), 0.9));
}

TEST(EscalationMatcher, TheLatestFirstStepCounts) {
  EscalationPattern p;
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.75));
    EXPECT_FALSE(m.Observe(At(25), 0.8));  // a later first step
    EXPECT_TRUE(m.Observe(At(50), 0.9));   // 25 s after the latest one
  }
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.75));
    EXPECT_FALSE(m.Observe(At(25), 0.6));  // not a first step
    EXPECT_FALSE(m.Observe(At(50), 0.9));  // 50 s after the only one
  }
}

TEST(EscalationMatcher, AfterFiringItNeedsAFreshFirstStep) {
  EscalationPattern p;
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.75));
  EXPECT_TRUE(m.Observe(At(1), 0.9));
  // Reported once: neither the old first step nor the firing evaluation carries over.
  EXPECT_FALSE(m.Observe(At(2), 0.9));
  // ... but At(2) was a fresh first step.
  EXPECT_TRUE(m.Observe(At(3), 0.9));
  EXPECT_FALSE(m.Observe(At(4), 0.5));
  EXPECT_FALSE(m.Observe(At(5), 0.9));
  EXPECT_TRUE(m.Observe(At(6), 0.9));
}

EscalationPattern ThreeSteps() {
  EscalationPattern p;
  p.steps = {{0.5, seconds(0)}, {0.6, seconds(10)}, {0.8, seconds(10)}};
  return p;
}

TEST(EscalationMatcher, ThreeStepPatternFiresOnTheWholeSequence) {
  const EscalationPattern p = ThreeSteps();
  ASSERT_OK(p.Validate());
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.55));
  EXPECT_FALSE(m.Observe(At(5), 0.65));
  EXPECT_TRUE(m.Observe(At(12), 0.85));  // 7 s after step 2, 12 s after step 1
}

TEST(EscalationMatcher, ThreeStepPatternNeedsEachStepInItsOwnEvaluation) {
  const EscalationPattern p = ThreeSteps();
  EscalationMatcher m(&p);
  EXPECT_FALSE(m.Observe(At(0), 0.55));
  EXPECT_FALSE(m.Observe(At(5), 0.9));  // matches step 2 only, not step 3 as well
  EXPECT_TRUE(m.Observe(At(6), 0.9));
}

TEST(EscalationMatcher, ThreeStepPatternMeasuresEachWindowFromThePreviousStep) {
  const EscalationPattern p = ThreeSteps();
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.55));
    EXPECT_FALSE(m.Observe(At(5), 0.65));
    EXPECT_FALSE(m.Observe(At(16), 0.85));  // 11 s after step 2
  }
  {
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.55));
    EXPECT_FALSE(m.Observe(At(11), 0.65));  // 11 s after step 1: not step 2
    EXPECT_FALSE(m.Observe(At(12), 0.85));  // so this is step 2, not 3
    EXPECT_TRUE(m.Observe(At(13), 0.85));
  }
  {
    // Skipping the middle step does not fire.
    EscalationMatcher m(&p);
    EXPECT_FALSE(m.Observe(At(0), 0.55));
    EXPECT_FALSE(m.Observe(At(1), 0.52));
    EXPECT_FALSE(m.Observe(At(2), 0.58));
    EXPECT_FALSE(m.Observe(At(3), 0.59));
  }
}

TEST(EscalationMatcher, EmptyPatternNeverFires) {
  EscalationPattern p;
  p.steps.clear();
  EXPECT_OK(p.Validate());
  EscalationMatcher m(&p);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(m.Observe(At(i), 1.0)) << i;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(m.Observe(At(20), 0.99)) << i;
}

TEST(EscalationPattern, ValidateErrors) {
  {
    EscalationPattern p;
    p.steps = {{0.7, seconds(0)}};
    EXPECT_THAT(p.Validate(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("two steps")));
  }
  {
    EscalationPattern p;
    p.steps[1].above = 1.0;
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       ::testing::AllOf(HasSubstr("step 2"), HasSubstr("above"))));
  }
  {
    EscalationPattern p;
    p.steps[0].above = -0.1;
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       ::testing::AllOf(HasSubstr("step 1"), HasSubstr("above"))));
  }
  {
    EscalationPattern p;
    p.steps[0].above = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("step 1")));
  }
  {
    EscalationPattern p;
    p.steps[1].within = seconds(0);
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       ::testing::AllOf(HasSubstr("step 2"), HasSubstr("within"))));
  }
  {
    EscalationPattern p;
    p.steps[1].within = microseconds(-1);
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("within")));
  }
  {
    EscalationPattern p = ThreeSteps();
    p.steps[2].within = seconds(0);
    EXPECT_THAT(p.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("step 3")));
  }
  {
    // The first step's window is not used and may be 0; 0 is a valid threshold.
    EscalationPattern p;
    p.steps = {{0.0, seconds(0)}, {0.0, microseconds(1)}};
    EXPECT_OK(p.Validate());
  }
}

}  // namespace
}  // namespace vigil::drift
