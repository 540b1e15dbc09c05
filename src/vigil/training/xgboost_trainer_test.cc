#include "vigil/training/xgboost_trainer.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/evaluation/detection_metrics.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"

namespace vigil::training {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

// Rows whose label depends on two of five columns (an interaction, a threshold) plus noise,
// with a few missing values; about 6% positive.
LabelledRows Synthetic(size_t n, uint64_t seed, bool noise_only = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  LabelledRows r;
  r.names = {"amount_ratio", "fan_out", "hour", "age_days", "noise"};
  for (size_t i = 0; i < n; ++i) {
    const double a = z(rng), b = z(rng), h = u(rng) * 24, d = u(rng) * 400, e = z(rng);
    const double logit = noise_only ? -2.7 : -4.2 + 1.6 * a + 1.2 * (b > 0.8) + 0.8 * a * b;
    r.labels.push_back(u(rng) < 1 / (1 + std::exp(-logit)) ? 1 : 0);
    r.values.insert(r.values.end(), {a, u(rng) < 0.05 ? std::nan("") : b, h, d, e});
  }
  return r;
}

std::vector<double> OurProbabilities(const std::string& json, const LabelledRows& rows) {
  absl::StatusOr<TreeEnsemble> model = LoadXgboostJson(json, "trained");
  EXPECT_OK(model);
  auto shared = std::make_shared<const TreeEnsemble>(*std::move(model));
  absl::StatusOr<CpuPredictor> p = CpuPredictor::Create(shared, rows.names, "rows");
  EXPECT_OK(p);
  std::vector<double> out(rows.rows());
  const size_t w = rows.names.size();
  for (size_t i = 0; i < rows.rows(); ++i) {
    double margin = p->Margin(absl::MakeConstSpan(&rows.values[i * w], w));
    p->Transform(absl::MakeConstSpan(&margin, 1), absl::MakeSpan(&out[i], 1));
  }
  return out;
}

TEST(XgboostTrainer, LearnsStopsOnValidationAndScoresAsVigilDoes) {
  const LabelledRows train = Synthetic(4000, 1), valid = Synthetic(1500, 2),
                     test = Synthetic(1500, 3);
  TrainingOptions options;
  options.max_depth = 3;
  options.max_rounds = 300;
  options.early_stopping_rounds = 15;
  ASSERT_OK_AND_ASSIGN(TrainedClassifier m, TrainClassifier(train, valid, options));
  ASSERT_GE(m.rounds, 1);
  EXPECT_LT(m.rounds_tried(), options.max_rounds);  // stopped early
  EXPECT_EQ(m.rounds_tried(), m.rounds + options.early_stopping_rounds);
  for (double ap : m.validation_pr_auc) EXPECT_LE(ap, m.best_validation_pr_auc());
  EXPECT_GT(m.scale_pos_weight, 10);  // negatives over positives
  // The label depends on amount_ratio most, then fan_out; pure noise columns gain least.
  ASSERT_GE(m.feature_gain.size(), 2u);
  EXPECT_EQ(m.feature_gain[0].first, "amount_ratio");
  EXPECT_EQ(m.feature_gain[1].first, "fan_out");
  for (size_t i = 1; i < m.feature_gain.size(); ++i) {
    EXPECT_GE(m.feature_gain[i - 1].second, m.feature_gain[i].second);
  }

  // vigil reads the model and scores exactly what XGBoost scores.
  const std::vector<double> ours = OurProbabilities(m.model_json, test);
  ASSERT_OK_AND_ASSIGN(std::vector<float> theirs,
                       XgboostProbabilities(m.model_json, test.values, test.names.size()));
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i], static_cast<double>(theirs[i])) << "row " << i;
  }
  // It learned: on the later, unseen rows it ranks far above the base rate.
  double base = 0;
  for (uint8_t l : test.labels) base += l;
  base /= static_cast<double>(test.rows());
  EXPECT_GT(evaluation::AveragePrecision(ours, test.labels), 3 * base);

  // Deterministic for a seed.
  ASSERT_OK_AND_ASSIGN(TrainedClassifier again, TrainClassifier(train, valid, options));
  EXPECT_EQ(again.model_json, m.model_json);
}

TEST(XgboostTrainer, OnNoiseItStopsWithinThePatience) {
  TrainingOptions options;
  options.max_rounds = 500;
  options.early_stopping_rounds = 10;
  ASSERT_OK_AND_ASSIGN(TrainedClassifier m,
                       TrainClassifier(Synthetic(3000, 4, true), Synthetic(1000, 5, true), options));
  EXPECT_LT(m.rounds_tried(), 100);
}

TEST(XgboostTrainer, RefusesRowsItCannotLearnFromNamingWhy) {
  LabelledRows train = Synthetic(500, 6), valid = Synthetic(500, 7);
  LabelledRows one_class = train;
  std::fill(one_class.labels.begin(), one_class.labels.end(), 0);
  EXPECT_THAT(TrainClassifier(one_class, valid),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs both classes")));
  LabelledRows no_positive = valid;
  std::fill(no_positive.labels.begin(), no_positive.labels.end(), 0);
  EXPECT_THAT(TrainClassifier(train, no_positive),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("longer validation")));
  LabelledRows ragged = train;
  ragged.values.pop_back();
  EXPECT_THAT(TrainClassifier(ragged, valid),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("are not 500 rows")));
  LabelledRows renamed = valid;
  renamed.names[0] = "other";
  EXPECT_THAT(TrainClassifier(train, renamed),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("columns")));
  TrainingOptions bad;
  bad.learning_rate = 0;
  EXPECT_THAT(TrainClassifier(train, valid, bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("learning_rate")));
}

// python3-xgboost, trained on the same rows with the same parameters for the same rounds, gives
// the same probabilities: the C API path is XGBoost's own training, not a variant of it.
TEST(XgboostTrainer, AgreesWithPythonXgboost) {
  const LabelledRows train = Synthetic(3000, 8), valid = Synthetic(1000, 9);
  TrainingOptions options;
  options.max_depth = 4;
  options.max_rounds = 40;
  options.early_stopping_rounds = 40;  // no early stop: a fixed number of rounds
  ASSERT_OK_AND_ASSIGN(TrainedClassifier m, TrainClassifier(train, valid, options));
  ASSERT_EQ(m.rounds_tried(), 40);
  const std::string dir = absl::StrCat(::testing::TempDir(), "/xgb_trainer_", getpid());
  std::filesystem::create_directories(dir);
  const auto write = [&](const LabelledRows& r, const std::string& path) {
    std::ofstream out(path);
    out.precision(17);
    const size_t w = r.names.size();
    for (size_t i = 0; i < r.rows(); ++i) {
      for (size_t j = 0; j < w; ++j) {
        const double v = r.values[i * w + j];
        if (!std::isnan(v)) out << v;
        out << ",";
      }
      out << int{r.labels[i]} << "\n";
    }
  };
  write(train, dir + "/train.csv");
  write(valid, dir + "/valid.csv");
  std::ofstream(dir + "/oracle.py") << absl::StrCat(R"(import sys, numpy as np, xgboost as xgb
d = sys.argv[1]
def load(p):
    a = np.genfromtxt(p, delimiter=",", filling_values=np.nan)
    return a[:, :-1].astype(np.float32), a[:, -1]
x, y = load(d + "/train.csv")
vx, vy = load(d + "/valid.csv")
params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 4, "eta": 0.1,
          "min_child_weight": 1, "subsample": 1, "colsample_bytree": 1,
          "scale_pos_weight": )", m.scale_pos_weight, R"(, "seed": 42, "nthread": 1, "verbosity": 0}
b = xgb.train(params, xgb.DMatrix(x, label=y), num_boost_round=)", m.rounds, R"()
np.savetxt(d + "/p.txt", b.predict(xgb.DMatrix(vx)), fmt="%.9g")
)");
  const std::string log = dir + "/oracle.log";
  ASSERT_EQ(vigil::testing::RunProcess("/usr/bin/python3", {dir + "/oracle.py", dir}, log), 0)
      << "scripts/setup installs python3-xgboost; see " << log;
  std::ifstream in(dir + "/p.txt");
  std::vector<double> python;
  for (double v; in >> v;) python.push_back(v);
  const std::vector<double> ours = OurProbabilities(m.model_json, valid);
  ASSERT_EQ(python.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_NEAR(ours[i], python[i], 1e-7 * std::max(1.0, python[i])) << "row " << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil::training
