// Random XGBoost-style forests and rows for the CUDA backend's parity tests and benchmarks.
// Test and benchmark code only.
#ifndef VIGIL_MODEL_CUDA_TESTING_RANDOM_FOREST_H_
#define VIGIL_MODEL_CUDA_TESTING_RANDOM_FOREST_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "vigil/model/model_file.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil::testing {

struct RandomForestSpec {
  int trees = 100;
  int depth = 6;
  int features = 32;
  // Chance that a node above the deepest level is a leaf (0: every tree complete).
  double early_leaf = 0.0;
  // Chance that a node's cover is zero (no training row reached it: the explainer's special
  // case).
  double zero_cover = 0.0;
  uint64_t seed = 1;
};

// binary:logistic, float32 thresholds in [-1, 1] and leaf values in [-0.1, 0.1], random default
// sides, covers summed from random leaf counts.
inline TreeEnsemble RandomForest(const RandomForestSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<float> threshold(-1, 1), leaf_value(-0.1f, 0.1f);
  std::uniform_real_distribution<double> chance(0, 1);
  TreeEnsemble m;
  m.format = ModelFormat::kXgboost;
  m.objective = "binary:logistic";
  m.link = ModelLink::kSigmoid;
  m.base_margin = {static_cast<double>(static_cast<float>(-0.25))};
  for (int f = 0; f < spec.features; ++f) m.feature_names.push_back(absl::StrCat("f", f));
  m.tree_begin = {0};
  for (int t = 0; t < spec.trees; ++t) {
    const auto root = static_cast<int32_t>(m.num_nodes());
    // Grown breadth-first from a queue of (node, level); children are appended.
    std::vector<std::pair<int32_t, int>> queue = {{root, 0}};
    const auto add = [&] {
      m.feature.push_back(-1);
      m.threshold.push_back(0);
      m.left.push_back(-1);
      m.right.push_back(-1);
      m.default_left.push_back(0);
      m.missing.push_back(MissingType::kNaN);
      m.value.push_back(0);
      m.cover.push_back(0);
      return static_cast<int32_t>(m.num_nodes() - 1);
    };
    add();
    for (size_t q = 0; q < queue.size(); ++q) {
      const auto [node, level] = queue[q];
      const auto u = static_cast<size_t>(node);
      const bool leaf = level >= spec.depth || (level > 0 && chance(rng) < spec.early_leaf);
      if (leaf) {
        m.value[u] = leaf_value(rng);
        continue;
      }
      m.feature[u] = static_cast<int32_t>(rng() % static_cast<uint64_t>(spec.features));
      m.threshold[u] = threshold(rng);
      m.default_left[u] = static_cast<uint8_t>(rng() % 2);
      const int32_t l = add(), r = add();
      m.left[u] = l;
      m.right[u] = r;
      queue.push_back({l, level + 1});
      queue.push_back({r, level + 1});
    }
    // Covers: leaves a random count (sometimes none), internal nodes the sum of their children.
    for (size_t q = queue.size(); q-- > 0;) {
      const auto u = static_cast<size_t>(queue[q].first);
      if (m.feature[u] < 0) {
        m.cover[u] = chance(rng) < spec.zero_cover ? 0.0 : static_cast<double>(1 + rng() % 50);
      } else {
        m.cover[u] = m.cover[static_cast<size_t>(m.left[u])] + m.cover[static_cast<size_t>(m.right[u])];
      }
    }
    m.tree_begin.push_back(static_cast<uint32_t>(m.num_nodes()));
    m.tree_group.push_back(0);
  }
  return m;
}

// n rows of "width" values: uniform in [-1.2, 1.2], a share "missing" of NaN, and a share
// "on_threshold" set to one of the model's thresholds exactly (the ties where x < threshold
// must be decided as float32 decides them).
inline std::vector<double> RandomRows(const TreeEnsemble& m, size_t n, size_t width,
                                      double missing, double on_threshold, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.2, 1.2), chance(0, 1);
  std::vector<double> rows(n * width);
  for (double& v : rows) {
    const double c = chance(rng);
    if (c < missing) {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (c < missing + on_threshold && m.num_nodes() > 0) {
      v = m.threshold[rng() % m.num_nodes()];
    } else {
      v = value(rng);
    }
  }
  return rows;
}

// n rows of "width" values for a real model whose features have their own scales: each model
// feature takes one of the thresholds the model splits it at, exactly, or the float32 just below
// or above it, so that every side of every split is taken; a share "missing" is NaN. Columns
// the model does not read stay 0.
inline std::vector<double> ThresholdRows(const TreeEnsemble& m, size_t n, size_t width,
                                         double missing, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> chance(0, 1);
  std::vector<std::vector<float>> cuts(m.feature_names.size());
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (!m.is_leaf(i)) cuts[static_cast<size_t>(m.feature[i])].push_back(static_cast<float>(m.threshold[i]));
  }
  std::vector<double> rows(n * width, 0.0);
  for (size_t r = 0; r < n; ++r) {
    for (size_t f = 0; f < cuts.size() && f < width; ++f) {
      double& v = rows[r * width + f];
      if (chance(rng) < missing) {
        v = std::numeric_limits<double>::quiet_NaN();
      } else if (!cuts[f].empty()) {
        const float cut = cuts[f][rng() % cuts[f].size()];
        const int side = static_cast<int>(rng() % 3);
        v = side == 0 ? cut
                      : std::nextafter(cut, side == 1 ? -std::numeric_limits<float>::infinity()
                                                      : std::numeric_limits<float>::infinity());
      }
    }
  }
  return rows;
}

// A model the benchmarks measure, with rows to score (row width: the model's features, in order).
struct BenchmarkModel {
  std::string name;
  std::shared_ptr<const TreeEnsemble> model;
  size_t width = 0;
  std::vector<double> rows;
};

// The two models of the GPU benchmarks, `rows` rows each: "demo", the demo model
// (testdata/models/demo_model.json under source_dir) with ThresholdRows, and "d8x1000", `trees`
// random complete trees of depth 8 over 32 float inputs with uniform rows, 5% missing.
inline absl::StatusOr<std::vector<BenchmarkModel>> BenchmarkModels(const std::string& source_dir,
                                                                    size_t rows, int trees = 1000) {
  std::vector<BenchmarkModel> models(2);
  auto demo = LoadModelFile(source_dir + "/testdata/models/demo_model.json");
  if (!demo.ok()) return demo.status();
  models[0].name = "demo";
  models[0].model = *demo;
  models[0].width = models[0].model->feature_names.size();
  models[0].rows = ThresholdRows(*models[0].model, rows, models[0].width, 0.05, 1);
  RandomForestSpec spec;
  spec.trees = trees;
  spec.depth = 8;
  spec.features = 32;
  spec.seed = 8;
  models[1].name = "d8x1000";
  models[1].model = std::make_shared<const TreeEnsemble>(RandomForest(spec));
  models[1].width = 32;
  models[1].rows = RandomRows(*models[1].model, rows, 32, 0.05, 0.0, 2);
  return models;
}

}  // namespace vigil::testing

#endif  // VIGIL_MODEL_CUDA_TESTING_RANDOM_FOREST_H_
