#include "vigil/drift/profile_builder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "boost/math/distributions/chi_squared.hpp"
#include "nlohmann/json.hpp"

namespace vigil::drift {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kDispersionWindows[] = {60, 300, 900, 3600, 21600, 86400};
constexpr size_t kMinWindowRows = 5;
constexpr size_t kMinWindows = 20;

// numpy's default (linear) quantile of sorted values.
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

// The 95th percentile of "ratio" over the iid one for k cells, at least 1.
double DispersionFactor(std::vector<double> ratio, size_t k) {
  std::sort(ratio.begin(), ratio.end());
  const double df = static_cast<double>(k - 1);
  const double iid = boost::math::quantile(boost::math::chi_squared(df), 0.95) / df;
  return std::max(1.0, Quantile(ratio, 0.95) / iid);
}

Json Dispersion(absl::Span<const double> values, absl::Span<const int64_t> seconds,
                const std::vector<double>& edges, const std::vector<uint64_t>& counts) {
  // Cell 0: missing; cell 1 + i: bin i.
  std::vector<double> ref(counts.size() + 1);
  std::vector<int> cell(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      cell[i] = 0;
      continue;
    }
    const auto bin = std::upper_bound(edges.begin(), edges.end(), values[i]) - edges.begin() - 1;
    cell[i] = 1 + static_cast<int>(std::clamp<int64_t>(bin, 0, static_cast<int64_t>(counts.size()) - 1));
  }
  for (int c : cell) ref[static_cast<size_t>(c)] += 1;
  std::vector<int> remap(ref.size(), -1);
  std::vector<double> q;
  double total = 0;
  for (double r : ref) total += r;
  for (size_t c = 0; c < ref.size(); ++c) {
    if (ref[c] > 0) {
      remap[c] = static_cast<int>(q.size());
      q.push_back(ref[c] / total);
    }
  }
  Json out = Json::object();
  const size_t k = q.size();
  if (k < 2) return out;
  for (int64_t w : kDispersionWindows) {
    std::map<int64_t, std::vector<double>> table;  // window -> counts per kept cell
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t s = seconds[i];
      const int64_t win = s >= 0 ? s / w : -((-s + w - 1) / w);  // floor division
      std::vector<double>& row = table[win];
      if (row.empty()) row.assign(k, 0);
      row[static_cast<size_t>(remap[static_cast<size_t>(cell[i])])] += 1;
    }
    std::vector<double> ratio;
    for (const auto& [win, row] : table) {
      double n = 0;
      for (double x : row) n += x;
      if (n < kMinWindowRows) continue;
      double x2 = 0;
      for (size_t c = 0; c < k; ++c) {
        const double e = n * q[c];
        x2 += (row[c] - e) * (row[c] - e) / e;
      }
      ratio.push_back(x2 / static_cast<double>(k - 1));
    }
    if (ratio.size() < kMinWindows) continue;
    out[std::to_string(w)] = DispersionFactor(std::move(ratio), k);
  }
  return out;
}

Json Entry(absl::Span<const double> values, absl::Span<const int64_t> seconds) {
  std::vector<double> present;
  present.reserve(values.size());
  for (double v : values) {
    if (!std::isnan(v)) present.push_back(v);
  }
  std::sort(present.begin(), present.end());
  Json e = {{"count", values.size()}, {"missing", values.size() - present.size()}};
  if (present.empty()) return e;
  std::vector<double> edges;
  for (int i = 0; i <= kProfileBins; ++i) {
    edges.push_back(Quantile(present, static_cast<double>(i) / kProfileBins));
  }
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<uint64_t> counts;
  if (edges.size() > 1) {
    counts.assign(edges.size() - 1, 0);
    for (double v : present) {
      auto bin = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin() - 1;
      bin = std::min<int64_t>(bin, static_cast<int64_t>(counts.size()) - 1);  // last bin closed
      ++counts[static_cast<size_t>(bin)];
    }
  } else {
    edges = {edges[0], edges[0]};
    counts = {present.size()};
  }
  double sum = 0;
  for (double v : present) sum += v;
  const double mean = sum / static_cast<double>(present.size());
  double squares = 0;
  for (double v : present) squares += (v - mean) * (v - mean);
  const size_t m = std::min(kProfileSample, present.size());
  Json sample = Json::array();
  for (size_t i = 0; i < m; ++i) {
    // numpy.linspace(0, n - 1, m).astype(int)
    const double at = m == 1 ? 0.0
                             : static_cast<double>(i) * static_cast<double>(present.size() - 1) /
                                   static_cast<double>(m - 1);
    sample.push_back(present[std::min(static_cast<size_t>(at), present.size() - 1)]);
  }
  e["bin_edges"] = edges;
  e["bin_counts"] = counts;
  e["mean"] = mean;
  e["std"] = std::sqrt(squares / static_cast<double>(present.size()));
  e["sample"] = std::move(sample);
  if (!seconds.empty()) {
    e["dispersion"] = Dispersion(values, seconds, edges, counts);
  }
  return e;
}

}  // namespace

std::string ProfileEntryJson(absl::Span<const double> values, absl::Span<const int64_t> seconds) {
  return Entry(values, seconds).dump();
}

std::string ReferenceProfileJson(std::string_view schema_version,
                                 const std::vector<std::string>& names,
                                 absl::Span<const double> rows, absl::Span<const int64_t> seconds,
                                 absl::Span<const double> score,
                                 absl::Span<const int64_t> score_seconds) {
  const size_t width = names.size();
  const size_t n = width == 0 ? 0 : rows.size() / width;
  Json features = Json::object();
  std::vector<double> column(n);
  for (size_t j = 0; j < width; ++j) {
    for (size_t i = 0; i < n; ++i) column[i] = rows[i * width + j];
    features[names[j]] = Entry(column, seconds);
  }
  Json profile = {{"feature_schema_version", std::string(schema_version)},
                  {"rows", n},
                  {"features", std::move(features)}};
  if (!score.empty()) profile["score"] = Entry(score, score_seconds);
  return profile.dump() + "\n";
}

}  // namespace vigil::drift
