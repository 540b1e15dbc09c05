#include "vigil/common/check.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(Check, PassingChecksDoNothing) {
  int evaluated = 0;
  VIGIL_CHECK(++evaluated == 1);
  EXPECT_EQ(evaluated, 1) << "VIGIL_CHECK evaluates its condition exactly once";
  VIGIL_DCHECK(true);
}

TEST(CheckDeathTest, FailedCheckAbortsWithFileAndCondition) {
  EXPECT_DEATH(VIGIL_CHECK(1 + 1 == 3), "check_test.cc:[0-9]+: check failed: 1 \\+ 1 == 3");
}

#ifdef NDEBUG
TEST(Check, DcheckIsNotEvaluatedInRelease) {
  int evaluated = 0;
  VIGIL_DCHECK(++evaluated == 100);
  EXPECT_EQ(evaluated, 0);
}

TEST(Check, BugCountsAndContinuesInRelease) {
  const uint64_t before = BugCount();
  VIGIL_BUG("survivable impossible state");
  VIGIL_BUG("another");
  EXPECT_EQ(BugCount(), before + 2);
}
#else
TEST(CheckDeathTest, DcheckAbortsInDebug) { EXPECT_DEATH(VIGIL_DCHECK(false), "check failed"); }

TEST(CheckDeathTest, BugAbortsInDebug) {
  EXPECT_DEATH(VIGIL_BUG("impossible state"), "bug: impossible state");
}
#endif

}  // namespace
}  // namespace vigil
