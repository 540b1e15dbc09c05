#include "vigil/model/tree_shap.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/lightgbm_text.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Independent oracle: Shapley values by definition, over every subset S of the features, with
// the path-dependent value function of the paper's Algorithm 1: E[f(x) | x_S] follows x at
// splits on features in S and averages both children by cover elsewhere.
double ExpectedValue(const TreeEnsemble& m, size_t node, const std::vector<double>& x,
                     uint32_t subset) {
  if (m.is_leaf(node)) return m.value[node];
  const auto f = static_cast<size_t>(m.feature[node]);
  if (subset & (1u << f))
    return ExpectedValue(m, static_cast<size_t>(m.Next(node, x[f])), x, subset);
  const auto l = static_cast<size_t>(m.left[node]), r = static_cast<size_t>(m.right[node]);
  return (ExpectedValue(m, l, x, subset) * m.cover[l] +
          ExpectedValue(m, r, x, subset) * m.cover[r]) /
         m.cover[node];
}

std::vector<double> BruteForceShapley(const TreeEnsemble& m, const std::vector<double>& x,
                                      int group = 0) {
  const size_t n = m.feature_names.size();
  std::vector<double> phi(n + 1, 0.0);
  const auto value = [&](uint32_t subset) {
    double v = m.base_margin[static_cast<size_t>(group)];
    for (size_t t = 0; t < m.num_trees(); ++t) {
      if (m.tree_group[t] == group) v += ExpectedValue(m, m.tree_begin[t], x, subset);
    }
    return v;
  };
  std::vector<double> factorial(n + 1, 1.0);
  for (size_t i = 1; i <= n; ++i) factorial[i] = factorial[i - 1] * static_cast<double>(i);
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t s = 0; s < (1u << n); ++s) {
      if (s & (1u << i)) continue;
      const auto k = static_cast<size_t>(__builtin_popcount(s));
      const double weight = factorial[k] * factorial[n - k - 1] / factorial[n];
      phi[i] += weight * (value(s | (1u << i)) - value(s));
    }
  }
  phi[n] = value(0);
  return phi;
}

std::vector<double> Explain(const TreeShapExplainer& e, const std::vector<double>& row) {
  std::vector<double> out(e.output_size());
  e.Explain(row, absl::MakeSpan(out));
  return out;
}

TEST(TreeShap, HandModelsMatchShapleyValuesByDefinition) {
  auto schema = FeatureSchema::Create("t.v1", {"a", "b"});
  ASSERT_OK(schema);
  for (auto loaded : {LoadXgboostJson(testing::kXgboostTwoTrees, "m.json"),
                      LoadLightGbmText(testing::kLightGbmThreeTrees, "model.txt")}) {
    ASSERT_OK(loaded);
    auto model = std::make_shared<const TreeEnsemble>(*loaded);
    auto e = TreeShapExplainer::Create(model, **schema);
    ASSERT_OK(e);
    for (std::vector<double> x : std::vector<std::vector<double>>{
             {1, 0}, {1.5, 1}, {2, -1}, {kNaN, 0}, {2, kNaN}, {2, 7}, {kNaN, kNaN}}) {
      SCOPED_TRACE(::testing::Message() << "a=" << x[0] << " b=" << x[1]);
      const std::vector<double> want = BruteForceShapley(*model, x);
      const std::vector<double> got = Explain(*e, x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
    }
  }
}

// A random deeper model (features reused along paths, the case Algorithm 2 unwinds) against
// the definition.
TEST(TreeShap, RandomTreesWithRepeatedFeaturesMatchTheDefinition) {
  std::mt19937_64 rng(7);
  TreeEnsemble m;
  m.format = ModelFormat::kLightGbm;
  m.feature_names = {"f0", "f1", "f2", "f3"};
  m.base_margin = {0.25};
  m.tree_begin = {0};
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 4; ++t) {
    // A complete tree of depth 4 in breadth-first order: node i has children 2i+1, 2i+2.
    const auto base = static_cast<int32_t>(m.num_nodes());
    const int internal = 15, total = 31;
    for (int i = 0; i < total; ++i) {
      const bool leaf = i >= internal;
      m.feature.push_back(leaf ? -1 : static_cast<int32_t>(rng() % 4));
      m.threshold.push_back(leaf ? 0 : u(rng));
      m.left.push_back(leaf ? -1 : base + 2 * i + 1);
      m.right.push_back(leaf ? -1 : base + 2 * i + 2);
      m.default_left.push_back(static_cast<uint8_t>(rng() % 2));
      m.missing.push_back(MissingType::kNaN);
      m.value.push_back(leaf ? u(rng) : 0);
      m.cover.push_back(0);
    }
    // Covers: random positive leaf counts, summed upwards.
    for (int i = total - 1; i >= 0; --i) {
      const auto n = static_cast<size_t>(base + i);
      m.cover[n] = i >= internal ? static_cast<double>(1 + rng() % 20)
                                 : m.cover[static_cast<size_t>(m.left[n])] +
                                       m.cover[static_cast<size_t>(m.right[n])];
    }
    m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
    m.tree_group.push_back(0);
  }
  ASSERT_OK(m.Validate());
  auto schema = FeatureSchema::Create("t.v1", {"f0", "f1", "f2", "f3"});
  ASSERT_OK(schema);
  auto model = std::make_shared<const TreeEnsemble>(m);
  auto e = TreeShapExplainer::Create(model, **schema);
  ASSERT_OK(e);
  for (int r = 0; r < 50; ++r) {
    std::vector<double> x(4);
    for (double& v : x) v = rng() % 10 == 0 ? kNaN : u(rng);
    const std::vector<double> want = BruteForceShapley(*model, x);
    const std::vector<double> got = Explain(*e, x);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-12) << "row " << r << " " << i;
  }
}

// A "caterpillar" tree: a chain of splits on the given features in order, each with a leaf on
// one side, so one path runs through every feature (and brute force stays cheap).
void AddCaterpillar(TreeEnsemble& m, const std::vector<int32_t>& features, int group,
                    std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const auto base = static_cast<int32_t>(m.num_nodes());
  const auto splits = static_cast<int32_t>(features.size());
  // Node 2k is the k-th split (k < splits); 2k + 1 its leaf; 2 * splits the last leaf.
  for (int32_t k = 0; k <= splits; ++k) {
    const bool last = k == splits;
    const bool chain_left = rng() % 2 == 0;
    m.feature.push_back(last ? -1 : features[static_cast<size_t>(k)]);
    m.threshold.push_back(last ? 0 : u(rng));
    m.left.push_back(last ? -1 : base + (chain_left ? 2 * k + 2 : 2 * k + 1));
    m.right.push_back(last ? -1 : base + (chain_left ? 2 * k + 1 : 2 * k + 2));
    m.default_left.push_back(static_cast<uint8_t>(rng() % 2));
    m.missing.push_back(MissingType::kNaN);
    m.value.push_back(last ? u(rng) : 0);
    m.cover.push_back(0);
    if (last) break;
    m.feature.push_back(-1);  // the side leaf
    m.threshold.push_back(0);
    m.left.push_back(-1);
    m.right.push_back(-1);
    m.default_left.push_back(0);
    m.missing.push_back(MissingType::kNaN);
    m.value.push_back(u(rng));
    m.cover.push_back(static_cast<double>(1 + rng() % 50));
  }
  for (int32_t k = splits - 1; k >= 0; --k) {
    const auto n = static_cast<size_t>(base + 2 * k);
    if (k == splits - 1) m.cover[n + 2] = static_cast<double>(1 + rng() % 50);
    m.cover[n] = m.cover[n + 1] + m.cover[n + 2];
  }
  m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
  m.tree_group.push_back(group);
}

TreeEnsemble EmptyModel(size_t features, int groups) {
  TreeEnsemble m;
  m.format = ModelFormat::kLightGbm;
  for (size_t f = 0; f < features; ++f) m.feature_names.push_back(absl::StrCat("f", f));
  m.num_groups = groups;
  m.base_margin.assign(static_cast<size_t>(groups), 0.5);
  m.tree_begin = {0};
  return m;
}

// Paths through 16 distinct features need 8 quadrature nodes; repeated features on them too.
TEST(TreeShap, LongPathsMatchTheDefinition) {
  std::mt19937_64 rng(11);
  TreeEnsemble m = EmptyModel(16, 1);
  std::vector<int32_t> all(16);
  for (int32_t f = 0; f < 16; ++f) all[static_cast<size_t>(f)] = f;
  for (int t = 0; t < 3; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int32_t> features = all;
    features.insert(features.begin() + 5, features[2]);  // a repeat deep in the chain
    AddCaterpillar(m, features, 0, rng);
  }
  ASSERT_OK(m.Validate());
  auto model = std::make_shared<const TreeEnsemble>(m);
  auto e = TreeShapExplainer::Create(model, m.feature_names, "columns");
  ASSERT_OK(e);
  EXPECT_EQ(e->quadrature_points(), 8);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int r = 0; r < 4; ++r) {
    std::vector<double> x(16);
    for (double& v : x) v = rng() % 8 == 0 ? kNaN : u(rng);
    const std::vector<double> want = BruteForceShapley(*model, x);
    const std::vector<double> got = Explain(*e, x);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-12) << "row " << r << " " << i;
  }
}

// Several output groups, and a tree that is a single leaf (all of it bias).
TEST(TreeShap, GroupsAndSingleLeafTreesMatchTheDefinition) {
  std::mt19937_64 rng(5);
  TreeEnsemble m = EmptyModel(5, 2);
  AddCaterpillar(m, {0, 1, 2}, 0, rng);
  AddCaterpillar(m, {3, 4, 3}, 1, rng);
  AddCaterpillar(m, {}, 1, rng);  // one leaf
  AddCaterpillar(m, {4, 0, 1, 2}, 1, rng);
  ASSERT_OK(m.Validate());
  auto model = std::make_shared<const TreeEnsemble>(m);
  auto e = TreeShapExplainer::Create(model, m.feature_names, "columns");
  ASSERT_OK(e);
  ASSERT_EQ(e->output_size(), 12u);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int r = 0; r < 20; ++r) {
    std::vector<double> x(5);
    for (double& v : x) v = u(rng);
    const std::vector<double> got = Explain(*e, x);
    for (int g = 0; g < 2; ++g) {
      const std::vector<double> want = BruteForceShapley(*model, x, g);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[static_cast<size_t>(g) * 6 + i], want[i], 1e-12)
            << "row " << r << " group " << g << " " << i;
    }
  }
}

TEST(TreeShap, RefusesPathsThroughMoreDistinctFeaturesThanSupported) {
  std::mt19937_64 rng(3);
  TreeEnsemble m = EmptyModel(70, 1);
  std::vector<int32_t> features(65);
  for (int32_t f = 0; f < 65; ++f) features[static_cast<size_t>(f)] = f;
  AddCaterpillar(m, features, 0, rng);
  ASSERT_OK(m.Validate());
  auto e = TreeShapExplainer::Create(std::make_shared<const TreeEnsemble>(m), m.feature_names,
                                     "columns");
  EXPECT_THAT(e.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            ::testing::HasSubstr("65 distinct features")));
}

}  // namespace
}  // namespace vigil
