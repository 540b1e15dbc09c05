#include "vigil/evaluation/account_evaluation.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "vigil/common/check.h"

namespace vigil::evaluation {

namespace {

struct AccountRows {
  std::vector<double> score;
  std::vector<uint8_t> label;
};

AccountRows ScoreAccounts(absl::Span<const double> scores, absl::Span<const uint8_t> labels,
                          absl::Span<const std::string> originators,
                          absl::Span<const std::string> beneficiaries) {
  VIGIL_CHECK(scores.size() == labels.size());
  VIGIL_CHECK(originators.size() == scores.size() && beneficiaries.size() == scores.size());
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<double> account_score;
  std::vector<uint8_t> account_label;
  const auto touch = [&](const std::string& account, double score, uint8_t label) {
    if (account.empty()) return;
    auto [it, inserted] = index.try_emplace(account, account_score.size());
    if (inserted) {
      account_score.push_back(score);
      account_label.push_back(label != 0);
      return;
    }
    account_score[it->second] = std::max(account_score[it->second], score);
    account_label[it->second] = account_label[it->second] || label != 0;
  };
  for (size_t i = 0; i < scores.size(); ++i) {
    touch(originators[i], scores[i], labels[i]);
    if (beneficiaries[i] != originators[i]) touch(beneficiaries[i], scores[i], labels[i]);
  }
  return {std::move(account_score), std::move(account_label)};
}

}  // namespace

ThresholdChoice AccountThresholdAtFpr(absl::Span<const double> scores,
                                      absl::Span<const uint8_t> labels,
                                      absl::Span<const std::string> originators,
                                      absl::Span<const std::string> beneficiaries, double max_fpr) {
  const AccountRows a = ScoreAccounts(scores, labels, originators, beneficiaries);
  return RecallAtFpr(a.score, a.label, max_fpr);
}

AccountEvaluation EvaluateAccounts(absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels,
                                   absl::Span<const std::string> originators,
                                   absl::Span<const std::string> beneficiaries,
                                   const AccountEvaluationOptions& options) {
  const AccountRows rows = ScoreAccounts(scores, labels, originators, beneficiaries);
  const std::vector<double>& account_score = rows.score;
  const std::vector<uint8_t>& account_label = rows.label;
  AccountEvaluation out;
  out.accounts = account_score.size();
  for (uint8_t l : account_label) out.laundering += l;
  out.max_fpr = options.max_fpr;
  out.pr_auc = BootstrapInterval(account_score, account_label, AveragePrecision,
                                 options.bootstrap_resamples, options.seed);
  out.at_threshold = ConfusionAt(account_score, account_label, options.threshold);
  out.at_max_fpr = RecallAtFpr(account_score, account_label, options.max_fpr);
  if (!std::isnan(options.alert_score)) {
    out.at_alert_score = ConfusionAt(account_score, account_label, options.alert_score);
  }
  return out;
}

}  // namespace vigil::evaluation
