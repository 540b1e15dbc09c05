#include "vigil/evaluation/backtest.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/evaluation/detection_metrics.h"

namespace vigil::evaluation {

void Backtest::Add(const Transaction& tx, const Decision& d) {
  ++s_.decisions;
  const bool alert = d.action != Action::kAllow;
  const bool labelled = tx.label.has_value();
  const bool positive = labelled && tx.label->is_laundering;
  const std::string label = !labelled ? "unlabelled" : positive ? "laundering" : "normal";
  ++s_.by_action_and_label[std::string(ActionName(d.action))][label];
  if (labelled) {
    ++s_.labelled;
    if (alert && positive) ++s_.true_positives;
    if (alert && !positive) ++s_.false_positives;
    if (!alert && positive) ++s_.false_negatives;
    if (!alert && !positive) ++s_.true_negatives;
    if (positive && !tx.label->typology.empty()) {
      BacktestSummary::Typology& t = s_.by_typology[tx.label->typology];
      ++t.positives;
      t.alerted += alert;
    }
  }
  const int64_t day = ToUnixMicros(tx.event_time) / 86'400'000'000;
  days_[day] = true;
  if (alert) ++alerts_by_day_[day];
  for (const Reason& r : d.reasons) {
    if (r.kind == Reason::Kind::kRule) {
      BacktestSummary::RuleHits& h = s_.rules[r.code];
      ++h.hits;
      h.on_positives += positive;
      h.shadow = r.shadow;
    } else if (r.kind == Reason::Kind::kModel && r.code == "score") {
      ++s_.score_alerts;
    }
  }
  s_.degraded += d.degraded;
  if (labelled) {
    AddAccount(tx.originator, d.originator_account, positive, d);
    if (tx.beneficiary.bank_id != tx.originator.bank_id ||
        tx.beneficiary.account_id != tx.originator.account_id) {
      AddAccount(tx.beneficiary, d.beneficiary_account, positive, d);
    }
  }
}

void Backtest::AddAccount(const Party& party, const AccountStanding& standing, bool positive,
                          const Decision& d) {
  if (party.account_id.empty()) return;
  AccountTally& a = accounts_[absl::StrCat(party.bank_id, "\x1f", party.account_id)];
  if (!std::isnan(d.score)) a.max_score = std::max(a.max_score, d.score);
  a.laundering |= positive;
  a.payment_alerted |= d.action != Action::kAllow;
  if (d.accounts_scored && standing.alert) {
    a.alerted = true;
    ++account_alerts_;
  }
}

BacktestSummary Backtest::Summary() const {
  BacktestSummary s = s_;
  const auto ratio = [](int64_t a, int64_t b) {
    return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
  };
  s.precision = ratio(s.true_positives, s.true_positives + s.false_positives);
  s.recall = ratio(s.true_positives, s.true_positives + s.false_negatives);
  s.f1 = s.precision + s.recall == 0 ? 0 : 2 * s.precision * s.recall / (s.precision + s.recall);
  for (auto& [name, t] : s.by_typology) t.recall = ratio(t.alerted, t.positives);
  for (auto& [id, h] : s.rules) h.precision = ratio(h.on_positives, h.hits);
  s.days = static_cast<int64_t>(days_.size());
  int64_t alerts = 0;
  for (const auto& [day, n] : alerts_by_day_) {
    alerts += n;
    s.max_alerts_in_a_day = std::max(s.max_alerts_in_a_day, n);
  }
  s.alerts_per_day = ratio(alerts, s.days);

  BacktestSummary::Accounts& a = s.accounts;
  std::vector<double> scores;
  std::vector<uint8_t> labels;
  scores.reserve(accounts_.size());
  labels.reserve(accounts_.size());
  bool scored = false;
  for (const auto& [key, t] : accounts_) {
    ++a.accounts;
    a.laundering += t.laundering;
    a.alerted += t.alerted;
    a.alerted_laundering += t.alerted && t.laundering;
    a.payment_alerted += t.payment_alerted;
    a.payment_alerted_laundering += t.payment_alerted && t.laundering;
    scored |= t.max_score >= 0;
    scores.push_back(t.max_score);
    labels.push_back(t.laundering ? 1 : 0);
  }
  const int64_t normal = a.accounts - a.laundering;
  a.alerts = account_alerts_;
  a.recall = ratio(a.alerted_laundering, a.laundering);
  a.precision = ratio(a.alerted_laundering, a.alerted);
  a.false_positive_rate = ratio(a.alerted - a.alerted_laundering, normal);
  a.alerts_per_day = ratio(a.alerts, s.days);
  a.payment_recall = ratio(a.payment_alerted_laundering, a.laundering);
  a.payment_precision = ratio(a.payment_alerted_laundering, a.payment_alerted);
  a.payment_false_positive_rate = ratio(a.payment_alerted - a.payment_alerted_laundering, normal);
  if (scored && a.laundering > 0) {
    // Accounts sorted by key: the interval does not depend on the hash map's order.
    std::vector<size_t> order(scores.size());
    std::vector<std::string_view> keys;
    keys.reserve(accounts_.size());
    for (const auto& [key, t] : accounts_) keys.push_back(key);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return keys[x] < keys[y]; });
    std::vector<double> sorted_scores(order.size());
    std::vector<uint8_t> sorted_labels(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      sorted_scores[i] = scores[order[i]];
      sorted_labels[i] = labels[order[i]];
    }
    const Interval pr = BootstrapInterval(
        sorted_scores, sorted_labels,
        [](absl::Span<const double> x, absl::Span<const uint8_t> y) {
          return AveragePrecision(x, y);
        },
        200, 1);
    a.scored = true;
    a.pr_auc = pr.estimate;
    a.pr_auc_low = pr.low;
    a.pr_auc_high = pr.high;
  }
  return s;
}

void PolicyComparer::Add(const Transaction& tx, const Decision& baseline,
                         const Decision& candidate) {
  candidate_.Add(tx, candidate);
  if (baseline.action == candidate.action) {
    ++c_.unchanged;
    return;
  }
  PolicyComparison::Change& change =
      c_.changes[absl::StrCat(ActionName(baseline.action), "→", ActionName(candidate.action))];
  ++change.count;
  if (change.examples.size() < kExamples) {
    std::string example = tx.id + ":";
    for (const Reason& r : candidate.reasons) {
      if (r.kind == Reason::Kind::kRule && !r.shadow) absl::StrAppend(&example, " ", r.code);
      if (r.kind == Reason::Kind::kModel && r.code == "score") absl::StrAppend(&example, " score");
    }
    if (tx.label.has_value() && tx.label->is_laundering) example += " [laundering]";
    change.examples.push_back(std::move(example));
  }
}

PolicyComparison PolicyComparer::Summary(std::string baseline_version,
                                         std::string candidate_version) const {
  PolicyComparison c = c_;
  c.baseline_version = std::move(baseline_version);
  c.candidate_version = std::move(candidate_version);
  c.candidate = candidate_.Summary();
  return c;
}

nlohmann::json ComparisonToJson(const PolicyComparison& c) {
  nlohmann::json changes = nlohmann::json::object();
  for (const auto& [cell, change] : c.changes) {
    changes[cell] = {{"count", change.count}, {"examples", change.examples}};
  }
  return {{"baseline_version", c.baseline_version},
          {"candidate_version", c.candidate_version},
          {"unchanged", c.unchanged},
          {"changes", changes},
          {"candidate_backtest", BacktestToJson(c.candidate)}};
}

std::string ComparisonToText(const PolicyComparison& c) {
  std::string out = absl::StrFormat("compared with policy %s\n", c.candidate_version);
  absl::StrAppendFormat(&out, "  unchanged    %d decisions\n", c.unchanged);
  for (const auto& [cell, change] : c.changes) {
    absl::StrAppendFormat(&out, "  %-16s %d\n", cell, change.count);
    for (const std::string& e : change.examples) absl::StrAppendFormat(&out, "      e.g. %s\n", e);
  }
  out += "  the candidate's backtest:\n";
  out += BacktestToText(c.candidate);
  return out;
}

namespace {

nlohmann::json AccountsToJson(const BacktestSummary::Accounts& a) {
  nlohmann::json j = {
      {"accounts", a.accounts},
      {"laundering", a.laundering},
      {"account_alerts",
       {{"alerts", a.alerts},
        {"alerts_per_day", a.alerts_per_day},
        {"accounts_alerted", a.alerted},
        {"laundering_alerted", a.alerted_laundering},
        {"recall", a.recall},
        {"precision", a.precision},
        {"false_positive_rate", a.false_positive_rate}}},
      {"payment_alerts",
       {{"accounts_alerted", a.payment_alerted},
        {"laundering_alerted", a.payment_alerted_laundering},
        {"recall", a.payment_recall},
        {"precision", a.payment_precision},
        {"false_positive_rate", a.payment_false_positive_rate}}}};
  if (a.scored) j["pr_auc"] = {{"estimate", a.pr_auc}, {"low", a.pr_auc_low}, {"high", a.pr_auc_high}};
  return j;
}

}  // namespace

nlohmann::json BacktestToJson(const BacktestSummary& s) {
  nlohmann::json typologies = nlohmann::json::object();
  for (const auto& [name, t] : s.by_typology) {
    typologies[name] = {{"positives", t.positives}, {"alerted", t.alerted}, {"recall", t.recall}};
  }
  nlohmann::json rules = nlohmann::json::object();
  for (const auto& [id, h] : s.rules) {
    rules[id] = {{"hits", h.hits},
                 {"on_laundering", h.on_positives},
                 {"precision", h.precision},
                 {"shadow", h.shadow}};
  }
  return {{"decisions", s.decisions},
          {"labelled", s.labelled},
          {"confusion",
           {{"true_positives", s.true_positives},
            {"false_positives", s.false_positives},
            {"false_negatives", s.false_negatives},
            {"true_negatives", s.true_negatives}}},
          {"precision", s.precision},
          {"recall", s.recall},
          {"f1", s.f1},
          {"by_action_and_label", s.by_action_and_label},
          {"by_typology", typologies},
          {"days", s.days},
          {"alerts_per_day", s.alerts_per_day},
          {"max_alerts_in_a_day", s.max_alerts_in_a_day},
          {"rules", rules},
          {"score_alerts", s.score_alerts},
          {"degraded", s.degraded},
          {"accounts", AccountsToJson(s.accounts)}};
}

std::string BacktestToText(const BacktestSummary& s, int top_rules) {
  std::string out;
  absl::StrAppendFormat(&out, "  decisions    %d (%d labelled)", s.decisions, s.labelled);
  if (s.degraded > 0) absl::StrAppendFormat(&out, ", %d degraded (rules only)", s.degraded);
  out += "\n";
  out += "               action      laundering      normal  unlabelled\n";
  for (const char* action : {"ALLOW", "REVIEW", "BLOCK"}) {
    const auto it = s.by_action_and_label.find(action);
    const auto get = [&](const char* label) -> int64_t {
      if (it == s.by_action_and_label.end()) return 0;
      const auto j = it->second.find(label);
      return j == it->second.end() ? 0 : j->second;
    };
    absl::StrAppendFormat(&out, "               %-8s %13d %11d %11d\n", action, get("laundering"),
                          get("normal"), get("unlabelled"));
  }
  if (s.labelled > 0) {
    absl::StrAppendFormat(&out,
                          "  quality      precision %.4f, recall %.4f, F1 %.4f (alert = REVIEW or "
                          "BLOCK; TP %d, FP %d, FN %d)\n",
                          s.precision, s.recall, s.f1, s.true_positives, s.false_positives,
                          s.false_negatives);
  }
  for (const auto& [name, t] : s.by_typology) {
    absl::StrAppendFormat(&out, "    typology   %-16s recall %.3f (%d of %d)\n", name, t.recall,
                          t.alerted, t.positives);
  }
  absl::StrAppendFormat(&out, "  alerts/day   %.1f over %d days (max %d)\n", s.alerts_per_day,
                        s.days, s.max_alerts_in_a_day);
  std::vector<std::pair<std::string, BacktestSummary::RuleHits>> rules(s.rules.begin(),
                                                                       s.rules.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.second.hits > b.second.hits; });
  if (!rules.empty()) out += "  rules fired  (hits, precision on labelled records)\n";
  for (size_t i = 0; i < rules.size() && static_cast<int>(i) < top_rules; ++i) {
    const auto& [id, h] = rules[i];
    absl::StrAppendFormat(&out, "               %-36s %9d  %.3f%s\n", id, h.hits, h.precision,
                          h.shadow ? "  (shadow)" : "");
  }
  if (s.score_alerts > 0) {
    absl::StrAppendFormat(&out, "  model score  crossed a threshold in %d decisions\n",
                          s.score_alerts);
  }
  const BacktestSummary::Accounts& a = s.accounts;
  if (a.accounts > 0) {
    absl::StrAppendFormat(&out, "  accounts     %d (%d laundering: send or receive a labelled payment)\n",
                          a.accounts, a.laundering);
    absl::StrAppendFormat(&out,
                          "    account alerts  %d raised (%.1f/day) on %d accounts: recall %.4f, "
                          "precision %.4f, FPR %.4f\n",
                          a.alerts, a.alerts_per_day, a.alerted, a.recall, a.precision,
                          a.false_positive_rate);
    absl::StrAppendFormat(&out,
                          "    payment alerts  on %d accounts: recall %.4f, precision %.4f, FPR "
                          "%.4f\n",
                          a.payment_alerted, a.payment_recall, a.payment_precision,
                          a.payment_false_positive_rate);
    if (a.scored) {
      absl::StrAppendFormat(&out, "    PR-AUC          %.4f [%.4f, %.4f] (accounts by their highest score)\n",
                            a.pr_auc, a.pr_auc_low, a.pr_auc_high);
    }
  }
  return out;
}

}  // namespace vigil::evaluation
