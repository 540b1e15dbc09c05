#include "vigil/evaluation/detection_metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/subprocess.h"

namespace vigil::evaluation {
namespace {

TEST(DetectionMetrics, ASmallCaseByHand) {
  // Scores 0.9 (+), 0.8 (-), 0.8 (+), 0.3 (-), 0.1 (+).
  const std::vector<double> s = {0.9, 0.8, 0.8, 0.3, 0.1};
  const std::vector<uint8_t> l = {1, 0, 1, 0, 1};
  // Thresholds 0.9: P 1, R 1/3; 0.8 (both tied rows): P 2/3, R 2/3; 0.3: P 2/4; 0.1: P 3/5, R 1.
  EXPECT_DOUBLE_EQ(AveragePrecision(s, l), 1.0 / 3 + (1.0 / 3) * (2.0 / 3) + (1.0 / 3) * 0.6);
  const Confusion at = ConfusionAt(s, l, 0.8);
  EXPECT_EQ(at.tp, 2u);
  EXPECT_EQ(at.fp, 1u);
  EXPECT_EQ(at.fn, 1u);
  EXPECT_EQ(at.tn, 1u);
  EXPECT_DOUBLE_EQ(at.f1(), 4.0 / 6);
  EXPECT_DOUBLE_EQ(at.fpr(), 0.5);
  // F1: 0.9 → 2/4, 0.8 → 4/6, 0.3 → 4/7, 0.1 → 6/8 = 0.75, the best.
  const ThresholdChoice best = BestF1(s, l);
  EXPECT_EQ(best.threshold, 0.1);
  EXPECT_DOUBLE_EQ(best.at.f1(), 0.75);
  // At most half the negatives alerted: down to 0.8 (one of two), not 0.3.
  const ThresholdChoice budget = RecallAtFpr(s, l, 0.5);
  EXPECT_EQ(budget.threshold, 0.8);
  EXPECT_DOUBLE_EQ(budget.at.recall(), 2.0 / 3);
  // No false alert allowed: only 0.9.
  EXPECT_EQ(RecallAtFpr(s, l, 0.0).threshold, 0.9);
  EXPECT_DOUBLE_EQ(PrecisionAtK(s, l, 2), 0.5);  // 0.9 (+) and the first 0.8 (-)
  EXPECT_DOUBLE_EQ(PrecisionAtK(s, l, 100), 0.6);
}

TEST(DetectionMetrics, ThePrecisionRecallCurveAndItsPicture) {
  const std::vector<double> s = {0.9, 0.8, 0.8, 0.3, 0.1};
  const std::vector<uint8_t> l = {1, 0, 1, 0, 1};
  const std::vector<CurvePoint> curve = PrecisionRecallCurve(s, l);
  ASSERT_EQ(curve.size(), 4u);  // one point per distinct score
  EXPECT_EQ(curve[1].threshold, 0.8);
  EXPECT_DOUBLE_EQ(curve[1].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(curve[1].precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(curve[3].recall, 1.0);
  const std::string svg = PrecisionRecallSvg(curve, 0.6, "a <test> & more");
  EXPECT_THAT(svg, ::testing::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, ::testing::HasSubstr("a &lt;test&gt; &amp; more"));
  EXPECT_THAT(svg, ::testing::HasSubstr("stroke-dasharray"));  // the base rate
  // Four points in the polyline, the last at recall 1 (x = 56 + 408).
  const size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string points = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 4);
  EXPECT_THAT(points, ::testing::HasSubstr("464.00,"));
  EXPECT_TRUE(PrecisionRecallCurve(s, std::vector<uint8_t>(5, 0)).empty());
}

TEST(DetectionMetrics, WithoutPositivesTheyAreNaNNotZero) {
  const std::vector<double> s = {0.4, 0.2};
  const std::vector<uint8_t> l = {0, 0};
  EXPECT_TRUE(std::isnan(AveragePrecision(s, l)));
  EXPECT_TRUE(std::isnan(BestF1(s, l).at.f1()));
  EXPECT_TRUE(std::isnan(ConfusionAt(s, l, 0.3).recall()));
  EXPECT_TRUE(std::isnan(PrecisionAtK(s, l, 0)));
  // An alert budget nothing fits: nothing alerted.
  const std::vector<uint8_t> one = {0, 1};
  const ThresholdChoice none = RecallAtFpr(s, one, 0.0);
  EXPECT_TRUE(std::isinf(none.threshold));
  EXPECT_EQ(none.at.tp + none.at.fp, 0u);
}

TEST(DetectionMetrics, TheBootstrapIntervalHoldsTheEstimateAndNarrowsWithMoreRows) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  const auto make = [&](size_t n, std::vector<double>& s, std::vector<uint8_t>& l) {
    s.resize(n);
    l.resize(n);
    for (size_t i = 0; i < n; ++i) {
      l[i] = (i % 10 == 0) ? 1 : 0;  // a 10% base rate
      s[i] = noise(rng) + (l[i] ? 1.5 : 0.0);
    }
  };
  std::vector<double> s1, s2;
  std::vector<uint8_t> l1, l2;
  make(500, s1, l1);
  make(8000, s2, l2);
  const Interval small = BootstrapInterval(s1, l1, AveragePrecision, 300, 11);
  const Interval large = BootstrapInterval(s2, l2, AveragePrecision, 300, 11);
  for (const Interval& i : {small, large}) {
    EXPECT_LE(i.low, i.estimate);
    EXPECT_GE(i.high, i.estimate);
    EXPECT_EQ(i.used, 300u);
  }
  EXPECT_LT(large.high - large.low, (small.high - small.low) / 2);
  // Deterministic for a seed; another seed, another interval.
  const Interval again = BootstrapInterval(s1, l1, AveragePrecision, 300, 11);
  EXPECT_EQ(again.low, small.low);
  EXPECT_EQ(again.high, small.high);
  EXPECT_NE(BootstrapInterval(s1, l1, AveragePrecision, 300, 12).low, small.low);
}

// scikit-learn computes the same figures on random streams with ties (scores rounded to two
// decimals) and base rates from 1% to 30%.
TEST(DetectionMetrics, AgreeWithScikitLearn) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/detection_metrics_", getpid());
  std::filesystem::create_directories(dir);
  struct Case {
    std::vector<double> s;
    std::vector<uint8_t> l;
  };
  std::vector<Case> cases;
  std::mt19937_64 rng(2024);
  for (double rate : {0.01, 0.05, 0.3}) {
    for (size_t n : {200u, 3000u}) {
      std::bernoulli_distribution positive(rate);
      std::uniform_real_distribution<double> u(0, 1);
      Case c;
      for (size_t i = 0; i < n; ++i) {
        c.l.push_back(positive(rng) ? 1 : 0);
        // Informative but noisy, rounded so that ties are common.
        c.s.push_back(std::round((0.6 * u(rng) + (c.l.back() ? 0.4 * u(rng) : 0.0)) * 100) / 100);
      }
      if (std::count(c.l.begin(), c.l.end(), 1) == 0) c.l[0] = 1;
      cases.push_back(std::move(c));
    }
  }
  for (size_t k = 0; k < cases.size(); ++k) {
    std::ofstream out(absl::StrCat(dir, "/case", k, ".csv"));
    out.precision(17);
    for (size_t i = 0; i < cases[k].s.size(); ++i) {
      out << cases[k].s[i] << "," << int{cases[k].l[i]} << "\n";
    }
  }
  const std::string script = dir + "/oracle.py";
  std::ofstream(script) << R"(import sys, numpy as np
from sklearn.metrics import average_precision_score, f1_score, roc_curve, precision_recall_curve
d, n = sys.argv[1], int(sys.argv[2])
for k in range(n):
    a = np.loadtxt(f"{d}/case{k}.csv", delimiter=",", ndmin=2)
    s, y = a[:, 0], a[:, 1].astype(int)
    p, r, t = precision_recall_curve(y, s)
    f = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-300), 0)[:-1]
    fpr, tpr, th = roc_curve(y, s, drop_intermediate=False)
    ok = np.nonzero(fpr <= 0.05)[0]
    order = np.argsort(-s, kind="stable")
    print(k, repr(average_precision_score(y, s)), repr(f1_score(y, (s >= 0.5).astype(int))),
          repr(float(f.max())), repr(float(tpr[ok[-1]])), repr(float(y[order[:50]].mean())))
)";
  const std::string log = dir + "/oracle.out";
  ASSERT_EQ(vigil::testing::RunProcess(
                "/usr/bin/python3", {script, dir, std::to_string(cases.size())}, log),
            0)
      << "scripts/setup installs python3-sklearn; see " << log;
  std::ifstream in(log);
  size_t seen = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    size_t k = 0;
    double ap = 0, f1 = 0, best = 0, recall = 0, p50 = 0;
    if (!(fields >> k >> ap >> f1 >> best >> recall >> p50)) continue;
    ASSERT_LT(k, cases.size());
    const Case& c = cases[k];
    EXPECT_NEAR(AveragePrecision(c.s, c.l), ap, 1e-12) << "case " << k;
    EXPECT_NEAR(ConfusionAt(c.s, c.l, 0.5).f1(), f1, 1e-12) << "case " << k;
    EXPECT_NEAR(BestF1(c.s, c.l).at.f1(), best, 1e-12) << "case " << k;
    EXPECT_NEAR(RecallAtFpr(c.s, c.l, 0.05).at.recall(), recall, 1e-12) << "case " << k;
    EXPECT_NEAR(PrecisionAtK(c.s, c.l, 50), p50, 1e-12) << "case " << k;
    ++seen;
  }
  EXPECT_EQ(seen, cases.size()) << "see " << log;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::evaluation
