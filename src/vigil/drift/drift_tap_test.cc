#include "vigil/drift/drift_tap.h"

#include <cmath>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

// A one-feature profile: values 0..99 uniformly. Rows from t = 0: no warm-up.
std::unique_ptr<DriftMonitor> MakeMonitor(const ReferenceProfile& profile) {
  DriftConfig config;
  config.warmup = std::chrono::seconds(0);
  absl::StatusOr<std::unique_ptr<DriftMonitor>> m =
      DriftMonitor::Create(profile, "v1", {"x"}, config, nullptr);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

ReferenceProfile Profile() {
  std::vector<double> edges, counts, sample;
  for (int i = 0; i <= 10; ++i) edges.push_back(i * 10);
  for (int i = 0; i < 10; ++i) counts.push_back(100);
  for (int i = 0; i < 1000; ++i) sample.push_back(i / 10.0);
  nlohmann::json j = {{"feature_schema_version", "v1"}, {"rows", 1000}};
  j["features"]["x"] = {{"count", 1000}, {"missing", 0}, {"bin_edges", edges}, {"bin_counts", counts},
                        {"mean", 50}, {"std", 28.9}, {"sample", sample}};
  return *ReferenceProfile::Parse(j.dump(), "p");
}

UtcTime At(int64_t s) { return FromUnixMicros((1'700'000'000 + s) * 1'000'000); }

TEST(DriftTap, BlockingTapObservesEveryRowInOrder) {
  const ReferenceProfile profile = Profile();
  auto monitor = MakeMonitor(profile);
  {
    DriftTap tap(monitor.get(), 100, DriftTap::WhenFull::kBlock);
    std::vector<UtcTime> times;
    std::vector<double> values, scores;
    for (int i = 0; i < 10'000; ++i) {
      times.push_back(At(i / 10));
      values.push_back(i % 100);
      scores.push_back(std::nan(""));
      if (times.size() == 250) {  // larger than the capacity: split, never dropped
        EXPECT_TRUE(tap.Offer(times, values, scores));
        times.clear();
        values.clear();
        scores.clear();
      }
    }
    tap.Drain();
    EXPECT_EQ(tap.observed(), 10'000u);
    EXPECT_EQ(tap.dropped(), 0u);
    EXPECT_OK(tap.status());
  }
  const DriftState state = monitor->State(false);
  EXPECT_EQ(state.rows, 10'000u);
  EXPECT_EQ(state.late, 0u);  // in order: nothing arrived late
  EXPECT_GT(state.evaluations, 100u);
}

// Buffers handed over are observed like copied ones, and come back empty with their capacity
// once observed, so that a steady feeder stops allocating.
TEST(DriftTap, HandedOverBuffersAreObservedAndComeBackForReuse) {
  const ReferenceProfile profile = Profile();
  auto monitor = MakeMonitor(profile);
  DriftTap tap(monitor.get(), 1000, DriftTap::WhenFull::kBlock);
  DriftTap::Rows first = tap.Spare();
  EXPECT_EQ(first.features.capacity(), 0u);  // nothing observed yet: fresh buffers
  std::vector<const double*> handed;
  for (int batch = 0; batch < 20; ++batch) {
    DriftTap::Rows rows = batch == 0 ? std::move(first) : tap.Spare();
    for (int i = 0; i < 100; ++i) {
      rows.times.push_back(At(batch * 10 + i / 10));
      rows.features.push_back(i);
      rows.scores.push_back(std::nan(""));
    }
    handed.push_back(rows.features.data());
    EXPECT_TRUE(tap.Offer(std::move(rows)));
    tap.Drain();
  }
  EXPECT_EQ(tap.observed(), 2000u);
  EXPECT_EQ(monitor->State(false).rows, 2000u);
  // After the first batch, each one reused the buffer the monitor had just observed.
  for (size_t b = 1; b < handed.size(); ++b) EXPECT_EQ(handed[b], handed[0]) << b;
  DriftTap::Rows again = tap.Spare();
  EXPECT_TRUE(again.times.empty());
  EXPECT_TRUE(again.features.empty());
  EXPECT_GE(again.features.capacity(), 100u);
  EXPECT_TRUE(tap.Offer(DriftTap::Rows{}));  // nothing to observe
}

// A bulk feeder's tap wakes its thread only for large batches, yet a few rows are never
// stranded: Drain takes them at once, and the thread looks at least every 50 ms regardless.
TEST(DriftTap, FewerRowsThanAWakeBatchAreStillObserved) {
  const ReferenceProfile profile = Profile();
  auto monitor = MakeMonitor(profile);
  DriftTap tap(monitor.get(), 100'000, DriftTap::WhenFull::kBlock, /*wake_rows=*/50'000);
  const std::vector<UtcTime> times = {At(0), At(1), At(2)};
  const std::vector<double> values = {1, 2, 3};
  const std::vector<double> scores(3, std::nan(""));
  EXPECT_TRUE(tap.Offer(times, values, scores));
  for (int i = 0; i < 200 && tap.observed() < 3; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(tap.observed(), 3u);  // by the 50 ms look, not a wake
  EXPECT_TRUE(tap.Offer(times, values, scores));
  tap.Drain();
  EXPECT_EQ(tap.observed(), 6u);
}

TEST(DriftTap, DroppingTapNeverWaitsAndCountsWhatItDrops) {
  const ReferenceProfile profile = Profile();
  auto monitor = MakeMonitor(profile);
  uint64_t offered = 0, refused = 0;
  {
    DriftTap tap(monitor.get(), 4, DriftTap::WhenFull::kDrop);
    const std::vector<double> scores = {std::nan("")};
    for (int i = 0; i < 50'000; ++i) {
      const std::vector<UtcTime> t = {At(i / 100)};
      const std::vector<double> v = {static_cast<double>(i % 100)};
      ++offered;
      if (!tap.Offer(t, v, scores)) ++refused;
    }
    tap.Drain();
    EXPECT_EQ(tap.dropped(), refused);
    EXPECT_EQ(tap.observed() + tap.dropped(), offered);
  }
  EXPECT_EQ(monitor->State(false).rows, offered - refused);
}

}  // namespace
}  // namespace vigil::drift
