#include "vigil/screening/jaro_winkler.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/testing/csv.h"
#include "vigil/testing/files.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

struct Row {
  std::string a, b;
  double expected;
};

// The rows (s1,s2,expected) of a jellyfish reference file.
std::vector<Row> ReadJellyfish(const std::string& name) {
  const std::string text = vigil::testing::ReadFile(
      vigil::testing::TestDataPath("name_matching/jellyfish_testdata/" + name));
  std::vector<Row> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = vigil::testing::SplitCsvLine(line);
    EXPECT_EQ(f.size(), 3u) << line;
    if (f.size() != 3) continue;
    rows.push_back({f[0], f[1], std::strtod(f[2].c_str(), nullptr)});
  }
  return rows;
}

// The files give 3 decimals (some fewer: "0.84"); rounding leaves at most 0.0005.
constexpr double kTolerance = 0.001;

TEST(JaroWinklerTest, MatchesJellyfishJaroDistance) {
  const std::vector<Row> rows = ReadJellyfish("jaro_distance.csv");
  ASSERT_FALSE(rows.empty());
  for (const Row& r : rows) {
    EXPECT_NEAR(JaroSimilarity(r.a, r.b), r.expected, kTolerance) << r.a << " / " << r.b;
  }
}

TEST(JaroWinklerTest, MatchesJellyfishJaroWinkler) {
  const std::vector<Row> rows = ReadJellyfish("jaro_winkler.csv");
  ASSERT_FALSE(rows.empty());
  for (const Row& r : rows) {
    EXPECT_NEAR(JaroWinklerSimilarity(r.a, r.b), r.expected, kTolerance) << r.a << " / " << r.b;
  }
}

TEST(JaroWinklerTest, MatchesJellyfishLongTolerance) {
  const std::vector<Row> rows = ReadJellyfish("jaro_winkler_longtol.csv");
  ASSERT_FALSE(rows.empty());
  for (const Row& r : rows) {
    EXPECT_NEAR(JaroWinklerLongToleranceSimilarity(r.a, r.b), r.expected, kTolerance)
        << r.a << " / " << r.b;
  }
}

TEST(JaroWinklerTest, TextbookValues) {
  // martha/marhta: 6 matches, 1 transposition.
  EXPECT_DOUBLE_EQ(JaroSimilarity("martha", "marhta"), (1.0 + 1.0 + 5.0 / 6.0) / 3.0);
  EXPECT_NEAR(JaroWinklerSimilarity("martha", "marhta"), 0.9611, 1e-4);
  EXPECT_NEAR(JaroWinklerSimilarity("dixon", "dicksonx"), 0.8133, 1e-4);
}

TEST(JaroWinklerTest, IdenticalAndEmpty) {
  EXPECT_EQ(JaroSimilarity("", ""), 1.0);
  EXPECT_EQ(JaroWinklerSimilarity("", ""), 1.0);
  EXPECT_EQ(JaroWinklerSimilarity("", "foo"), 0.0);
  EXPECT_EQ(JaroWinklerSimilarity("foo", ""), 0.0);
  EXPECT_EQ(JaroWinklerLongToleranceSimilarity("", "foo"), 0.0);
  for (const char* s : {"a", "maduro", "the group for the preservation of the holy sites"}) {
    EXPECT_EQ(JaroSimilarity(s, s), 1.0) << s;
    EXPECT_EQ(JaroWinklerSimilarity(s, s), 1.0) << s;
    EXPECT_EQ(JaroWinklerLongToleranceSimilarity(s, s), 1.0) << s;
  }
  EXPECT_EQ(JaroWinklerSimilarity("abc", "xyz"), 0.0);
}

TEST(JaroWinklerTest, Symmetric) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"martha", "marhta"},    {"dwayne", "duane"},  {"dixon", "dicksonx"},
      {"mohamed", "muhammed"}, {"abcdef", "fedcba"}, {"sean", "shawn"}};
  for (const auto& [a, b] : pairs) {
    EXPECT_DOUBLE_EQ(JaroSimilarity(a, b), JaroSimilarity(b, a)) << a << " / " << b;
    EXPECT_DOUBLE_EQ(JaroWinklerSimilarity(a, b), JaroWinklerSimilarity(b, a)) << a << " / " << b;
  }
}

TEST(JaroWinklerTest, PrefixParameters) {
  const double j = JaroSimilarity("martha", "marhta");
  EXPECT_DOUBLE_EQ(JaroWinklerSimilarity("martha", "marhta", 0.0), j);
  // Common prefix "mar" (3 bytes), capped by max_prefix.
  EXPECT_DOUBLE_EQ(JaroWinklerSimilarity("martha", "marhta", 0.1, 2), j + 0.2 * (1 - j));
  EXPECT_DOUBLE_EQ(JaroWinklerSimilarity("martha", "marhta", 0.2, 4), j + 0.6 * (1 - j));
  // No boost at or below Jaro 0.7.
  EXPECT_DOUBLE_EQ(JaroWinklerSimilarity("abcxyz", "abqrst"), JaroSimilarity("abcxyz", "abqrst"));
}

TEST(JaroWinklerTest, LongStringsTakeTheVectorPath) {
  // Above 64 bytes the flags live in vectors; the result must not depend on the path.
  const std::string a = std::string(40, 'x') + "martha" + std::string(40, 'y');
  const std::string b = std::string(40, 'x') + "marhta" + std::string(40, 'y');
  ASSERT_GT(a.size(), 64u);
  const double m = 86, t = 1;
  EXPECT_DOUBLE_EQ(JaroSimilarity(a, b), (m / 86 + m / 86 + (m - t) / m) / 3.0);
  const std::string c(70, 'q');
  EXPECT_EQ(JaroWinklerSimilarity(c, c), 1.0);
  EXPECT_EQ(JaroWinklerSimilarity(c, std::string(64, 'q')),
            JaroWinklerSimilarity(std::string(64, 'q'), c));
}

}  // namespace
}  // namespace vigil::screening
