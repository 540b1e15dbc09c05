#include "vigil/synth/internal/rng.h"

#include <array>
#include <cstdint>

#include "gtest/gtest.h"

namespace vigil::synth::internal {
namespace {

TEST(SplitMix64, MatchesReferenceOutputs) {
  // Reference values of Vigna's splitmix64.c from state 0.
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(&state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(SplitMix64(&state), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(SplitMix64(&state), 0x06C45D188009454FULL);
}

TEST(Rng, MatchesXoshiro256StarStarReference) {
  // Reference values of Blackman & Vigna's xoshiro256starstar.c from state {1, 2, 3, 4}.
  Rng rng = Rng::FromStateForTest(1, 2, 3, 4);
  EXPECT_EQ(rng.Next(), 11520u);
  EXPECT_EQ(rng.Next(), 0u);
  EXPECT_EQ(rng.Next(), 1509978240u);
  EXPECT_EQ(rng.Next(), 1215971899390074240u);
}

TEST(Rng, SameSeedAndStreamGiveSameSequence) {
  Rng a(42, 7);
  Rng b(42, 7);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.Next(), b.Next());
}

TEST(Rng, OtherSeedOrStreamGivesOtherSequence) {
  Rng base(42, 7);
  Rng other_seed(43, 7);
  Rng other_stream(42, 8);
  const uint64_t first = base.Next();
  EXPECT_NE(first, other_seed.Next());
  EXPECT_NE(first, other_stream.Next());
}

TEST(Rng, UniformIsInUnitInterval) {
  Rng rng(1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(Rng, UniformIntCoversRangeEvenly) {
  Rng rng(2);
  std::array<int, 6> counts{};
  for (int i = 0; i < 60000; ++i) {
    const uint64_t k = rng.UniformInt(6);
    ASSERT_LT(k, 6u);
    ++counts[k];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
}

TEST(Rng, UniformRangeIncludesBothEnds) {
  Rng rng(3);
  bool saw_lo = false;
  bool saw_hi = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t k = rng.UniformRange(4, 16);
    ASSERT_GE(k, 4);
    ASSERT_LE(k, 16);
    saw_lo |= k == 4;
    saw_hi |= k == 16;
  }
  EXPECT_TRUE(saw_lo);
  EXPECT_TRUE(saw_hi);
}

}  // namespace
}  // namespace vigil::synth::internal
