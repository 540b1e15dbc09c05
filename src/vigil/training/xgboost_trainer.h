// XgboostTrainer: trains a binary laundering classifier on labelled feature rows with XGBoost's C
// API (Debian's libxgboost), the library python3-xgboost wraps, so that `vigil model train` needs
// no Python and its models are the ones vigil's loaders and scorers already read exactly.
//
// Training is made for a stream split by time (the caller splits: the rows of the validation set
// are later than those of the training set): boosting rounds continue while the validation
// average precision (PR-AUC, evaluation::AveragePrecision, scikit-learn's definition) improves,
// and stop after `early_stopping_rounds` without improvement; the model kept is the one of the
// best round. The class imbalance is weighted (scale_pos_weight, by default negatives over
// positives of the training set). Deterministic for a seed (one thread by default: XGBoost's
// histogram building sums in thread order).
//
// Thread safety: TrainClassifier may run concurrently with itself (each call owns its booster).
#ifndef VIGIL_TRAINING_XGBOOST_TRAINER_H_
#define VIGIL_TRAINING_XGBOOST_TRAINER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace vigil::training {

// Labelled rows: row-major, `names.size()` columns, NaN for a missing value.
struct LabelledRows {
  std::vector<std::string> names;
  std::vector<double> values;
  std::vector<uint8_t> labels;  // nonzero: laundering

  size_t rows() const { return labels.size(); }
};

struct TrainingOptions {
  int max_depth = 6;
  double learning_rate = 0.1;
  int max_rounds = 500;
  int early_stopping_rounds = 30;
  double min_child_weight = 1;
  double subsample = 1;         // < 1 draws rows per tree (seeded)
  double colsample_bytree = 1;  // < 1 draws columns per tree (seeded)
  // The weight of a positive row; <= 0: negatives / positives of the training rows.
  double scale_pos_weight = 0;
  uint64_t seed = 42;
  int threads = 1;
};

struct TrainedClassifier {
  std::string model_json;  // XGBoost's JSON model (LoadXgboostJson reads it)
  int rounds = 0;          // boosting rounds in the model: the best round + 1
  // Rounds trained before stopping: one validation figure each.
  int rounds_tried() const { return static_cast<int>(validation_pr_auc.size()); }
  double scale_pos_weight = 0;
  // Validation average precision after each round tried (the model keeps the first "rounds").
  std::vector<double> validation_pr_auc;
  // XGBoost's total gain of each feature over the model's splits, highest first; features no
  // split uses are left out.
  std::vector<std::pair<std::string, double>> feature_gain;
  double best_validation_pr_auc() const {
    return rounds > 0 ? validation_pr_auc[static_cast<size_t>(rounds - 1)] : 0;
  }
};

// Trains on "train", stopping on "validation" (the same columns, in the same order). Errors:
// kInvalidArgument naming what is wrong with the rows (no rows, ragged values, no positive or no
// negative training row, no positive validation row, columns that differ), or an option out of
// range; kInternal with XGBoost's own message when the library fails.
absl::StatusOr<TrainedClassifier> TrainClassifier(const LabelledRows& train,
                                                  const LabelledRows& validation,
                                                  const TrainingOptions& options = {});

// The libxgboost version trained with ("1.7.4"), for the model card.
std::string XgboostVersion();

// XGBoost's probabilities for "rows" (row-major, "width" columns) from "model_json": the
// library's own predictions, for comparison with vigil's scorer.
absl::StatusOr<std::vector<float>> XgboostProbabilities(const std::string& model_json,
                                                        absl::Span<const double> rows,
                                                        size_t width);

}  // namespace vigil::training

#endif  // VIGIL_TRAINING_XGBOOST_TRAINER_H_
