#include "vigil/common/ids.h"

#include <set>

#include "gtest/gtest.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::FakeClock;
using ::vigil::testing::StatusIs;

TEST(UuidV7Generator, LayoutFollowsRfc9562) {
  FakeClock clock(FromUnixMicros(1'700'000'000'123'000));
  UuidV7Generator gen(clock, 42);
  const Uuid id = gen.Next();
  EXPECT_EQ(id.version(), 7);
  EXPECT_EQ(id.bytes[8] >> 6, 0b10);  // RFC 4122/9562 variant
  EXPECT_EQ(id.unix_millis(), 1'700'000'000'123);
  const std::string text = id.ToString();
  ASSERT_EQ(text.size(), 36u);
  EXPECT_EQ(text[14], '7');
}

TEST(UuidV7Generator, StrictlyIncreasingWithinOneMillisecondAndAcrossBackwardSteps) {
  FakeClock clock;
  UuidV7Generator gen(clock, 7);
  Uuid prev = gen.Next();
  for (int i = 0; i < 10000; ++i) {
    if (i == 5000) clock.Advance(std::chrono::milliseconds(-3));  // NTP step back
    if (i % 1000 == 0) clock.Advance(std::chrono::microseconds(700));
    const Uuid next = gen.Next();
    ASSERT_LT(prev, next) << "at " << i;
    ASSERT_LT(prev.ToString(), next.ToString()) << "string order must match byte order";
    prev = next;
  }
}

TEST(UuidV7Generator, SameSeedSameIds) {
  FakeClock clock;
  UuidV7Generator a(clock, 1), b(clock, 1), c(clock, 2);
  const Uuid ida = a.Next();
  EXPECT_EQ(ida, b.Next());
  EXPECT_NE(ida, c.Next());
}

TEST(ParseUuid, RoundTripsAndRejectsMalformed) {
  FakeClock clock;
  UuidV7Generator gen(clock, 3);
  const Uuid id = gen.Next();
  ASSERT_OK_AND_ASSIGN(Uuid parsed, ParseUuid(id.ToString()));
  EXPECT_EQ(parsed, id);
  EXPECT_THAT(ParseUuid("0190b1a2-7c3d-7e4f-8a5b-6c7d8e9f0a1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseUuid("0190b1a2x7c3d-7e4f-8a5b-6c7d8e9f0a1b"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseUuid("0190b1a2-7c3d-7e4f-8a5b-6c7d8e9f0a1g"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("non-hex")));
}

}  // namespace
}  // namespace vigil
