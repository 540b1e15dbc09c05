#include "vigil/training/xgboost_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "vigil/evaluation/detection_metrics.h"
#include "xgboost/c_api.h"

namespace vigil::training {
namespace {

absl::Status XgbFailed(const std::string& what) {
  return absl::InternalError(absl::StrCat("XGBoost ", what, ": ", XGBGetLastError()));
}

struct MatrixDeleter {
  void operator()(void* m) const { XGDMatrixFree(m); }
};
struct BoosterDeleter {
  void operator()(void* b) const { XGBoosterFree(b); }
};
using Matrix = std::unique_ptr<void, MatrixDeleter>;
using Booster = std::unique_ptr<void, BoosterDeleter>;

absl::StatusOr<Matrix> MakeMatrix(absl::Span<const double> values, size_t rows, size_t width) {
  // XGBoost reads float32, as it does from Python: the same rows, the same splits.
  const std::vector<float> f(values.begin(), values.end());
  DMatrixHandle handle = nullptr;
  if (XGDMatrixCreateFromMat(f.data(), rows, width, std::numeric_limits<float>::quiet_NaN(),
                             &handle) != 0) {
    return XgbFailed("XGDMatrixCreateFromMat");
  }
  return Matrix(handle);
}

absl::StatusOr<Matrix> MakeLabelledMatrix(const LabelledRows& rows) {
  absl::StatusOr<Matrix> m = MakeMatrix(rows.values, rows.rows(), rows.names.size());
  if (!m.ok()) return m.status();
  const std::vector<float> labels(rows.labels.begin(), rows.labels.end());
  std::vector<float> binary(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) binary[i] = labels[i] != 0 ? 1.0f : 0.0f;
  if (XGDMatrixSetFloatInfo(m->get(), "label", binary.data(), binary.size()) != 0) {
    return XgbFailed("XGDMatrixSetFloatInfo(label)");
  }
  std::vector<const char*> names;
  for (const std::string& n : rows.names) names.push_back(n.c_str());
  if (XGDMatrixSetStrFeatureInfo(m->get(), "feature_name", names.data(), names.size()) != 0) {
    return XgbFailed("XGDMatrixSetStrFeatureInfo(feature_name)");
  }
  return m;
}

absl::Status CheckRows(const LabelledRows& rows, const char* what) {
  if (rows.names.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no columns"));
  if (rows.rows() == 0) return absl::InvalidArgumentError(absl::StrCat(what, ": no rows"));
  if (rows.values.size() != rows.rows() * rows.names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", rows.values.size(), " values are not ", rows.rows(), " rows of ",
        rows.names.size(), " columns"));
  }
  return absl::OkStatus();
}

// The probabilities of every row of "m" from all the booster's trees.
absl::StatusOr<std::vector<double>> Predict(BoosterHandle booster, DMatrixHandle m) {
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0,
          "strict_shape": false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDMatrix(booster, m, config, &shape, &dim, &result) != 0) {
    return XgbFailed("XGBoosterPredictFromDMatrix");
  }
  bst_ulong n = 1;
  for (bst_ulong d = 0; d < dim; ++d) n *= shape[d];
  return std::vector<double>(result, result + n);
}

absl::Status Set(BoosterHandle booster, const char* name, const std::string& value) {
  if (XGBoosterSetParam(booster, name, value.c_str()) != 0) {
    return XgbFailed(absl::StrCat("XGBoosterSetParam(", name, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainedClassifier> TrainClassifier(const LabelledRows& train,
                                                  const LabelledRows& validation,
                                                  const TrainingOptions& options) {
  if (absl::Status s = CheckRows(train, "training rows"); !s.ok()) return s;
  if (absl::Status s = CheckRows(validation, "validation rows"); !s.ok()) return s;
  if (validation.names != train.names) {
    return absl::InvalidArgumentError(
        "validation rows: their columns are not the training rows' columns, in order");
  }
  if (options.max_depth < 1 || options.max_rounds < 1 || options.early_stopping_rounds < 1 ||
      !(options.learning_rate > 0 && options.learning_rate <= 1) ||
      !(options.subsample > 0 && options.subsample <= 1) ||
      !(options.colsample_bytree > 0 && options.colsample_bytree <= 1) || options.threads < 1) {
    return absl::InvalidArgumentError(
        "training options: max_depth, max_rounds, early_stopping_rounds and threads must be at "
        "least 1; learning_rate, subsample and colsample_bytree in (0, 1]");
  }
  size_t positives = 0;
  for (uint8_t l : train.labels) positives += l != 0;
  if (positives == 0 || positives == train.rows()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training rows: ", positives, " of ", train.rows(),
        " are labelled laundering; training needs both classes"));
  }
  size_t validation_positives = 0;
  for (uint8_t l : validation.labels) validation_positives += l != 0;
  if (validation_positives == 0) {
    return absl::InvalidArgumentError(
        "validation rows: none is labelled laundering, so no round can be judged better than "
        "another; take a longer validation period");
  }

  absl::StatusOr<Matrix> dtrain = MakeLabelledMatrix(train);
  if (!dtrain.ok()) return dtrain.status();
  absl::StatusOr<Matrix> dvalid = MakeLabelledMatrix(validation);
  if (!dvalid.ok()) return dvalid.status();
  // Both matrices are the booster's cache: each round's predictions build on the last's.
  DMatrixHandle cache[2] = {dtrain->get(), dvalid->get()};
  BoosterHandle raw = nullptr;
  if (XGBoosterCreate(cache, 2, &raw) != 0) return XgbFailed("XGBoosterCreate");
  Booster booster(raw);

  TrainedClassifier out;
  out.scale_pos_weight = options.scale_pos_weight > 0
                             ? options.scale_pos_weight
                             : static_cast<double>(train.rows() - positives) /
                                   static_cast<double>(positives);
  const auto num = [](double v) { return absl::StrCat(v); };
  for (const auto& [name, value] : std::vector<std::pair<const char*, std::string>>{
           {"objective", "binary:logistic"},
           {"tree_method", "hist"},
           {"max_depth", absl::StrCat(options.max_depth)},
           {"eta", num(options.learning_rate)},
           {"min_child_weight", num(options.min_child_weight)},
           {"subsample", num(options.subsample)},
           {"colsample_bytree", num(options.colsample_bytree)},
           {"scale_pos_weight", num(out.scale_pos_weight)},
           {"seed", absl::StrCat(options.seed)},
           {"nthread", absl::StrCat(options.threads)},
           {"verbosity", "0"}}) {
    if (absl::Status s = Set(booster.get(), name, value); !s.ok()) return s;
  }

  int best = -1;
  double best_ap = -1;
  for (int round = 0; round < options.max_rounds; ++round) {
    if (XGBoosterUpdateOneIter(booster.get(), round, dtrain->get()) != 0) {
      return XgbFailed("XGBoosterUpdateOneIter");
    }
    absl::StatusOr<std::vector<double>> p = Predict(booster.get(), dvalid->get());
    if (!p.ok()) return p.status();
    const double ap = evaluation::AveragePrecision(*p, validation.labels);
    out.validation_pr_auc.push_back(ap);
    if (ap > best_ap) {
      best_ap = ap;
      best = round;
    } else if (round - best >= options.early_stopping_rounds) {
      break;
    }
  }
  out.rounds = best + 1;

  BoosterHandle sliced_raw = nullptr;
  if (XGBoosterSlice(booster.get(), 0, out.rounds, 1, &sliced_raw) != 0) {
    return XgbFailed("XGBoosterSlice");
  }
  Booster sliced(sliced_raw);
  // The columns' names go into the model, so that vigil binds them by name (XGBoost keeps a
  // booster's names apart from its matrices').
  std::vector<const char*> names;
  for (const std::string& n : train.names) names.push_back(n.c_str());
  if (XGBoosterSetStrFeatureInfo(sliced.get(), "feature_name", names.data(), names.size()) != 0) {
    return XgbFailed("XGBoosterSetStrFeatureInfo(feature_name)");
  }
  {
    bst_ulong n = 0, dim = 0;
    const char** features = nullptr;
    const bst_ulong* shape = nullptr;
    const float* gain = nullptr;
    if (XGBoosterFeatureScore(sliced.get(), R"({"importance_type": "total_gain"})", &n,
                              &features, &dim, &shape, &gain) != 0) {
      return XgbFailed("XGBoosterFeatureScore");
    }
    for (bst_ulong i = 0; i < n; ++i) out.feature_gain.emplace_back(features[i], gain[i]);
    std::stable_sort(out.feature_gain.begin(), out.feature_gain.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  bst_ulong length = 0;
  const char* bytes = nullptr;
  if (XGBoosterSaveModelToBuffer(sliced.get(), R"({"format": "json"})", &length, &bytes) != 0) {
    return XgbFailed("XGBoosterSaveModelToBuffer");
  }
  out.model_json.assign(bytes, length);
  return out;
}

std::string XgboostVersion() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return absl::StrCat(major, ".", minor, ".", patch);
}

absl::StatusOr<std::vector<float>> XgboostProbabilities(const std::string& model_json,
                                                        absl::Span<const double> rows,
                                                        size_t width) {
  if (width == 0 || rows.size() % width != 0) {
    return absl::InvalidArgumentError("rows: not a whole number of rows of that width");
  }
  BoosterHandle raw = nullptr;
  if (XGBoosterCreate(nullptr, 0, &raw) != 0) return XgbFailed("XGBoosterCreate");
  Booster booster(raw);
  if (XGBoosterLoadModelFromBuffer(booster.get(), model_json.data(), model_json.size()) != 0) {
    return XgbFailed("XGBoosterLoadModelFromBuffer");
  }
  if (absl::Status s = Set(booster.get(), "nthread", "1"); !s.ok()) return s;
  absl::StatusOr<Matrix> m = MakeMatrix(rows, rows.size() / width, width);
  if (!m.ok()) return m.status();
  absl::StatusOr<std::vector<double>> p = Predict(booster.get(), m->get());
  if (!p.ok()) return p.status();
  return std::vector<float>(p->begin(), p->end());
}

}  // namespace vigil::training
