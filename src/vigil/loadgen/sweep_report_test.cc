#include "vigil/loadgen/sweep_report.h"

#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using ::testing::ElementsAre;

// A point with 100 completed 2xx responses, all of latency "p99" (so every percentile is it).
SweepPoint Point(std::string setting, double achieved_rps, microseconds p99) {
  SweepPoint p;
  p.setting = std::move(setting);
  p.result.achieved_rps = achieved_rps;
  p.result.latency = std::make_unique<LatencyHistogram>();
  p.result.ok_latency = std::make_unique<LatencyHistogram>();
  for (int i = 0; i < 100; ++i) {
    p.result.latency->Record(p99);
    p.result.ok_latency->Record(p99);
  }
  p.result.completed = p.result.ok = 100;
  return p;
}

TEST(ParetoBest, MarksPointsNoOtherBeatsOnBothAxes) {
  std::vector<SweepPoint> points;
  points.push_back(Point("low-latency", 1000, microseconds(500)));  // best latency
  points.push_back(Point("balanced", 2000, microseconds(900)));  // best on neither, beaten by none
  points.push_back(
      Point("dominated", 1500, microseconds(1200)));  // "balanced" is faster and quicker
  points.push_back(Point("throughput", 3000, microseconds(4000)));      // best throughput
  points.push_back(Point("same-rps-worse", 3000, microseconds(5000)));  // ties rps, worse P99
  points.push_back(Point("twin", 1000, microseconds(500)));  // equal to low-latency: both stay
  EXPECT_THAT(ParetoBest(points), ElementsAre(true, true, false, true, false, true));
}

TEST(ParetoBest, PointsWithout2xxAreNeverBestAndDominateNothing) {
  std::vector<SweepPoint> points;
  points.push_back(Point("ok", 1000, microseconds(800)));
  SweepPoint all_shed;
  all_shed.setting = "all-shed";
  all_shed.result.achieved_rps = 50000;  // fast 503s
  all_shed.result.latency = std::make_unique<LatencyHistogram>();
  all_shed.result.ok_latency = std::make_unique<LatencyHistogram>();
  points.push_back(std::move(all_shed));
  SweepPoint no_histograms;  // a default LoadResult
  points.push_back(std::move(no_histograms));
  EXPECT_THAT(ParetoBest(points), ElementsAre(true, false, false));
  EXPECT_THAT(ParetoBest({}), ElementsAre());
}

TEST(FormatSweepTable, FixedWidthColumnsWithTheMarkerOnParetoBestRows) {
  std::vector<SweepPoint> points;
  points.push_back(Point("latency", 1000, microseconds(500)));
  points.push_back(Point("dominated", 900, microseconds(700)));
  points.push_back(Point("throughput", 20000, microseconds(2500)));
  points[2].result.mode = LoadOptions::Mode::kOpen;
  points[2].result.offered_rps = 25000;
  points[2].result.shed = 7;
  points[2].result.degraded = 3;
  points[2].result.timeouts = 1;
  points[2].result.connection_errors = 2;
  points[2].result.other_status = 4;
  // Right-aligned numbers under their headers; "*" on the two Pareto-best rows; errors of the
  // last row = 1 timeout + 2 connection errors + 4 other statuses.
  EXPECT_EQ(FormatSweepTable(points),
            "setting     mode    offered_qps  achieved_qps  p50_us  p99_us  p99.9_us   ok  shed  "
            "degraded  errors  best\n"
            "latency     closed            -          1000   500.0   500.0     500.0  100     0  "
            "       0       0  *\n"
            "dominated   closed            -           900   700.0   700.0     700.0  100     0  "
            "       0       0\n"
            "throughput  open          25000         20000  2500.0  2500.0    2500.0  100     7  "
            "       3       7  *\n");
}

}  // namespace
}  // namespace vigil
