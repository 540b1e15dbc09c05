#include "vigil/synth/typology.h"

#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::synth {
namespace {

using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

TEST(Typology, NamesRoundTrip) {
  for (int i = 0; i < kNumTypologies; ++i) {
    const Typology t = kAllTypologies[i];
    EXPECT_EQ(TypologyIndex(t), i);
    EXPECT_FALSE(TypologyName(t).empty());
    EXPECT_THAT(ParseTypology(TypologyName(t)), IsOkAndHolds(t));
  }
  EXPECT_EQ(TypologyName(Typology::kScatterGather), "SCATTER-GATHER");
  EXPECT_EQ(TypologyName(Typology::kPassThrough), "PASS-THROUGH");
}

TEST(Typology, NoneIsTheEmptyName) {
  EXPECT_EQ(TypologyName(Typology::kNone), "");
  EXPECT_THAT(ParseTypology(""), IsOkAndHolds(Typology::kNone));
}

TEST(Typology, RejectsUnknownNames) {
  EXPECT_THAT(ParseTypology("fan-out"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseTypology("RANDOM"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace vigil::synth
