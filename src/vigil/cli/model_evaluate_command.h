// `vigil model evaluate`: a model's figures on any labelled feature rows (evaluation::
// EvaluatePayments): PR-AUC with an interval, the base rate, the confusion at the threshold,
// precision at k, per typology and per amount band, and per account when the rows name the
// parties (evaluation::EvaluateAccounts). Registered under `vigil model`.
#ifndef VIGIL_CLI_MODEL_EVALUATE_COMMAND_H_
#define VIGIL_CLI_MODEL_EVALUATE_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace vigil::cli {

struct ModelEvaluateFlags {
  std::string model;
  std::string rows;
  double threshold = -1;  // < 0: thresholds.json's review beside the model, else 0.5
  std::string json_out;
  std::string pr_curve;  // an SVG of the payments' precision-recall curve
  int bootstrap = 1000;
  int top_k = 100;
  std::string amount_column = "amount_reporting";
  double account_max_fpr = 0.01;
};

void AddModelEvaluateOptions(CLI::App& evaluate, ModelEvaluateFlags& flags);

// Exit 0; 2 for bad input.
int RunModelEvaluate(const ModelEvaluateFlags& flags);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_MODEL_EVALUATE_COMMAND_H_
