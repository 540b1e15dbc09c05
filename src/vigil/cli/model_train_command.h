// `vigil model train`: a model from a labelled history of feature rows (`vigil replay
// --features-out`), split by event time, with its thresholds, metrics on the held-out test period
// beside one-feature baselines, and a model card (training::TrainOnHistory). Registered under
// `vigil model` by AddModelCommand.
#ifndef VIGIL_CLI_MODEL_TRAIN_COMMAND_H_
#define VIGIL_CLI_MODEL_TRAIN_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace vigil::cli {

struct ModelTrainFlags {
  std::string features;
  std::string out_dir;
  std::string split = "60/20/20";
  int depth = 6;
  double eta = 0.1;
  int rounds = 500;
  int early_stopping = 30;
  double subsample = 0.8;
  double colsample = 0.8;
  unsigned long long seed = 42;
  int threads = 1;
  double baseline_margin = 0.05;
  double alerts_per_day = 0;     // > 0: the review threshold keeps within this alert budget
  double alert_accounts = 0;     // > 0: ... and its alerts touch at most this share of accounts
  double block_precision = 0.9;  // the block threshold's precision on validation
  int bootstrap = 1000;
  // Columns left out of training, by name or shell pattern ("*_sum_*"): e.g. the absolute
  // amounts, when the model must carry over to data of another amount scale.
  std::vector<std::string> drop;
};

void AddModelTrainOptions(CLI::App& train, ModelTrainFlags& flags);

// Exit 0; 1 when the model fails the baseline gate (it and its card are still written); 2 for
// bad input or an unwritable output.
int RunModelTrain(const ModelTrainFlags& flags);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_MODEL_TRAIN_COMMAND_H_
