#include "vigil/cli/model_evaluate_command.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/command.h"
#include "vigil/evaluation/account_evaluation.h"
#include "vigil/evaluation/feature_row_reader.h"
#include "vigil/evaluation/payment_evaluation.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/model_file.h"

namespace vigil::cli {
namespace {

using Json = nlohmann::ordered_json;

int Fail(absl::string_view message) {
  std::cerr << "vigil model evaluate: " << message << "\n";
  return kExitUsage;
}

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json SliceJson(const evaluation::SliceFigures& f) {
  const evaluation::Confusion& c = f.at_threshold;
  return Json{{"name", f.name},
              {"rows", f.rows},
              {"laundering", f.positives},
              {"pr_auc", {{"estimate", Num(f.pr_auc.estimate)},
                          {"low", Num(f.pr_auc.low)},
                          {"high", Num(f.pr_auc.high)}}},
              {"precision", Num(c.precision())},
              {"recall", Num(c.recall())},
              {"f1", Num(c.f1())},
              {"fpr", Num(c.fpr())}};
}

std::string Fmt(double v) { return std::isfinite(v) ? absl::StrFormat("%.4f", v) : "-"; }

void PrintSlice(const evaluation::SliceFigures& f) {
  const evaluation::Confusion& c = f.at_threshold;
  std::cout << absl::StrFormat("%-16s %9d %9d  %s [%s, %s]  %s  %s  %s  %s\n", f.name, f.rows,
                               f.positives, Fmt(f.pr_auc.estimate), Fmt(f.pr_auc.low),
                               Fmt(f.pr_auc.high), Fmt(c.precision()), Fmt(c.recall()),
                               Fmt(c.f1()), Fmt(c.fpr()));
}

}  // namespace

void AddModelEvaluateOptions(CLI::App& evaluate, ModelEvaluateFlags& flags) {
  evaluate.add_option("MODEL", flags.model, "Model file")->required();
  evaluate.add_option("ROWS", flags.rows,
                      "Labelled feature rows (vigil replay --features-out); unlabelled rows are "
                      "left out")
      ->required();
  evaluate.add_option("--threshold", flags.threshold,
                      "Predicted laundering at or above (default: the review threshold of "
                      "thresholds.json beside the model, else 0.5)");
  evaluate.add_option("--json-out", flags.json_out, "Also write the figures as JSON");
  evaluate.add_option("--pr-curve", flags.pr_curve,
                      "Write the payments' precision-recall curve as an SVG image");
  evaluate.add_option("--bootstrap", flags.bootstrap, "Bootstrap resamples for the intervals")
      ->capture_default_str();
  evaluate.add_option("--top-k", flags.top_k, "Precision among the k highest scores")
      ->capture_default_str();
  evaluate.add_option("--account-max-fpr", flags.account_max_fpr,
                      "The share of ordinary accounts an alert budget allows (recall per account "
                      "is reported at it)")
      ->capture_default_str();
  evaluate.add_option("--amount-column", flags.amount_column,
                      "The column whose bands (< 100, 100-1,000, 1,000-10,000, >= 10,000) slice "
                      "the figures; absent: no bands")
      ->capture_default_str();
  evaluate.footer(
      "Example:\n"
      "  vigil model evaluate model/model.json other_stream_rows.csv --json-out eval.json\n"
      "Scores every labelled row with the model as vigil serves it and reports on all of them: "
      "give it rows the model never trained on (a later period, another stream).");
}

int RunModelEvaluate(const ModelEvaluateFlags& flags) {
  if (flags.bootstrap < 1 || flags.top_k < 1) return Fail("--bootstrap and --top-k: at least 1");
  absl::StatusOr<std::shared_ptr<const TreeEnsemble>> model = LoadModelFile(flags.model);
  if (!model.ok()) return Fail(model.status().message());
  absl::StatusOr<evaluation::FeatureRows> rows = evaluation::ReadFeatureRows(flags.rows);
  if (!rows.ok()) return Fail(rows.status().message());
  absl::StatusOr<CpuPredictor> predictor = CpuPredictor::Create(*model, rows->names, flags.rows);
  if (!predictor.ok()) return Fail(predictor.status().message());
  if (predictor->num_groups() != 1) return Fail("the model is not a binary classifier");

  double threshold = flags.threshold;
  std::string threshold_from = "--threshold";
  if (threshold < 0) {
    const std::filesystem::path beside =
        std::filesystem::path(flags.model).parent_path() / "thresholds.json";
    std::ifstream in(beside);
    const Json t = in ? Json::parse(in, nullptr, false) : Json();
    if (t.is_object() && t.contains("review") && t["review"].is_number()) {
      threshold = t["review"].get<double>();
      threshold_from = beside.string();
    } else {
      threshold = 0.5;
      threshold_from = "the default (no thresholds.json beside the model)";
    }
  }

  const size_t width = rows->names.size();
  const auto amount_it = std::find(rows->names.begin(), rows->names.end(), flags.amount_column);
  const bool bands = amount_it != rows->names.end();
  const size_t amount_j = static_cast<size_t>(amount_it - rows->names.begin());
  std::vector<double> scores, amounts;
  std::vector<uint8_t> labels;
  std::vector<std::string> typologies, originators, beneficiaries;
  bool parties = false;
  for (size_t i = 0; i < rows->rows(); ++i) {
    if (rows->labels[i] < 0) continue;
    originators.push_back(rows->originators[i]);
    beneficiaries.push_back(rows->beneficiaries[i]);
    parties = parties || !rows->originators[i].empty() || !rows->beneficiaries[i].empty();
    const absl::Span<const double> row(&rows->values[i * width], width);
    double margin = predictor->Margin(row);
    double p = 0;
    predictor->Transform(absl::MakeConstSpan(&margin, 1), absl::MakeSpan(&p, 1));
    scores.push_back(p);
    labels.push_back(static_cast<uint8_t>(rows->labels[i]));
    typologies.push_back(rows->typologies[i]);
    if (bands) amounts.push_back(row[amount_j]);
  }
  if (scores.empty()) return Fail(absl::StrCat(flags.rows, ": no row is labelled"));

  evaluation::PaymentEvaluationOptions options;
  options.threshold = threshold;
  options.top_k = static_cast<size_t>(flags.top_k);
  options.bootstrap_resamples = static_cast<size_t>(flags.bootstrap);
  const evaluation::PaymentEvaluation e =
      evaluation::EvaluatePayments(scores, labels, typologies, amounts, options);

  std::cout << absl::StrFormat("%d labelled rows, %d laundering (base rate %s); threshold %s (%s)\n",
                               e.all.rows, e.all.positives, Fmt(e.base_rate), Fmt(threshold),
                               threshold_from);
  std::cout << absl::StrFormat("precision among the top %d: %s\n", flags.top_k,
                               Fmt(e.precision_at_k));
  std::cout << "slice                 rows laundering  PR-AUC [95%]              precision recall f1 fpr\n";
  PrintSlice(e.all);
  for (const auto& f : e.amount_bands) PrintSlice(f);
  for (const auto& f : e.typologies) PrintSlice(f);

  // Per account, when the rows name the parties.
  evaluation::AccountEvaluation accounts;
  if (parties) {
    evaluation::AccountEvaluationOptions ao;
    ao.threshold = threshold;
    ao.max_fpr = flags.account_max_fpr;
    ao.bootstrap_resamples = options.bootstrap_resamples;
    accounts = evaluation::EvaluateAccounts(scores, labels, originators, beneficiaries, ao);
    const evaluation::Confusion& c = accounts.at_threshold;
    std::cout << absl::StrFormat(
        "accounts: %d, %d laundering (touched by a laundering payment); PR-AUC %s [%s, %s]; "
        "at the threshold: precision %s, recall %s, FPR %s; recall at FPR <= %g: %s\n",
        accounts.accounts, accounts.laundering, Fmt(accounts.pr_auc.estimate),
        Fmt(accounts.pr_auc.low), Fmt(accounts.pr_auc.high), Fmt(c.precision()),
        Fmt(c.recall()), Fmt(c.fpr()), accounts.max_fpr, Fmt(accounts.at_max_fpr.at.recall()));
  }

  if (!flags.pr_curve.empty()) {
    const std::string svg = evaluation::PrecisionRecallSvg(
        evaluation::PrecisionRecallCurve(scores, labels), e.base_rate,
        absl::StrFormat("%s on %s: PR-AUC %s",
                        std::filesystem::path(flags.model).filename().string(),
                        std::filesystem::path(flags.rows).filename().string(),
                        Fmt(e.all.pr_auc.estimate)));
    std::ofstream f(flags.pr_curve, std::ios::trunc);
    f << svg;
    f.close();
    if (!f) return Fail(absl::StrCat("cannot write ", flags.pr_curve));
  }
  if (!flags.json_out.empty()) {
    Json bands_json = Json::array(), typ_json = Json::array();
    for (const auto& f : e.amount_bands) bands_json.push_back(SliceJson(f));
    for (const auto& f : e.typologies) typ_json.push_back(SliceJson(f));
    const Json out = {{"model", flags.model},
                      {"rows", flags.rows},
                      {"threshold", threshold},
                      {"threshold_from", threshold_from},
                      {"base_rate", Num(e.base_rate)},
                      {"precision_at_k", {{"k", flags.top_k}, {"precision", Num(e.precision_at_k)}}},
                      {"all", SliceJson(e.all)},
                      {"amount_bands", bands_json},
                      {"typologies", typ_json},
                      {"accounts", parties ? Json{{"accounts", accounts.accounts},
                                                  {"laundering", accounts.laundering},
                                                  {"pr_auc", {{"estimate", Num(accounts.pr_auc.estimate)},
                                                              {"low", Num(accounts.pr_auc.low)},
                                                              {"high", Num(accounts.pr_auc.high)}}},
                                                  {"at_threshold", {{"precision", Num(accounts.at_threshold.precision())},
                                                                    {"recall", Num(accounts.at_threshold.recall())},
                                                                    {"fpr", Num(accounts.at_threshold.fpr())}}},
                                                  {"max_fpr", accounts.max_fpr},
                                                  {"recall_at_max_fpr", Num(accounts.at_max_fpr.at.recall())},
                                                  {"threshold_at_max_fpr", Num(accounts.at_max_fpr.threshold)}}
                                           : Json(nullptr)}};
    std::ofstream f(flags.json_out, std::ios::trunc);
    f << out.dump(2) << "\n";
    f.close();
    if (!f) return Fail(absl::StrCat("cannot write ", flags.json_out));
  }
  return kExitOk;
}

}  // namespace vigil::cli
