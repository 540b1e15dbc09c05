#include "vigil/drift/live_window.h"

#include <cmath>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

UtcTime At(double seconds) {
  return FromUnixMicros(static_cast<int64_t>(std::llround(seconds * 1e6)) + 1'700'000'000'000'000);
}

class LiveWindowTest : public ::testing::Test {
 protected:
  ReferenceBins bins_ = *ReferenceBins::Create({0, 10, 20, 30}, {1, 1, 1});
};

TEST_F(LiveWindowTest, CountsExactlyWithinTheWindowAndForgetsExpiredPanes) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create({std::chrono::seconds(60),
                                                         std::chrono::seconds(10), 512, 1},
                                                        bins_));
  // 0..59 s: one value per second, value = second % 30; plus a missing value.
  for (int s = 0; s < 60; ++s) w.Add(At(s), s % 30);
  w.Add(At(5), std::nan(""));
  LiveWindow::Snapshot snap = w.Take();
  EXPECT_EQ(snap.present, 60u);
  EXPECT_EQ(snap.missing, 1u);
  EXPECT_THAT(snap.bin_counts, ::testing::ElementsAre(20, 20, 20));
  EXPECT_EQ(snap.sample.size(), 60u);
  EXPECT_TRUE(std::is_sorted(snap.sample.begin(), snap.sample.end()));
  // 25 s later the first three panes (0-29 s, and the missing value) have left the window.
  w.Add(At(85), 1);
  snap = w.Take();
  EXPECT_EQ(snap.present, 31u);  // 30..59 s and the new value
  EXPECT_EQ(snap.missing, 0u);
  // A value before the window's start is late: dropped and counted.
  w.Add(At(3), 1);
  EXPECT_EQ(w.late(), 1u);
  EXPECT_EQ(w.Take().present, 31u);
}

TEST_F(LiveWindowTest, MemoryIsBoundedWhateverTheTraffic) {
  ASSERT_OK_AND_ASSIGN(LiveWindow w, LiveWindow::Create({std::chrono::seconds(60),
                                                         std::chrono::seconds(10), 100, 7},
                                                        bins_));
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(0, 30);
  for (int i = 0; i < 200'000; ++i) w.Add(At(i * 0.0003), u(rng));  // 60 s at ~3,300/s
  const LiveWindow::Snapshot snap = w.Take();
  EXPECT_EQ(snap.present, 200'000u);   // the counts stay exact
  EXPECT_EQ(snap.sample.size(), 600u);  // 6 panes × 100
  // The reservoir is uniform: its mean is close to the stream's (15).
  double mean = 0;
  for (double v : snap.sample) mean += v;
  EXPECT_NEAR(mean / 600, 15, 1.5);
}

TEST_F(LiveWindowTest, BadSizesAreRefused) {
  EXPECT_THAT(LiveWindow::Create({std::chrono::seconds(60), std::chrono::seconds(7), 10, 1}, bins_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("multiple of its slide")));
  EXPECT_THAT(LiveWindow::Create({std::chrono::seconds(60), std::chrono::seconds(0), 10, 1}, bins_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(LiveWindow::Create({std::chrono::seconds(60), std::chrono::seconds(10), 0, 1}, bins_),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace vigil::drift
