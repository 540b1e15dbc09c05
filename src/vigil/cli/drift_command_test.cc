// `vigil drift compare` against scipy on the same files (computed by /usr/bin/python3 at test
// time): every statistic of every numeric column.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::ReadFile;
using ::vigil::testing::RunProcess;

class DriftCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/drift_cli_", getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(DriftCommandTest, EveryStatisticEqualsScipy) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> a(100, 15), b(110, 25);
  std::ofstream ref(Path("ref.csv")), live(Path("live.csv"));
  ref.precision(17);
  live.precision(17);
  ref << "id,amount,count,name\n";
  live << "id,amount,count,name\n";
  for (int i = 0; i < 3000; ++i) {
    ref << i << "," << a(rng) << "," << (i % 7 == 0 ? "" : std::to_string(rng() % 9)) << ",x\n";
  }
  for (int i = 0; i < 600; ++i) live << i << "," << b(rng) << "," << rng() % 12 << ",y\n";
  ref.close();
  live.close();
  ASSERT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("ref.csv"), Path("live.csv"),
                                      "--columns", "amount,count"},
                       Path("out")),
            0)
      << ReadFile(Path("out"));
  const std::string script =
      "import sys, json, numpy as np, pandas as pd\n"
      "from scipy.stats import ks_2samp, wasserstein_distance, entropy\n"
      "from scipy.spatial.distance import jensenshannon\n"
      "d = sys.argv[1]; r = pd.read_csv(d + '/ref.csv'); l = pd.read_csv(d + '/live.csv')\n"
      "with open(d + '/expected', 'w') as out:\n"
      "    for c in ['amount', 'count']:\n"
      "        a = r[c].dropna().values; b = l[c].dropna().values; k = ks_2samp(a, b)\n"
      "        e = np.unique(np.quantile(a, np.linspace(0, 1, 11)))\n"
      "        rc, _ = np.histogram(a, e); lc, _ = np.histogram(np.clip(b, e[0], e[-1]), e)\n"
      "        p = (rc + .5) / (rc.sum() + .5 * len(rc)); q = (lc + .5) / (lc.sum() + .5 * len(lc))\n"
      "        w = wasserstein_distance(a, b)\n"
      "        out.write(json.dumps({'ks': k.statistic, 'ks_pvalue': k.pvalue, 'wasserstein': w,\n"
      "            'wasserstein_norm': w / a.std(), 'kl': entropy(q, p), 'js': jensenshannon(p, q),\n"
      "            'psi': float(np.sum((q - p) * np.log(q / p))), 'n_ref': len(a),\n"
      "            'missing_ref': int(r[c].isna().sum())}) + '\\n')\n";
  ASSERT_EQ(RunProcess("/usr/bin/python3", {"-c", script, dir_}, Path("log")), 0)
      << ReadFile(Path("log"));
  std::istringstream got(ReadFile(Path("out"))), expected(ReadFile(Path("expected")));
  std::string got_line, expected_line;
  for (const char* column : {"amount", "count"}) {
    ASSERT_TRUE(std::getline(got, got_line));
    ASSERT_TRUE(std::getline(expected, expected_line));
    const nlohmann::json g = nlohmann::json::parse(got_line), e = nlohmann::json::parse(expected_line);
    EXPECT_EQ(g["column"], column);
    EXPECT_EQ(g["n_ref"], e["n_ref"]);
    EXPECT_EQ(g["missing_ref"], e["missing_ref"]);
    for (const char* key : {"ks", "wasserstein", "wasserstein_norm", "kl", "js", "psi"}) {
      EXPECT_NEAR(g[key].get<double>(), e[key].get<double>(),
                  1e-9 * std::max(1.0, std::abs(e[key].get<double>())))
          << column << " " << key;
    }
    EXPECT_NEAR(g["ks_pvalue"].get<double>(), e["ks_pvalue"].get<double>(), 1e-6) << column;
    const double score =
        0.4 * g["kl"].get<double>() + 0.35 * g["js"].get<double>() + 0.25 * g["psi"].get<double>();
    EXPECT_NEAR(g["score"].get<double>(), score, 1e-12);
  }
  // The mean moved by two thirds of a standard deviation: the amount column drifts.
  EXPECT_THAT(ReadFile(Path("out")), HasSubstr("\"level\":\"L"));
}

TEST_F(DriftCommandTest, BadColumnsAndFilesAreUsageErrors) {
  std::ofstream(Path("a.csv")) << "x,name\n1,a\n2,b\n";
  EXPECT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("a.csv"), Path("a.csv"),
                                      "--columns", "name"},
                       Path("out")),
            2);
  EXPECT_THAT(ReadFile(Path("out")), HasSubstr("'name' is not a numeric column of both files"));
  EXPECT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("a.csv"), Path("missing.csv")},
                       Path("out")),
            2);
  EXPECT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("a.csv"), Path("a.csv")},
                       Path("out")),
            0);
  EXPECT_THAT(ReadFile(Path("out")), HasSubstr("\"column\":\"x\",\"n_ref\":2"));
}

// Feature rows quote ids that hold commas; such a cell is one cell, not two. Blank lines and
// CRLF line ends are no cells at all.
TEST_F(DriftCommandTest, AQuotedCellIsOneCell) {
  std::ofstream(Path("q.csv")) << "tx_id,amount\r\n\"a,1\",5\r\n\r\n\"b \"\"c\"\"\",7\r\nd,9\r\n";
  ASSERT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("q.csv"), Path("q.csv")},
                       Path("out")),
            0)
      << ReadFile(Path("out"));
  EXPECT_THAT(ReadFile(Path("out")), HasSubstr("\"column\":\"amount\",\"n_ref\":3,"));
  std::ofstream(Path("w.csv")) << "x,y\n1,2\n3,4,5\n";
  EXPECT_EQ(RunProcess(VIGIL_BINARY, {"drift", "compare", Path("w.csv"), Path("w.csv")},
                       Path("out")),
            2);
  EXPECT_THAT(ReadFile(Path("out")), HasSubstr("w.csv:3: 3 cells, the header has 2"));
}

}  // namespace
}  // namespace vigil
