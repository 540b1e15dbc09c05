#include "vigil/evaluation/detection_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/check.h"

namespace vigil::evaluation {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Ratio(uint64_t num, uint64_t den) {
  return den == 0 ? kNaN : static_cast<double>(num) / static_cast<double>(den);
}

// The rows' order by score, highest first; ties by row order (stable).
std::vector<size_t> ByScoreDescending(absl::Span<const double> scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

// Calls step(threshold, confusion) once per distinct score, highest first, with the confusion
// of predicting positive every row scored at or above it; stops when step returns false.
template <typename Step>
void ForEachThreshold(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                      Step step) {
  VIGIL_CHECK(scores.size() == labels.size());
  uint64_t positives = 0;
  for (uint8_t l : labels) positives += l != 0;
  const uint64_t negatives = labels.size() - positives;
  const std::vector<size_t> order = ByScoreDescending(scores);
  Confusion c{.tp = 0, .fp = 0, .fn = positives, .tn = negatives};
  for (size_t i = 0; i < order.size();) {
    const double threshold = scores[order[i]];
    for (; i < order.size() && scores[order[i]] == threshold; ++i) {
      if (labels[order[i]] != 0) {
        ++c.tp;
        --c.fn;
      } else {
        ++c.fp;
        --c.tn;
      }
    }
    if (!step(threshold, c)) return;
  }
}

// numpy's default ("linear") percentile of sorted values, q in [0, 1].
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double Confusion::precision() const { return Ratio(tp, tp + fp); }
double Confusion::recall() const { return Ratio(tp, tp + fn); }
double Confusion::f1() const { return Ratio(2 * tp, 2 * tp + fp + fn); }
double Confusion::fpr() const { return Ratio(fp, fp + tn); }

Confusion ConfusionAt(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                      double threshold) {
  VIGIL_CHECK(scores.size() == labels.size());
  Confusion c;
  for (size_t i = 0; i < scores.size(); ++i) {
    const bool predicted = scores[i] >= threshold;
    if (labels[i] != 0) {
      (predicted ? c.tp : c.fn) += 1;
    } else {
      (predicted ? c.fp : c.tn) += 1;
    }
  }
  return c;
}

double AveragePrecision(absl::Span<const double> scores, absl::Span<const uint8_t> labels) {
  double ap = 0, previous_recall = 0;
  bool any = false;
  ForEachThreshold(scores, labels, [&](double, const Confusion& c) {
    if (c.tp + c.fn == 0) return false;  // no positive row
    any = true;
    const double recall = c.recall();
    ap += (recall - previous_recall) * c.precision();
    previous_recall = recall;
    return true;
  });
  return any ? ap : kNaN;
}

ThresholdChoice BestF1(absl::Span<const double> scores, absl::Span<const uint8_t> labels) {
  ThresholdChoice best{.threshold = kNaN, .at = {}};
  double best_f1 = -1;
  ForEachThreshold(scores, labels, [&](double threshold, const Confusion& c) {
    if (c.tp + c.fn == 0) return false;
    if (c.f1() >= best_f1) {  // >=: the lower threshold on a tie
      best_f1 = c.f1();
      best = {.threshold = threshold, .at = c};
    }
    return true;
  });
  return best;
}

ThresholdChoice RecallAtFpr(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                            double max_fpr) {
  ThresholdChoice chosen{.threshold = std::numeric_limits<double>::infinity(),
                         .at = ConfusionAt(scores, labels, std::numeric_limits<double>::infinity())};
  ForEachThreshold(scores, labels, [&](double threshold, const Confusion& c) {
    const uint64_t negatives = c.fp + c.tn;
    if (negatives > 0 && static_cast<double>(c.fp) > max_fpr * static_cast<double>(negatives)) {
      return false;
    }
    chosen = {.threshold = threshold, .at = c};
    return true;
  });
  return chosen;
}

double PrecisionAtK(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                    size_t k) {
  VIGIL_CHECK(scores.size() == labels.size());
  k = std::min(k, scores.size());
  if (k == 0) return kNaN;
  const std::vector<size_t> order = ByScoreDescending(scores);
  uint64_t hits = 0;
  for (size_t i = 0; i < k; ++i) hits += labels[order[i]] != 0;
  return Ratio(hits, k);
}

std::vector<CurvePoint> PrecisionRecallCurve(absl::Span<const double> scores,
                                             absl::Span<const uint8_t> labels) {
  std::vector<CurvePoint> curve;
  ForEachThreshold(scores, labels, [&](double threshold, const Confusion& c) {
    if (c.tp + c.fn == 0) return false;
    curve.push_back({threshold, c.recall(), c.precision()});
    return true;
  });
  return curve;
}

std::string PrecisionRecallSvg(absl::Span<const CurvePoint> curve, double base_rate,
                               std::string_view title, size_t max_points) {
  constexpr double kW = 480, kH = 360, kLeft = 56, kRight = 16, kTop = 36, kBottom = 44;
  const double w = kW - kLeft - kRight, h = kH - kTop - kBottom;
  const auto x = [&](double recall) { return kLeft + recall * w; };
  const auto y = [&](double precision) { return kTop + (1 - precision) * h; };
  std::string escaped;
  for (char c : title) {
    if (c == '<') {
      escaped += "&lt;";
    } else if (c == '&') {
      escaped += "&amp;";
    } else if (c == '>') {
      escaped += "&gt;";
    } else {
      escaped += c;
    }
  }
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%g\" y=\"20\" font-size=\"14\">%s</text>\n"
      "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#888\"/>\n",
      kW, kH, kLeft, escaped, kLeft, kTop, w, h);
  for (int t = 0; t <= 4; ++t) {
    const double v = t / 4.0;
    absl::StrAppendFormat(&svg,
                          "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%g</text>\n"
                          "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%g</text>\n",
                          x(v), kTop + h + 16, v, kLeft - 6, y(v) + 4, v);
  }
  absl::StrAppendFormat(&svg,
                        "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">recall</text>\n"
                        "<text x=\"14\" y=\"%g\" transform=\"rotate(-90 14 %g)\" "
                        "text-anchor=\"middle\">precision</text>\n",
                        kLeft + w / 2, kH - 8, kTop + h / 2, kTop + h / 2);
  if (std::isfinite(base_rate)) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#c33\" "
                          "stroke-dasharray=\"4 3\"/>\n",
                          x(0), y(base_rate), x(1), y(base_rate));
  }
  std::string points;
  double last_recall = -1;
  // Thinned only when there are more points than max_points.
  const double step = max_points > 0 && curve.size() > max_points
                          ? 1.0 / static_cast<double>(max_points)
                          : -1;
  for (size_t i = 0; i < curve.size(); ++i) {
    const CurvePoint& p = curve[i];
    if (i + 1 < curve.size() && p.recall - last_recall < step) continue;
    last_recall = p.recall;
    absl::StrAppendFormat(&points, "%.2f,%.2f ", x(p.recall), y(p.precision));
  }
  absl::StrAppendFormat(&svg,
                        "<polyline fill=\"none\" stroke=\"#236\" stroke-width=\"1.5\" "
                        "points=\"%s\"/>\n</svg>\n",
                        points);
  return svg;
}

Interval BootstrapInterval(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                           const Metric& metric, size_t resamples, uint64_t seed,
                           double level) {
  VIGIL_CHECK(scores.size() == labels.size());
  VIGIL_CHECK(level > 0 && level < 1);
  Interval out;
  out.estimate = metric(scores, labels);
  const size_t n = scores.size();
  if (n == 0) {
    out.low = out.high = kNaN;
    return out;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  std::vector<double> s(n);
  std::vector<uint8_t> l(n);
  std::vector<double> values;
  values.reserve(resamples);
  for (size_t r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const size_t j = pick(rng);
      s[i] = scores[j];
      l[i] = labels[j];
    }
    const double v = metric(s, l);
    if (!std::isnan(v)) values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  out.used = values.size();
  out.low = Percentile(values, (1 - level) / 2);
  out.high = Percentile(values, 1 - (1 - level) / 2);
  return out;
}

}  // namespace vigil::evaluation
