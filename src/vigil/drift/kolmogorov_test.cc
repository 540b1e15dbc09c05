#include "vigil/drift/kolmogorov.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil::drift {
namespace {

// Against scipy.stats.kstwo.sf and scipy.special.smirnov over every method's region: small and
// large n, x from the Ruben–Gambino ends through the Durbin, Pelz–Good and Smirnov ranges.
TEST(Kolmogorov, EqualToScipy) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/kolmogorov_", getpid());
  std::filesystem::create_directories(dir);
  const std::vector<uint64_t> ns = {5, 30, 140, 141, 500, 990, 5000, 20000};
  const std::vector<double> xs = {0.0001, 0.002, 0.01, 0.02, 0.035, 0.05, 0.08, 0.12,
                                  0.2,    0.3,   0.45, 0.55, 0.7,   0.9,  0.99};
  const std::string script =
      "import sys\n"
      "from scipy.stats import kstwo\n"
      "from scipy.special import smirnov\n"
      "ns = [5, 30, 140, 141, 500, 990, 5000, 20000]\n"
      "xs = [0.0001, 0.002, 0.01, 0.02, 0.035, 0.05, 0.08, 0.12, 0.2, 0.3, 0.45, 0.55, 0.7, "
      "0.9, 0.99]\n"
      "with open(sys.argv[1] + '/expected', 'w') as out:\n"
      "    for n in ns:\n"
      "        for x in xs:\n"
      "            out.write(f'{kstwo.sf(x, n)!r} {smirnov(n, x)!r}\\n')\n";
  ASSERT_EQ(testing::RunProcess("/usr/bin/python3", {"-c", script, dir}, dir + "/log"), 0)
      << testing::ReadFile(dir + "/log");
  std::istringstream expected(testing::ReadFile(dir + "/expected"));
  for (uint64_t n : ns) {
    for (double x : xs) {
      double sf = 0, smirnov = 0;
      ASSERT_TRUE(expected >> sf >> smirnov);
      EXPECT_NEAR(KolmogorovSf(n, x), sf, 1e-6) << "n " << n << " x " << x;
      if (n <= 5000) {
        EXPECT_NEAR(SmirnovSf(n, x), smirnov, 1e-9) << "n " << n << " x " << x;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::drift
