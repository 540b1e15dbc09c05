// Sweep reports: the points of a latency-throughput sweep (one RunLoad per setting, e.g. per
// batcher preset or per offered rate) compared in one table, with the Pareto-best points marked.
//
//   std::vector<SweepPoint> points;
//   for (const auto& preset : presets) {
//     VIGIL_ASSIGN_OR_RETURN(LoadResult r, RunLoad(options, source));
//     points.push_back({preset.name, std::move(r)});
//   }
//   std::cout << FormatSweepTable(points);
//
// Thread safety: pure functions.
#ifndef VIGIL_LOADGEN_SWEEP_REPORT_H_
#define VIGIL_LOADGEN_SWEEP_REPORT_H_

#include <string>
#include <vector>

#include "vigil/loadgen/http_load.h"

namespace vigil {

struct SweepPoint {
  std::string setting;  // what was varied, e.g. the batcher preset name
  LoadResult result;
};

// Element i is true when point i is Pareto-best: no other point has achieved_rps >= and P99 of
// ok_latency <= with at least one of the two strict. A point without 2xx responses (null or
// empty ok_latency) has no latency to compare: it is never Pareto-best and dominates nothing.
// Equal points are all Pareto-best.
std::vector<bool> ParetoBest(const std::vector<SweepPoint>& points);

// A fixed-width text table, one header line and one line per point in order, each ending in
// '\n': setting, mode, offered QPS ("-" in closed loop), achieved QPS, P50/P99/P99.9 in
// microseconds of all completed responses ("-" without any), ok, shed (503), degraded, errors
// (timeouts + connection errors + other statuses), and "*" in the last column on the
// Pareto-best points.
std::string FormatSweepTable(const std::vector<SweepPoint>& points);

}  // namespace vigil

#endif  // VIGIL_LOADGEN_SWEEP_REPORT_H_
