#include "vigil/cli/model_train_command.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/command.h"
#include "vigil/common/sha256.h"
#include "vigil/drift/profile_builder.h"
#include "vigil/evaluation/feature_row_reader.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/training/history_training.h"

namespace vigil::cli {
namespace {

using Json = nlohmann::ordered_json;

int Fail(absl::string_view message) {
  std::cerr << "vigil model train: " << message << "\n";
  return kExitUsage;
}

// "60/20/20" → the train and validation shares.
bool ParseSplit(const std::string& text, double* train, double* validation) {
  const std::vector<std::string> parts = absl::StrSplit(text, '/');
  double p[3];
  if (parts.size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (!absl::SimpleAtod(parts[static_cast<size_t>(i)], &p[i]) || !(p[i] > 0)) return false;
  }
  const double sum = p[0] + p[1] + p[2];
  *train = p[0] / sum;
  *validation = p[1] / sum;
  return true;
}

Json IntervalJson(const evaluation::Interval& i) {
  const auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{{"estimate", num(i.estimate)}, {"low", num(i.low)}, {"high", num(i.high)},
              {"resamples_used", i.used}};
}

Json ConfusionJson(const evaluation::Confusion& c) {
  const auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{{"precision", num(c.precision())}, {"recall", num(c.recall())},
              {"f1", num(c.f1())},               {"fpr", num(c.fpr())},
              {"tp", c.tp},                      {"fp", c.fp},
              {"fn", c.fn},                      {"tn", c.tn}};
}

Json PartJson(const training::SplitPart& p) {
  return Json{{"rows", p.rows.size()},
              {"laundering", p.positives},
              {"from", FormatUtc(p.from)},
              {"until", FormatUtc(p.until)}};
}

absl::Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

}  // namespace

void AddModelTrainOptions(CLI::App& train, ModelTrainFlags& flags) {
  train.add_option("--features", flags.features,
                   "Labelled feature rows (vigil replay --features-out); unlabelled rows are "
                   "left out")
      ->required();
  train.add_option("--out-dir", flags.out_dir,
                   "Writes model.json, thresholds.json, model_card.json and "
                   "reference_profile.json (the drift reference) here")
      ->required();
  train.add_option("--split", flags.split, "Train/validation/test shares by event time")
      ->capture_default_str();
  train.add_option("--depth", flags.depth, "Tree depth")->capture_default_str();
  train.add_option("--eta", flags.eta, "Learning rate")->capture_default_str();
  train.add_option("--rounds", flags.rounds, "Boosting rounds at most")->capture_default_str();
  train.add_option("--early-stopping", flags.early_stopping,
                   "Stop after this many rounds without a better validation PR-AUC")
      ->capture_default_str();
  train.add_option("--subsample", flags.subsample, "Rows drawn per tree")->capture_default_str();
  train.add_option("--colsample", flags.colsample, "Columns drawn per tree")->capture_default_str();
  train.add_option("--seed", flags.seed, "Seed (the same seed, the same model)")
      ->capture_default_str();
  train.add_option("--threads", flags.threads,
                   "Training threads (1: deterministic; more may change the model's last bits)")
      ->capture_default_str();
  train.add_option("--baseline-margin", flags.baseline_margin,
                   "The test PR-AUC the model must add to the best one-feature baseline")
      ->capture_default_str();
  train.add_option("--bootstrap", flags.bootstrap, "Bootstrap resamples for the intervals")
      ->capture_default_str();
  train.add_option("--alert-accounts", flags.alert_accounts,
                   "Review threshold: the lowest whose alerts on validation touch at most this "
                   "share of the accounts (0.01: 1%); with --alerts-per-day the stricter holds")
      ->check(CLI::Range(0.0, 1.0));
  train.add_option("--drop", flags.drop,
                   "Leave these columns out (a name or a shell pattern such as '*_sum_*'; "
                   "repeat for more): e.g. the absolute amounts, for a model that must carry "
                   "over to another amount scale");
  train.add_option("--alerts-per-day", flags.alerts_per_day,
                   "The review threshold: the lowest whose alerts on validation stay within this "
                   "many a day (default: the best F1 on validation)");
  train.add_option("--block-precision", flags.block_precision,
                   "The block threshold: the lowest with at least this precision on validation")
      ->capture_default_str();
  train.footer(
      "Example:\n"
      "  vigil replay history.csv --policy P --features-out rows.csv\n"
      "  vigil model train --features rows.csv --out-dir model/\n"
      "Splits by event time (the earliest rows train, the next validate, the latest test), "
      "chooses the thresholds on validation and reports on test only, beside the best "
      "one-feature baselines. Exits 1 when the model does not beat them by --baseline-margin "
      "(the model and its card are written, marked).");
}

int RunModelTrain(const ModelTrainFlags& flags) {
  training::HistoryTrainingOptions options;
  if (!ParseSplit(flags.split, &options.train_share, &options.validation_share)) {
    return Fail(absl::StrCat("--split: '", flags.split,
                             "' is not three positive shares such as 60/20/20"));
  }
  if (flags.bootstrap < 1) return Fail("--bootstrap: at least 1");
  options.xgboost.max_depth = flags.depth;
  options.xgboost.learning_rate = flags.eta;
  options.xgboost.max_rounds = flags.rounds;
  options.xgboost.early_stopping_rounds = flags.early_stopping;
  options.xgboost.subsample = flags.subsample;
  options.xgboost.colsample_bytree = flags.colsample;
  options.xgboost.seed = flags.seed;
  options.xgboost.threads = flags.threads;
  options.baseline_margin = flags.baseline_margin;
  if (flags.alerts_per_day < 0) return Fail("--alerts-per-day: not negative");
  if (!(flags.block_precision > 0 && flags.block_precision <= 1)) {
    return Fail("--block-precision: in (0, 1]");
  }
  options.alerts_per_day = flags.alerts_per_day;
  options.alerted_account_share = flags.alert_accounts;
  options.block_precision = flags.block_precision;
  options.bootstrap_resamples = static_cast<size_t>(flags.bootstrap);

  absl::StatusOr<evaluation::FeatureRows> rows = evaluation::ReadFeatureRows(flags.features);
  if (!rows.ok()) return Fail(rows.status().message());
  // The columns kept: all but those --drop names (each pattern must match one).
  std::vector<size_t> kept;
  std::vector<std::string> dropped;
  std::vector<bool> used(flags.drop.size(), false);
  for (size_t j = 0; j < rows->names.size(); ++j) {
    bool drop = false;
    for (size_t k = 0; k < flags.drop.size(); ++k) {
      if (fnmatch(flags.drop[k].c_str(), rows->names[j].c_str(), 0) == 0) drop = used[k] = true;
    }
    if (drop) {
      dropped.push_back(rows->names[j]);
    } else {
      kept.push_back(j);
    }
  }
  for (size_t k = 0; k < flags.drop.size(); ++k) {
    if (!used[k]) {
      return Fail(absl::StrCat("--drop ", flags.drop[k], ": matches no column of ", flags.features));
    }
  }
  if (kept.empty()) return Fail("--drop leaves no column to train on");
  training::LabelledRows history;
  for (size_t j : kept) history.names.push_back(rows->names[j]);
  std::vector<UtcTime> times;
  const size_t width = rows->names.size();
  // The amounts, for the test figures per amount band, even when --drop leaves them out.
  const auto amount_it =
      std::find(rows->names.begin(), rows->names.end(), options.amount_column);
  std::vector<double> amounts;
  // Each row's parties as numbers, for the account figures (rows without party columns: none).
  std::vector<std::array<uint32_t, 2>> parties;
  absl::flat_hash_map<std::string, uint32_t> account_numbers;
  const auto number = [&](const std::string& account) {
    return account_numbers.try_emplace(account, static_cast<uint32_t>(account_numbers.size()))
        .first->second;
  };
  const bool with_parties = !rows->originators.empty() && !rows->originators[0].empty();
  size_t unlabelled = 0;
  for (size_t i = 0; i < rows->rows(); ++i) {
    if (rows->labels[i] < 0) {
      ++unlabelled;
      continue;
    }
    const double* row = rows->values.data() + i * width;
    for (size_t j : kept) history.values.push_back(row[j]);
    if (amount_it != rows->names.end()) amounts.push_back(row[amount_it - rows->names.begin()]);
    if (with_parties) parties.push_back({number(rows->originators[i]), number(rows->beneficiaries[i])});
    history.labels.push_back(static_cast<uint8_t>(rows->labels[i]));
    times.push_back(rows->times[i]);
  }
  if (history.rows() == 0) {
    return Fail(absl::StrCat(flags.features, ": no row is labelled (the label column is empty)"));
  }
  absl::StatusOr<training::TrainingReport> report =
      training::TrainOnHistory(history, times, options, amounts, parties);
  if (!report.ok()) return Fail(report.status().message());
  const training::TrainingReport& r = *report;

  // The model must be one vigil reads.
  if (absl::StatusOr<TreeEnsemble> loaded = LoadXgboostJson(r.model.model_json, "the model");
      !loaded.ok()) {
    return Fail(absl::StrCat("the trained model does not load: ", loaded.status().message()));
  }
  std::ifstream in(flags.features, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  // The rows are the engine's (any schema it extends) when the model's columns all bind to it.
  const bool engine_schema = schema->Bind(history.names).ok();

  Json baselines = Json::array();
  for (const training::Baseline& b : r.baselines) {
    baselines.push_back({{"feature", b.feature},
                         {"higher_is_riskier", b.higher_is_riskier},
                         {"validation_pr_auc", b.validation_pr_auc},
                         {"test_pr_auc", IntervalJson(b.test_pr_auc)}});
  }
  Json importance = Json::array();
  for (const auto& [feature, gain] : r.model.feature_gain) {
    importance.push_back({{"feature", feature}, {"total_gain", gain}});
  }
  Json bands = Json::array();
  for (const evaluation::SliceFigures& f : r.test_amount_bands) {
    bands.push_back({{"band", f.name},
                     {"rows", f.rows},
                     {"laundering", f.positives},
                     {"pr_auc", IntervalJson(f.pr_auc)},
                     {"at_review", ConfusionJson(f.at_threshold)}});
  }
  Json accounts = nullptr;
  if (r.test_accounts.has_value()) {
    const evaluation::AccountEvaluation& a = *r.test_accounts;
    const auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
    accounts = {{"accounts", a.accounts},
                {"laundering", a.laundering},
                {"pr_auc", IntervalJson(a.pr_auc)},
                {"at_review", {{"precision", num(a.at_threshold.precision())},
                               {"recall", num(a.at_threshold.recall())},
                               {"fpr", num(a.at_threshold.fpr())}}},
                {"max_fpr", a.max_fpr},
                {"recall_at_max_fpr", num(a.at_max_fpr.at.recall())},
                {"at_account_alert_score", {{"precision", num(a.at_alert_score.precision())},
                                            {"recall", num(a.at_alert_score.recall())},
                                            {"fpr", num(a.at_alert_score.fpr())}}}};
  }
  const Json account_alert_score =
      std::isfinite(r.account_alert_score) ? Json(r.account_alert_score) : Json(nullptr);
  Json card = {
      {"model", "model.json"},
      {"created_utc", FormatUtc(RealClock().Now())},
      {"feature_schema_version", engine_schema ? Json(schema->version()) : Json(nullptr)},
      {"features", history.names},
      {"features_dropped", dropped},
      {"training_data",
       {{"path", std::filesystem::path(flags.features).filename().string()},
        {"sha256", Sha256Hex(bytes.str())},
        {"rows", rows->rows()},
        {"unlabelled_rows_left_out", unlabelled}}},
      {"split",
       {{"by", "event time"},
        {"shares", flags.split},
        {"train", PartJson(r.train)},
        {"validation", PartJson(r.validation)},
        {"test", PartJson(r.test)}}},
      {"params",
       {{"objective", "binary:logistic"},
        {"tree_method", "hist"},
        {"max_depth", flags.depth},
        {"eta", flags.eta},
        {"subsample", flags.subsample},
        {"colsample_bytree", flags.colsample},
        {"scale_pos_weight", r.model.scale_pos_weight},
        {"seed", flags.seed},
        {"early_stopping_rounds", flags.early_stopping}}},
      {"trees", r.model.rounds},
      {"rounds_tried", r.model.rounds_tried()},
      {"xgboost_version", training::XgboostVersion()},
      {"thresholds",
       {{"review", r.review_threshold},
        {"block", r.block_threshold},
        {"review_chosen_by", r.review_chosen_by},
        {"review_alerts_per_day", {{"validation", r.validation_alerts_per_day},
                                   {"test", r.test_alerts_per_day}}},
        {"review_alerted_account_share",
         {{"validation", std::isfinite(r.validation_alerted_account_share)
                             ? Json(r.validation_alerted_account_share)
                             : Json(nullptr)},
          {"test", std::isfinite(r.test_alerted_account_share) ? Json(r.test_alerted_account_share)
                                                               : Json(nullptr)}}},
        {"account_alert_score", account_alert_score}}},
      {"metrics",
       {{"validation", {{"pr_auc", r.model.best_validation_pr_auc()}}},
        {"test",
         {{"pr_auc", IntervalJson(r.test_pr_auc)},
          {"base_rate", r.test_base_rate},
          {"at_review", ConfusionJson(r.test_at_review)},
          {"amount_bands", bands},
          {"accounts", accounts}}}}},
      {"feature_importance", importance},
      {"baselines", baselines},
      {"gate", {{"passed", r.gate_passed}, {"reason", r.gate}, {"margin", flags.baseline_margin}}}};
  Json thresholds = {
      {"review", r.review_threshold},
      {"block", r.block_threshold},
      {"account_alert_score", account_alert_score},
      {"chosen_by", absl::StrCat("review: ", r.review_chosen_by,
                                 "; block: lowest threshold with precision >= ",
                                 options.block_precision, " on validation")}};

  // The drift reference (docs/drift.md): the training rows' columns, and the model's score on
  // validation, each with event times for the dispersion. Only rows of the engine's schema have
  // one: the drift monitor binds a profile to the schema it was built on.
  const auto seconds_of = [&](size_t i) { return ToUnixMicros(times[i]) / 1'000'000; };
  std::vector<double> train_values;
  std::vector<int64_t> train_seconds, valid_seconds;
  const size_t kept_width = history.names.size();
  for (size_t i : r.train.rows) {
    train_values.insert(train_values.end(), history.values.begin() + i * kept_width,
                        history.values.begin() + (i + 1) * kept_width);
    train_seconds.push_back(seconds_of(i));
  }
  for (size_t i : r.validation.rows) valid_seconds.push_back(seconds_of(i));
  const std::string profile =
      engine_schema ? drift::ReferenceProfileJson(schema->version(), history.names, train_values,
                                                  train_seconds, r.validation_scores,
                                                  valid_seconds)
                    : "";

  std::error_code ec;
  std::filesystem::create_directories(flags.out_dir, ec);
  const std::filesystem::path dir(flags.out_dir);
  std::vector<std::pair<std::string, std::string>> files = {
      {"model.json", r.model.model_json},
      {"thresholds.json", thresholds.dump(2) + "\n"},
      {"model_card.json", card.dump(2) + "\n"}};
  if (!profile.empty()) files.emplace_back("reference_profile.json", profile);
  for (const auto& [name, text] : files) {
    if (absl::Status s = WriteText(dir / name, text); !s.ok()) return Fail(s.message());
  }

  std::cout << absl::StrFormat(
      "trained on %d rows (%d laundering), %s .. %s; validated on %d (%d), tested on %d (%d), "
      "%s .. %s\n",
      r.train.rows.size(), r.train.positives, FormatUtc(r.train.from), FormatUtc(r.train.until),
      r.validation.rows.size(), r.validation.positives, r.test.rows.size(), r.test.positives,
      FormatUtc(r.test.from), FormatUtc(r.test.until));
  std::cout << absl::StrFormat(
      "model: %d trees (of %d tried); thresholds review %.4f (%s; %.1f alerts a day on "
      "validation, %.1f on test), block %.4f\n",
      r.model.rounds, r.model.rounds_tried(), r.review_threshold, r.review_chosen_by,
      r.validation_alerts_per_day, r.test_alerts_per_day, r.block_threshold);
  if (std::isfinite(r.validation_alerted_account_share)) {
    std::cout << absl::StrFormat(
        "alerts at review touch %.2f%% of the accounts on validation, %.2f%% on test\n",
        100 * r.validation_alerted_account_share, 100 * r.test_alerted_account_share);
  }
  std::cout << absl::StrFormat(
      "test: PR-AUC %.4f [%.4f, %.4f] (base rate %.4f); at review: precision %.3f, recall %.3f, "
      "F1 %.3f\n",
      r.test_pr_auc.estimate, r.test_pr_auc.low, r.test_pr_auc.high, r.test_base_rate,
      r.test_at_review.precision(), r.test_at_review.recall(), r.test_at_review.f1());
  if (r.test_accounts.has_value()) {
    const evaluation::AccountEvaluation& a = *r.test_accounts;
    std::cout << absl::StrFormat(
        "  accounts: %d (%d laundering), PR-AUC %.4f [%.4f, %.4f]; at review recall %.3f, FPR "
        "%.4f; recall at FPR <= %g: %.3f\n",
        a.accounts, a.laundering, a.pr_auc.estimate, a.pr_auc.low, a.pr_auc.high,
        a.at_threshold.recall(), a.at_threshold.fpr(), a.max_fpr, a.at_max_fpr.at.recall());
    if (std::isfinite(r.account_alert_score)) {
      std::cout << absl::StrFormat(
          "  account alert score %.4f (the lowest with account FPR <= %g on validation; the "
          "policy's accounts.alert_score): on test recall %.3f, precision %.3f, FPR %.4f\n",
          r.account_alert_score, a.max_fpr, a.at_alert_score.recall(),
          a.at_alert_score.precision(), a.at_alert_score.fpr());
    }
  }
  for (const evaluation::SliceFigures& f : r.test_amount_bands) {
    std::cout << absl::StrFormat(
        "  amount %s: %d rows (%d laundering), PR-AUC %.4f [%.4f, %.4f], at review recall %.3f\n",
        f.name, f.rows, f.positives, f.pr_auc.estimate, f.pr_auc.low, f.pr_auc.high,
        f.at_threshold.recall());
  }
  for (const training::Baseline& b : r.baselines) {
    std::cout << absl::StrFormat("baseline '%s' alone (%s is riskier): test PR-AUC %.4f [%.4f, %.4f]\n",
                                 b.feature, b.higher_is_riskier ? "higher" : "lower",
                                 b.test_pr_auc.estimate, b.test_pr_auc.low, b.test_pr_auc.high);
  }
  std::cout << (r.gate_passed ? "gate: passed: " : "gate: FAILED: ") << r.gate << "\n";
  std::cout << "wrote model.json, thresholds.json, model_card.json"
            << (profile.empty() ? " (no drift reference: the rows are not vigil's feature schema)"
                                : ", reference_profile.json")
            << " to " << flags.out_dir << "\n";
  return r.gate_passed ? kExitOk : kExitInputRejected;
}

}  // namespace vigil::cli
