#include "vigil/training/history_training.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"

namespace vigil::training {
namespace {

LabelledRows Take(const LabelledRows& all, const std::vector<size_t>& rows) {
  LabelledRows out;
  out.names = all.names;
  const size_t w = all.names.size();
  out.values.reserve(rows.size() * w);
  out.labels.reserve(rows.size());
  for (size_t r : rows) {
    out.values.insert(out.values.end(), all.values.begin() + static_cast<std::ptrdiff_t>(r * w),
                      all.values.begin() + static_cast<std::ptrdiff_t>((r + 1) * w));
    out.labels.push_back(all.labels[r]);
  }
  return out;
}

// Column j of "rows" as a score: its values, NaN (missing) as the lowest risk, negated when
// lower values are riskier.
std::vector<double> ColumnScore(const LabelledRows& rows, size_t j, bool higher_is_riskier) {
  const size_t w = rows.names.size();
  std::vector<double> s(rows.rows());
  for (size_t i = 0; i < s.size(); ++i) {
    const double v = rows.values[i * w + j];
    s[i] = std::isnan(v) ? -HUGE_VAL : (higher_is_riskier ? v : -v);
  }
  return s;
}

// A part's span in days (at least one: a budget per day over a shorter part is a day's).
double Days(const SplitPart& part) {
  const double seconds =
      static_cast<double>(ToUnixMicros(part.until) - ToUnixMicros(part.from)) / 1e6;
  return std::max(1.0, seconds / 86'400);
}

// The lowest of the scores' thresholds at which at most "budget" rows score at or above it;
// above every score when even the highest exceeds the budget.
double LowestWithin(const std::vector<double>& scores, double budget) {
  std::vector<double> sorted(scores);
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double chosen = sorted.empty() ? HUGE_VAL : std::nextafter(sorted.front(), HUGE_VAL);
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;  // ties enter together
    if (static_cast<double>(j) > budget) break;
    chosen = sorted[i];
    i = j;
  }
  return chosen;
}

// The share of the accounts of "parties" that rows scoring at or above "threshold" touch.
double AlertedShare(const std::vector<double>& scores,
                    const std::vector<std::array<uint32_t, 2>>& parties, double threshold) {
  absl::flat_hash_set<uint32_t> all, alerted;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (uint32_t a : parties[i]) {
      all.insert(a);
      if (scores[i] >= threshold) alerted.insert(a);
    }
  }
  return all.empty() ? 0 : static_cast<double>(alerted.size()) / static_cast<double>(all.size());
}

// The lowest threshold whose alerts touch at most share × the accounts of "parties" (ties of
// score enter together, as in LowestWithin).
double LowestWithinAccounts(const std::vector<double>& scores,
                            const std::vector<std::array<uint32_t, 2>>& parties, double share) {
  absl::flat_hash_set<uint32_t> all;
  for (const auto& p : parties) all.insert(p.begin(), p.end());
  const double budget = share * static_cast<double>(all.size());
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  double chosen = order.empty() ? HUGE_VAL : std::nextafter(scores[order.front()], HUGE_VAL);
  // The set only grows; the group that overruns the budget ends the sweep, so it need not be
  // taken out again.
  absl::flat_hash_set<uint32_t> alerted;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) {
      alerted.insert(parties[order[j]].begin(), parties[order[j]].end());
      ++j;
    }
    if (static_cast<double>(alerted.size()) > budget) break;
    chosen = scores[order[i]];
    i = j;
  }
  return chosen;
}

}  // namespace

absl::StatusOr<std::vector<SplitPart>> SplitByEventTime(absl::Span<const UtcTime> times,
                                                         absl::Span<const uint8_t> labels,
                                                         double train_share,
                                                         double validation_share) {
  if (!(train_share > 0 && validation_share > 0 && train_share + validation_share < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "split: the training share (%g) and the validation share (%g) must be positive and "
        "leave a test part (sum below 1)",
        train_share, validation_share));
  }
  const size_t n = times.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return times[a] < times[b]; });
  // A cut moves forward past rows of the same event time as the row before it.
  const auto cut_at = [&](size_t k) {
    k = std::min(k, n);
    while (k > 0 && k < n && times[order[k]] == times[order[k - 1]]) ++k;
    return k;
  };
  const size_t first = cut_at(static_cast<size_t>(std::floor(train_share * static_cast<double>(n))));
  const size_t second = cut_at(std::max(
      first, static_cast<size_t>(std::floor((train_share + validation_share) *
                                            static_cast<double>(n)))));
  std::vector<SplitPart> parts(3);
  const size_t bounds[4] = {0, first, second, n};
  const char* names[3] = {"training", "validation", "test"};
  for (int p = 0; p < 3; ++p) {
    SplitPart& part = parts[static_cast<size_t>(p)];
    part.rows.assign(order.begin() + static_cast<std::ptrdiff_t>(bounds[p]),
                     order.begin() + static_cast<std::ptrdiff_t>(bounds[p + 1]));
    if (part.rows.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "split: the ", names[p], " part is empty (", n,
          " rows; rows of one event time stay together): give more history"));
    }
    for (size_t r : part.rows) part.positives += labels[r] != 0;
    part.from = times[part.rows.front()];
    part.until = times[part.rows.back()];
  }
  return parts;
}

absl::StatusOr<TrainingReport> TrainOnHistory(
    const LabelledRows& history, absl::Span<const UtcTime> times,
    const HistoryTrainingOptions& options, absl::Span<const double> amounts,
    absl::Span<const std::array<uint32_t, 2>> parties) {
  const bool with_parties = !parties.empty();
  if (with_parties && parties.size() != history.rows()) {
    return absl::InvalidArgumentError("parties: one pair of accounts per row is needed");
  }
  if (options.alerted_account_share > 0 && !with_parties) {
    return absl::InvalidArgumentError(
        "an alert budget as a share of accounts needs each row's originator and beneficiary "
        "(rows from vigil replay --features-out carry them)");
  }
  if (times.size() != history.rows()) {
    return absl::InvalidArgumentError("history: one event time per row is needed");
  }
  absl::StatusOr<std::vector<SplitPart>> parts =
      SplitByEventTime(times, history.labels, options.train_share, options.validation_share);
  if (!parts.ok()) return parts.status();
  TrainingReport report;
  report.train = std::move((*parts)[0]);
  report.validation = std::move((*parts)[1]);
  report.test = std::move((*parts)[2]);
  if (report.test.positives == 0) {
    return absl::InvalidArgumentError(
        "split: the test part holds no laundering row, so nothing could be measured; give a "
        "longer history or a larger test share");
  }
  const LabelledRows train = Take(history, report.train.rows);
  const LabelledRows valid = Take(history, report.validation.rows);
  const LabelledRows test = Take(history, report.test.rows);
  absl::StatusOr<TrainedClassifier> model = TrainClassifier(train, valid, options.xgboost);
  if (!model.ok()) return model.status();
  report.model = *std::move(model);

  // Thresholds on validation: the rows the model stopped on but never trained on.
  absl::StatusOr<std::vector<float>> pv =
      XgboostProbabilities(report.model.model_json, valid.values, valid.names.size());
  if (!pv.ok()) return pv.status();
  report.validation_scores.assign(pv->begin(), pv->end());
  const std::vector<double>& valid_scores = report.validation_scores;
  const auto parties_of = [&](const SplitPart& part) {
    std::vector<std::array<uint32_t, 2>> out;
    if (with_parties) {
      for (size_t r : part.rows) out.push_back(parties[r]);
    }
    return out;
  };
  const std::vector<std::array<uint32_t, 2>> valid_parties = parties_of(report.validation);
  if (options.alerts_per_day > 0 || options.alerted_account_share > 0) {
    report.review_threshold = -HUGE_VAL;
    std::vector<std::string> by;
    if (options.alerts_per_day > 0) {
      const double budget = options.alerts_per_day * Days(report.validation);
      report.review_threshold = LowestWithin(valid_scores, budget);
      by.push_back(absl::StrFormat("at most %g alerts a day", options.alerts_per_day));
    }
    if (options.alerted_account_share > 0) {
      report.review_threshold =
          std::max(report.review_threshold,
                   LowestWithinAccounts(valid_scores, valid_parties, options.alerted_account_share));
      by.push_back(absl::StrFormat("alerts touching at most %g%% of the accounts",
                                   100 * options.alerted_account_share));
    }
    report.review_chosen_by = absl::StrCat("the lowest threshold with ", absl::StrJoin(by, " and "),
                                           " on validation");
  } else {
    report.review_threshold = evaluation::BestF1(valid_scores, valid.labels).threshold;
    report.review_chosen_by = "the best F1 on validation";
  }
  {
    const evaluation::Confusion c =
        evaluation::ConfusionAt(valid_scores, valid.labels, report.review_threshold);
    report.validation_alerts_per_day =
        static_cast<double>(c.tp + c.fp) / Days(report.validation);
  }
  report.block_threshold = report.review_threshold;
  {
    // The lowest threshold (at or above review) whose validation precision reaches the bound.
    std::vector<double> candidates(valid_scores);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (double t : candidates) {
      if (t < report.review_threshold) continue;
      const double precision = evaluation::ConfusionAt(valid_scores, valid.labels, t).precision();
      if (precision >= options.block_precision) {
        report.block_threshold = t;
        break;
      }
    }
  }

  // Reported on test only.
  absl::StatusOr<std::vector<float>> pt =
      XgboostProbabilities(report.model.model_json, test.values, test.names.size());
  if (!pt.ok()) return pt.status();
  const std::vector<double> test_scores(pt->begin(), pt->end());
  report.test_base_rate =
      static_cast<double>(report.test.positives) / static_cast<double>(test.rows());
  report.test_pr_auc =
      evaluation::BootstrapInterval(test_scores, test.labels, evaluation::AveragePrecision,
                                    options.bootstrap_resamples, options.bootstrap_seed);
  report.test_at_review = evaluation::ConfusionAt(test_scores, test.labels,
                                                  report.review_threshold);
  report.test_alerts_per_day =
      static_cast<double>(report.test_at_review.tp + report.test_at_review.fp) /
      Days(report.test);
  if (with_parties) {
    std::vector<std::string> originators, beneficiaries;
    for (size_t r : report.test.rows) {
      originators.push_back(std::to_string(parties[r][0]));
      beneficiaries.push_back(std::to_string(parties[r][1]));
    }
    {
      std::vector<std::string> valid_originators, valid_beneficiaries;
      for (const std::array<uint32_t, 2>& p : valid_parties) {
        valid_originators.push_back(std::to_string(p[0]));
        valid_beneficiaries.push_back(std::to_string(p[1]));
      }
      report.account_alert_score =
          evaluation::AccountThresholdAtFpr(valid_scores, valid.labels, valid_originators,
                                            valid_beneficiaries, options.account_max_fpr)
              .threshold;
    }
    evaluation::AccountEvaluationOptions accounts;
    accounts.threshold = report.review_threshold;
    accounts.alert_score = report.account_alert_score;
    accounts.max_fpr = options.account_max_fpr;
    accounts.bootstrap_resamples = options.bootstrap_resamples;
    accounts.seed = options.bootstrap_seed;
    report.test_accounts = evaluation::EvaluateAccounts(test_scores, test.labels, originators,
                                                        beneficiaries, accounts);
    report.validation_alerted_account_share =
        AlertedShare(valid_scores, valid_parties, report.review_threshold);
    report.test_alerted_account_share =
        AlertedShare(test_scores, parties_of(report.test), report.review_threshold);
  } else {
    report.validation_alerted_account_share = report.test_alerted_account_share = std::nan("");
  }
  const auto amount_it =
      std::find(history.names.begin(), history.names.end(), options.amount_column);
  if (amount_it != history.names.end() || amounts.size() == history.rows()) {
    const auto j = static_cast<size_t>(amount_it - history.names.begin());
    std::vector<double> test_amounts(test.rows());
    for (size_t i = 0; i < test.rows(); ++i) {
      test_amounts[i] = amounts.size() == history.rows() ? amounts[report.test.rows[i]]
                                                         : test.values[i * test.names.size() + j];
    }
    evaluation::PaymentEvaluationOptions bands;
    bands.threshold = report.review_threshold;
    bands.bootstrap_resamples = options.bootstrap_resamples;
    bands.seed = options.bootstrap_seed;
    report.test_amount_bands =
        evaluation::EvaluatePayments(test_scores, test.labels, {}, test_amounts, bands).amount_bands;
  }

  // One-feature baselines: direction and ranking on validation, figures on test.
  std::vector<Baseline> all;
  for (size_t j = 0; j < history.names.size(); ++j) {
    Baseline b;
    b.feature = history.names[j];
    const double up = evaluation::AveragePrecision(ColumnScore(valid, j, true), valid.labels);
    const double down = evaluation::AveragePrecision(ColumnScore(valid, j, false), valid.labels);
    b.higher_is_riskier = !(down > up);
    b.validation_pr_auc = std::max(up, down);
    all.push_back(std::move(b));
  }
  std::stable_sort(all.begin(), all.end(), [](const Baseline& a, const Baseline& b) {
    return a.validation_pr_auc > b.validation_pr_auc;
  });
  std::vector<Baseline> kept(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(
                                                         std::min<size_t>(3, all.size())));
  for (const std::string& name : options.named_baselines) {
    const auto in = [&](const Baseline& b) { return b.feature == name; };
    if (std::any_of(kept.begin(), kept.end(), in)) continue;
    const auto it = std::find_if(all.begin(), all.end(), in);
    if (it != all.end()) kept.push_back(*it);
  }
  all = std::move(kept);
  for (Baseline& b : all) {
    const size_t j = static_cast<size_t>(
        std::find(history.names.begin(), history.names.end(), b.feature) - history.names.begin());
    b.test_pr_auc = evaluation::BootstrapInterval(ColumnScore(test, j, b.higher_is_riskier),
                                                  test.labels, evaluation::AveragePrecision,
                                                  options.bootstrap_resamples,
                                                  options.bootstrap_seed);
  }
  report.baselines = std::move(all);

  double best_baseline = report.test_base_rate;
  std::string best_name = "the base rate";
  for (const Baseline& b : report.baselines) {
    if (b.test_pr_auc.estimate > best_baseline) {
      best_baseline = b.test_pr_auc.estimate;
      best_name = absl::StrCat("'", b.feature, "' alone");
    }
  }
  report.gate_passed = report.test_pr_auc.estimate >= best_baseline + options.baseline_margin;
  report.gate = absl::StrFormat(
      "test PR-AUC %.4f %s %s (%.4f) by %s %.2f: %s", report.test_pr_auc.estimate,
      report.gate_passed ? "beats" : "does not beat", best_name, best_baseline,
      report.gate_passed ? "at least" : "the required", options.baseline_margin,
      report.gate_passed ? "the model adds to what one column says"
                         : "the model may have learned little more than one column (or the "
                           "data's artefact); do not deploy it without review");
  return report;
}

}  // namespace vigil::training
