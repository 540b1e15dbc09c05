#include "vigil/loadgen/sweep_report.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace vigil {
namespace {

// P99 of the 2xx responses; nullopt without any.
std::optional<std::chrono::nanoseconds> OkP99(const LoadResult& r) {
  if (r.ok_latency == nullptr || r.ok_latency->count() == 0) return std::nullopt;
  return r.ok_latency->Percentile(99);
}

std::string Micros(const LoadResult& r, double p) {
  if (r.latency == nullptr || r.latency->count() == 0) return "-";
  return absl::StrFormat(
      "%.1f", std::chrono::duration<double, std::micro>(r.latency->Percentile(p)).count());
}

}  // namespace

std::vector<bool> ParetoBest(const std::vector<SweepPoint>& points) {
  std::vector<bool> best(points.size(), false);
  for (size_t i = 0; i < points.size(); ++i) {
    const std::optional<std::chrono::nanoseconds> p99 = OkP99(points[i].result);
    if (!p99) continue;
    const double rps = points[i].result.achieved_rps;
    best[i] = std::none_of(points.begin(), points.end(), [&](const SweepPoint& other) {
      const std::optional<std::chrono::nanoseconds> other_p99 = OkP99(other.result);
      const double other_rps = other.result.achieved_rps;
      return other_p99 && other_rps >= rps && *other_p99 <= *p99 &&
             (other_rps > rps || *other_p99 < *p99);
    });
  }
  return best;
}

std::string FormatSweepTable(const std::vector<SweepPoint>& points) {
  const std::vector<bool> best = ParetoBest(points);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"setting", "mode", "offered_qps", "achieved_qps", "p50_us", "p99_us", "p99.9_us",
                  "ok", "shed", "degraded", "errors", "best"});
  for (size_t i = 0; i < points.size(); ++i) {
    const LoadResult& r = points[i].result;
    rows.push_back(
        {points[i].setting, std::string(LoadModeName(r.mode)),
         r.mode == LoadOptions::Mode::kOpen ? absl::StrFormat("%.0f", r.offered_rps) : "-",
         absl::StrFormat("%.0f", r.achieved_rps), Micros(r, 50), Micros(r, 99), Micros(r, 99.9),
         absl::StrCat(r.ok), absl::StrCat(r.shed), absl::StrCat(r.degraded),
         absl::StrCat(r.timeouts + r.connection_errors + r.other_status), best[i] ? "*" : ""});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // The setting and the marker are left-aligned, the numbers right-aligned.
      const bool left = c == 0 || c == 1 || c + 1 == row.size();
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&line, c == 0 ? "" : "  ", left ? row[c] : pad, left ? pad : row[c]);
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

}  // namespace vigil
