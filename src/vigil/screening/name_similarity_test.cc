#include "vigil/screening/name_similarity.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/csv.h"
#include "vigil/testing/files.h"
#include "vigil/testing/testdata.h"

namespace vigil::screening {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

double Score(std::string_view query, std::string_view candidate) {
  return TokenSimilarity(SplitTokens(query), SplitTokens(candidate));
}

// What watchman's prepare.LowerAndRemovePunctuation does to the case file's inputs: Latin-1
// letters lose their accents (U+00C0..U+00FF, as UTF-8), ASCII letters are lower-cased, ASCII
// punctuation becomes a space.
std::string LowerAndRemovePunctuation(std::string_view s) {
  // Base letters of U+00C0..U+00FF; ' ' for the two that are not letters (U+00D7, U+00F7).
  static constexpr std::string_view kLatin1 =
      "aaaaaaaceeeeiiiidnooooo ouuuuyts"
      "aaaaaaaceeeeiiiidnooooo ouuuuyty";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0xC3 && i + 1 < s.size()) {
      const unsigned char next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0xBF) {
        out += kLatin1[next - 0x80];
        ++i;
        continue;
      }
    }
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (c < 0x80 && std::ispunct(c)) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Preprocess(const std::string& text, const std::string& function) {
  if (function.empty()) return text;
  if (function == "strings.ToLower") {
    std::string out = text;
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  EXPECT_EQ(function, "prepare.LowerAndRemovePunctuation");
  return LowerAndRemovePunctuation(text);
}

// testdata/name_matching/watchman_jaro_winkler: watchman's expected BestPairsJaroWinkler(search
// tokens, indexed tokens) scores; our query is its search, our candidate its indexed term.
// The TestBestPairCombinationJaroWinkler rows score watchman's other function, which also tries
// the tokens joined pairwise ("jsc argument" as "jscargument"); TokenSimilarity does not.
TEST(NameSimilarityTest, MatchesWatchmanBestPairsJaroWinkler) {
  const std::string text = vigil::testing::ReadFile(vigil::testing::TestDataPath(
      "name_matching/watchman_jaro_winkler/watchman_bestpairs_jaro_winkler_cases.csv"));
  std::istringstream lines(text);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  if (!line.empty() && line.back() == '\r') line.pop_back();  // The file has CRLF line ends.
  ASSERT_EQ(line,
            "test,indexed,indexed_preprocess,search,search_preprocess,expected,tolerance_abs,"
            "algorithm,source_line");
  int checked = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = vigil::testing::SplitCsvLine(line);
    ASSERT_EQ(f.size(), 9u) << line;
    if (f[0] != "TestJaroWinkler") continue;
    const std::string indexed = Preprocess(f[1], f[2]);
    const std::string search = Preprocess(f[3], f[4]);
    const double expected = std::strtod(f[5].c_str(), nullptr);
    const double tolerance = std::strtod(f[6].c_str(), nullptr);
    EXPECT_NEAR(Score(search, indexed), expected, tolerance)
        << "line " << f[8] << ": search \"" << search << "\", indexed \"" << indexed << "\"";
    ++checked;
  }
  EXPECT_EQ(checked, 63);
}

TEST(NameSimilarityTest, SplitTokens) {
  EXPECT_THAT(SplitTokens("nicolas maduro"), ElementsAre("nicolas", "maduro"));
  EXPECT_THAT(SplitTokens("  hello \t  world\n"), ElementsAre("hello", "world"));
  EXPECT_THAT(SplitTokens("one"), ElementsAre("one"));
  EXPECT_THAT(SplitTokens(""), IsEmpty());
  EXPECT_THAT(SplitTokens(" \t "), IsEmpty());
}

TEST(NameSimilarityTest, IdenticalAndEmpty) {
  EXPECT_EQ(Score("nicolas maduro", "nicolas maduro"), 1.0);
  EXPECT_EQ(Score("a", "a"), 1.0);
  EXPECT_EQ(Score("maduro moros nicolas", "nicolas maduro moros"), 1.0);
  EXPECT_EQ(Score("", "hello"), 0.0);
  EXPECT_EQ(Score("hello", ""), 0.0);
  EXPECT_EQ(Score("", ""), 0.0);
  EXPECT_EQ(TokenSimilarity({"", ""}, {"hello"}), 0.0);
}

TEST(NameSimilarityTest, FormulaByHand) {
  // One exact pair, "doe" unmatched in the candidate: A = 1, f = 4 / 7.
  EXPECT_DOUBLE_EQ(Score("john", "john doe"), 1.0 - 0.15 * (3.0 / 7.0));
  // "bartholomew" unmatched in the query: A = (4 + 4 + 3 + 3) / (4 + 11 + 3 + 4 + 3), f = 1.
  EXPECT_DOUBLE_EQ(Score("john bartholomew doe", "john doe"), 14.0 / 25.0);
  // sean/shawn: JW 0.805, length ratio 0.8 gives the factor 1 - 0.2 * 0.3.
  EXPECT_NEAR(Score("sean", "shawn"), (47.0 / 60.0 + 0.1 * (13.0 / 60.0)) * 0.94, 1e-12);
  // Different phonetic classes (i / t) are never paired.
  EXPECT_EQ(Score("ian", "tian"), 0.0);
  // Same class (b / p): paired.
  EXPECT_GT(Score("bridgespan", "preservation"), 0.0);
}

TEST(NameSimilarityTest, SymmetricWhenTokenListsMatchUp) {
  // With every token matched on both sides the score does not depend on which side is the query.
  for (const auto& [a, b] :
       std::vector<std::pair<std::string, std::string>>{{"john smith", "john smythe"},
                                                        {"mohamed", "muhammed"},
                                                        {"sean", "shawn"},
                                                        {"nicolas maduro", "maduro nicolas"}}) {
    EXPECT_DOUBLE_EQ(Score(a, b), Score(b, a)) << a << " / " << b;
  }
  // Otherwise the query's unmatched tokens cost more (watchman: 0.958 and 0.839).
  EXPECT_GT(Score("nicolas maduro", "nicolas moros maduro"),
            Score("nicolas moros maduro", "nicolas maduro"));
}

TEST(NameSimilarityTest, GreedyPairingUsesEachTokenOnce) {
  // Both query tokens want "maduro"; only one gets it.
  EXPECT_LT(Score("maduro maduro", "maduro"), 1.0);
  EXPECT_EQ(Score("maduro maduro", "maduro maduro"), 1.0);
}

}  // namespace
}  // namespace vigil::screening
