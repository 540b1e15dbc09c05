#include "vigil/drift/profile_builder.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/drift/reference_profile.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil::drift {
namespace {

using Json = nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Numbers within a relative 1e-9 (numpy's and our sums round differently), the rest equal.
void ExpectSame(const Json& ours, const Json& theirs, const std::string& where) {
  if (theirs.is_number() && ours.is_number()) {
    const double a = ours.get<double>(), b = theirs.get<double>();
    EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(b))) << where;
  } else if (theirs.is_object()) {
    ASSERT_TRUE(ours.is_object()) << where;
    EXPECT_EQ(ours.size(), theirs.size()) << where << ": " << ours.dump().substr(0, 300);
    for (const auto& [key, value] : theirs.items()) {
      ASSERT_TRUE(ours.contains(key)) << where << "." << key;
      ExpectSame(ours[key], value, where + "." + key);
    }
  } else if (theirs.is_array()) {
    ASSERT_TRUE(ours.is_array()) << where;
    ASSERT_EQ(ours.size(), theirs.size()) << where;
    for (size_t i = 0; i < theirs.size(); ++i) {
      ExpectSame(ours[i], theirs[i], where + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(ours, theirs) << where;
  }
}

// The oracle: tools/train.py's own profile_entry (numpy, scipy), on the same values.
TEST(ProfileBuilder, EntriesAgreeWithTrainPy) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> amount(4, 1.5);
  const size_t n = 6000;
  struct Column {
    std::string name;
    std::vector<double> values;
  };
  std::vector<Column> columns = {{"amount", {}}, {"count", {}}, {"constant", {}},
                                 {"sparse", {}}, {"missing", {}}};
  std::vector<int64_t> seconds(n);
  int64_t t = 1'661'990'400;
  for (size_t i = 0; i < n; ++i) {
    t += static_cast<int64_t>(rng() % 120);  // bursts and lulls: windows vary
    seconds[i] = t;
    const bool busy = (t / 3600) % 5 == 0;
    columns[0].values.push_back(busy ? 3 * amount(rng) : amount(rng));
    columns[1].values.push_back(static_cast<double>(rng() % 4));
    columns[2].values.push_back(2.5);
    columns[3].values.push_back(rng() % 3 == 0 ? std::nan("") : static_cast<double>(rng() % 50));
    columns[4].values.push_back(std::nan(""));
  }
  const std::string dir = ::testing::TempDir() + "/profile_builder_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream csv(dir + "/rows.csv");
    csv.precision(17);
    csv << "seconds";
    for (const Column& c : columns) csv << "," << c.name;
    csv << "\n";
    for (size_t i = 0; i < n; ++i) {
      csv << seconds[i];
      for (const Column& c : columns) {
        csv << ",";
        if (!std::isnan(c.values[i])) csv << c.values[i];
      }
      csv << "\n";
    }
  }
  const std::string script =
      "import json, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "import numpy as np, pandas as pd, train\n"
      "df = pd.read_csv(sys.argv[2])\n"
      "s = df['seconds'].to_numpy()\n"
      "out = {c: train.profile_entry(df[c].to_numpy(dtype=float), s) for c in df.columns[1:]}\n"
      "json.dump(out, open(sys.argv[3], 'w'))\n";
  const std::string tools = ::vigil::testing::SourceDir() + "/tools";
  ASSERT_EQ(::vigil::testing::RunProcess("/usr/bin/python3",
                                         {"-c", script, tools, dir + "/rows.csv",
                                          dir + "/oracle.json"},
                                         dir + "/log"),
            0)
      << ReadAll(dir + "/log");
  const Json oracle = Json::parse(ReadAll(dir + "/oracle.json"));
  int with_dispersion = 0;
  for (const Column& c : columns) {
    const Json ours = Json::parse(ProfileEntryJson(c.values, seconds));
    ExpectSame(ours, oracle.at(c.name), c.name);
    with_dispersion += ours.contains("dispersion") && !ours["dispersion"].empty() ? 1 : 0;
  }
  EXPECT_GE(with_dispersion, 3) << "the stream must exercise the dispersion";
  EXPECT_GT(Json::parse(ProfileEntryJson(columns[0].values, seconds))["dispersion"]["3600"]
                .get<double>(),
            1.5)
      << "hourly bursts of larger amounts vary beyond sampling noise";
  std::filesystem::remove_all(dir);
}

// The whole profile reads back as the drift monitor reads tools/train.py's.
TEST(ProfileBuilder, TheProfileLoadsAsAReferenceProfile) {
  const std::vector<std::string> names = {"a", "b"};
  std::vector<double> rows;
  std::vector<int64_t> seconds;
  for (int i = 0; i < 500; ++i) {
    rows.push_back(i % 7);
    rows.push_back(i % 3 == 0 ? std::nan("") : i * 0.5);
    seconds.push_back(1'700'000'000 + i * 30);
  }
  const std::vector<double> score = {0.1, 0.2, 0.9, 0.4};
  const std::vector<int64_t> score_seconds = {1, 2, 3, 4};
  absl::StatusOr<ReferenceProfile> p = ReferenceProfile::Parse(
      ReferenceProfileJson("vigil.features.v3", names, rows, seconds, score, score_seconds),
      "built");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->feature_schema_version(), "vigil.features.v3");
  EXPECT_EQ(p->rows(), 500u);
  ASSERT_NE(p->Find("b"), nullptr);
  EXPECT_EQ(p->Find("b")->missing, 167u);
  EXPECT_EQ(p->Find("a")->count, 500u);
  ASSERT_TRUE(p->score().has_value());
  EXPECT_EQ(p->score()->count, 4u);
}

}  // namespace
}  // namespace vigil::drift
