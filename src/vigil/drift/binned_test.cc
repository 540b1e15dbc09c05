#include "vigil/drift/binned.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"

namespace vigil::drift {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

TEST(ReferenceBins, BinsAsNumpyHistogramAndClampsOutsideValues) {
  ASSERT_OK_AND_ASSIGN(ReferenceBins bins, ReferenceBins::Create({0, 1, 2, 4}, {5, 5, 5}));
  EXPECT_EQ(bins.Bin(0), 0u);
  EXPECT_EQ(bins.Bin(0.999), 0u);
  EXPECT_EQ(bins.Bin(1), 1u);
  EXPECT_EQ(bins.Bin(3.5), 2u);
  EXPECT_EQ(bins.Bin(4), 2u);   // the last bin is closed
  EXPECT_EQ(bins.Bin(-7), 0u);  // below the reference: first bin
  EXPECT_EQ(bins.Bin(99), 2u);  // above: last bin
  EXPECT_THAT(ReferenceBins::Create({0, 1}, {1, 2}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                              HasSubstr("2 edges and 2 counts")));
  EXPECT_THAT(ReferenceBins::Create({0, 2, 1}, {1, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("edge 2")));
  EXPECT_THAT(ReferenceBins::Create({0, 1}, {-1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("count 0")));
}

TEST(BinnedDivergences, IdenticalHistogramsAreZeroAndEmptyBinsStayFinite) {
  const std::vector<double> h = {10, 0, 30, 60};
  const Divergences same = BinnedDivergences(h, h);
  EXPECT_EQ(same.kl, 0);
  EXPECT_EQ(same.psi, 0);
  EXPECT_EQ(same.js, 0);
  const Divergences apart = BinnedDivergences({100, 0, 0, 0}, {0, 0, 0, 100});
  EXPECT_TRUE(std::isfinite(apart.kl) && apart.kl > 3);
  EXPECT_TRUE(std::isfinite(apart.psi) && apart.psi > 6);
  EXPECT_LE(apart.js, std::sqrt(std::log(2.0)));  // the distance's bound in nats
}

// Against scipy (entropy, jensenshannon) on the same smoothed probabilities, computed by
// /usr/bin/python3 at test time.
TEST(BinnedDivergences, EqualToScipy) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/binned_", getpid());
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(5);
  std::vector<std::vector<double>> refs, lives;
  {
    std::ofstream cases(dir + "/cases");
    for (int c = 0; c < 20; ++c) {
      std::vector<double> ref(10), live(10);
      for (int i = 0; i < 10; ++i) {
        ref[i] = static_cast<double>(rng() % 1000);
        live[i] = (rng() % 4 == 0) ? 0 : static_cast<double>(rng() % (50 + 40 * c));
      }
      cases << absl::StrJoin(ref, " ") << "\n" << absl::StrJoin(live, " ") << "\n";
      refs.push_back(ref);
      lives.push_back(live);
    }
  }
  const std::string script =
      "import numpy as np, sys\n"
      "from scipy.stats import entropy\n"
      "from scipy.spatial.distance import jensenshannon\n"
      "d = sys.argv[1]\n"
      "rows = [np.array([float(x) for x in l.split()]) for l in open(d + '/cases')]\n"
      "with open(d + '/expected', 'w') as out:\n"
      "    for r, l in zip(rows[0::2], rows[1::2]):\n"
      "        p = (r + 0.5) / (r.sum() + 0.5 * len(r)); q = (l + 0.5) / (l.sum() + 0.5 * len(l))\n"
      "        psi = float(np.sum((q - p) * np.log(q / p)))\n"
      "        out.write(f'{entropy(q, p)!r} {jensenshannon(p, q)!r} {psi!r}\\n')\n";
  ASSERT_EQ(testing::RunProcess("/usr/bin/python3", {"-c", script, dir}, dir + "/log"), 0)
      << testing::ReadFile(dir + "/log");
  std::istringstream expected(testing::ReadFile(dir + "/expected"));
  for (size_t c = 0; c < refs.size(); ++c) {
    double kl = 0, js = 0, psi = 0;
    ASSERT_TRUE(expected >> kl >> js >> psi) << c;
    const Divergences d = BinnedDivergences(refs[c], lives[c]);
    EXPECT_NEAR(d.kl, kl, 1e-12) << c;
    EXPECT_NEAR(d.js, js, 1e-12) << c;
    EXPECT_NEAR(d.psi, psi, 1e-12) << c;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::drift
