#include "vigil/drift/two_sample.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil::drift {
namespace {

std::vector<double> Sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(TwoSample, SmallCasesByHand) {
  // scipy: ks_2samp([1,2,2,3],[2,2.5,4]).statistic = 5/12, wasserstein_distance = 5/6.
  const ReferenceSample ref({1, 2, 2, 3, std::nan("")});
  EXPECT_EQ(ref.size(), 4u);
  EXPECT_EQ(ref.missing(), 1u);
  const std::vector<double> live = {2, 2.5, 4};
  EXPECT_DOUBLE_EQ(KsStatistic(ref, live), 5.0 / 12.0);
  EXPECT_DOUBLE_EQ(Wasserstein1(ref, live), 5.0 / 6.0);
  // Identical samples: 0; disjoint: KS 1 and W1 the distance between the means.
  EXPECT_EQ(KsStatistic(ref, Sorted({1, 2, 2, 3})), 0);
  EXPECT_EQ(Wasserstein1(ref, Sorted({1, 2, 2, 3})), 0);
  EXPECT_EQ(KsStatistic(ref, Sorted({10, 11})), 1);
  EXPECT_DOUBLE_EQ(Wasserstein1(ref, Sorted({10, 11})), 10.5 - 2.0);
  EXPECT_DOUBLE_EQ(ref.mean(), 2.0);
  EXPECT_DOUBLE_EQ(ref.stddev(), std::sqrt(0.5));
}

// Against scipy on random samples with ties, shifts and scale changes: the fixtures are
// computed by /usr/bin/python3 with scipy at test time.
TEST(TwoSample, EqualToScipy) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/two_sample_", getpid());
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(17);
  struct Case {
    std::vector<double> ref, live;
  };
  std::vector<Case> cases;
  for (int k = 0; k < 12; ++k) {
    std::normal_distribution<double> base(0, 1), moved(0.3 * (k % 4), 1 + 0.5 * (k % 3));
    Case c;
    // Sizes within scipy's exact range (both at most 10,000; one pair equal) and beyond it
    // (a 20,000-value reference: the asymptotic p-value).
    const int n = k == 3 ? 280 : k < 6 ? 1000 + 97 * k : k < 9 ? 9000 : 20000;
    const int m = k < 9 ? 10 + 90 * k : 30 + 400 * (k - 9);
    for (int i = 0; i < n; ++i) c.ref.push_back(k % 2 ? std::round(base(rng) * 4) : base(rng));
    for (int i = 0; i < m; ++i) c.live.push_back(k % 2 ? std::round(moved(rng) * 4) : moved(rng));
    cases.push_back(std::move(c));
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    std::ofstream ref(absl::StrCat(dir, "/ref", i)), live(absl::StrCat(dir, "/live", i));
    ref.precision(17);
    live.precision(17);
    for (double v : cases[i].ref) ref << v << "\n";
    for (double v : cases[i].live) live << v << "\n";
  }
  const std::string script = absl::StrCat(
      "import numpy as np, sys\n"
      "from scipy.stats import ks_2samp, wasserstein_distance\n"
      "d = sys.argv[1]\n"
      "with open(d + '/expected', 'w') as out:\n"
      "    for i in range(", cases.size(), "):\n"
      "        r = np.loadtxt(f'{d}/ref{i}'); l = np.loadtxt(f'{d}/live{i}')\n"
      "        k = ks_2samp(r, l)\n"
      "        out.write(f'{k.statistic!r} {wasserstein_distance(r, l)!r} {k.pvalue!r}\\n')\n");
  ASSERT_EQ(testing::RunProcess("/usr/bin/python3", {"-c", script, dir},
                                dir + "/log"),
            0)
      << testing::ReadFile(dir + "/log");
  std::istringstream expected(testing::ReadFile(dir + "/expected"));
  for (size_t i = 0; i < cases.size(); ++i) {
    double ks = 0, w1 = 0, p = 0;
    ASSERT_TRUE(expected >> ks >> w1 >> p) << i;
    const ReferenceSample ref(cases[i].ref);
    const std::vector<double> live = Sorted(cases[i].live);
    EXPECT_NEAR(KsStatistic(ref, live), ks, 1e-12) << "case " << i;
    EXPECT_NEAR(Wasserstein1(ref, live), w1, 1e-9 * std::max(1.0, w1)) << "case " << i;
    EXPECT_NEAR(KsPValue(ref.size(), live.size(), KsStatistic(ref, live)), p, 1e-6)
        << "case " << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::drift
