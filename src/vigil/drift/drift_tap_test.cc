#include "vigil/drift/drift_tap.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

// A one-feature profile: values 0..99 uniformly.
std::unique_ptr<DriftMonitor> MakeMonitor(const ReferenceProfile& profile) {
  absl::StatusOr<std::unique_ptr<DriftMonitor>> m =
      DriftMonitor::Create(profile, "v1", {"x"}, DriftConfig{}, nullptr);
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
