#include "vigil/evaluation/policy_tuner.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "vigil/common/clock.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/features/account_risk.h"

namespace vigil::evaluation {
namespace {

constexpr int64_t kMicrosPerDay = 86'400'000'000;

absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

Rate MakeRate(int64_t k, int64_t n) {
  Rate r;
  r.k = k;
  r.n = n;
  if (n == 0) return r;
  // Wilson score interval at 95% (z = 1.96).
  const double z = 1.959963984540054;
  const double p = static_cast<double>(k) / static_cast<double>(n);
  const double nn = static_cast<double>(n);
  const double denominator = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denominator;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denominator;
  r.value = p;
  r.low = std::max(0.0, centre - half);
  r.high = std::min(1.0, centre + half);
  return r;
}

// Tallies one part of the history.
class PartTally {
 public:
  explicit PartTally(size_t accounts) : account_(accounts) {}

  void Add(const Transaction& tx, const std::array<uint32_t, 2>& parties, Action action,
           const std::array<bool, 2>& account_alert) {
    if (!tx.label.has_value()) return;
    const bool positive = tx.label->is_laundering;
    const bool alert = action != Action::kAllow;
    ++payments_;
    laundering_ += positive;
    alerts_ += alert;
    true_alerts_ += alert && positive;
    for (int k = 0; k < 2; ++k) {
      if (k == 1 && parties[1] == parties[0]) break;
      Account& a = account_[parties[k]];
      a.seen = true;
      a.laundering |= positive;
      if (account_alert[k]) {
        a.alerted = true;
        ++account_alerts_;
      }
    }
  }

  TuningFigures Figures(double days) const {
    TuningFigures f;
    f.payments = payments_;
    f.laundering = laundering_;
    f.days = days;
    f.alerts = alerts_;
    f.alerts_per_day = days > 0 ? static_cast<double>(alerts_) / days : 0;
    f.recall = MakeRate(true_alerts_, laundering_);
    f.precision = MakeRate(true_alerts_, alerts_);
    int64_t alerted = 0, alerted_laundering = 0;
    for (const Account& a : account_) {
      if (!a.seen) continue;
      ++f.accounts;
      f.laundering_accounts += a.laundering;
      alerted += a.alerted;
      alerted_laundering += a.alerted && a.laundering;
    }
    f.account_alerts = account_alerts_;
    f.account_alerts_per_day = days > 0 ? static_cast<double>(account_alerts_) / days : 0;
    f.account_recall = MakeRate(alerted_laundering, f.laundering_accounts);
    f.account_precision = MakeRate(alerted_laundering, alerted);
    const int64_t normal = f.accounts - f.laundering_accounts;
    f.account_false_positive_rate =
        normal > 0 ? static_cast<double>(alerted - alerted_laundering) / static_cast<double>(normal)
                   : 0;
    return f;
  }

 private:
  struct Account {
    bool seen = false, laundering = false, alerted = false;
  };
  std::vector<Account> account_;
  int64_t payments_ = 0, laundering_ = 0, alerts_ = 0, true_alerts_ = 0, account_alerts_ = 0;
};

// UTC calendar days with at least one payment among rows [begin, end), as the backtest counts
// them (alerts per day = alerts / days).
double CalendarDays(const TuningHistory& h, size_t begin, size_t end) {
  int64_t days = 0, previous = INT64_MIN;
  for (size_t i = begin; i < end; ++i) {
    const int64_t t = ToUnixMicros(h.tx(i).event_time);
    const int64_t day = t >= 0 ? t / kMicrosPerDay : (t - kMicrosPerDay + 1) / kMicrosPerDay;
    days += day != previous;
    previous = day;
  }
  return static_cast<double>(days);
}

struct Split {
  size_t boundary = 0;  // rows [0, boundary) are searched, [boundary, n) held out
  double searched_days = 0, test_days = 0;
};

// Decides rows [0, stop) with "policy" and tallies [0, split.boundary) and [boundary, stop).
std::array<TuningFigures, 2> Evaluate(const Policy& policy, const PolicyInputLayout& layout,
                                      const TuningHistory& h, const Split& split, size_t stop,
                                      int64_t bucket_us) {
  PolicyInputs inputs(layout);
  std::vector<uint32_t> fired(policy.rules().size());
  std::vector<AccountRisk> risk(h.accounts());
  PartTally searched(h.accounts()), test(h.accounts());
  const AccountAlertThresholds& thresholds = policy.account_alerts();
  for (size_t i = 0; i < stop; ++i) {
    const Transaction& tx = h.tx(i);
    const double score = h.score(i);
    inputs.Set(tx, h.row(i), score);
    const size_t hits = policy.Evaluate(inputs.view(), absl::MakeSpan(fired));
    Action action = policy.ScoreDecision(score);
    bool rule_hit = false;
    for (size_t k = 0; k < hits; ++k) {
      const PolicyRule& rule = policy.rules()[fired[k]];
      action = std::max(action, DecisionOf(rule));
      rule_hit |= CountsForAccounts(rule);
    }
    std::array<bool, 2> alert = {false, false};
    if (thresholds.enabled()) {
      const int64_t t = ToUnixMicros(tx.event_time);
      const uint32_t tag = AccountRisk::TagOf(tx.id);
      const std::array<uint32_t, 2>& p = h.parties(i);
      for (int k = 0; k < 2; ++k) {
        if (k == 1 && p[1] == p[0]) break;
        alert[k] = risk[p[k]].Record(t, bucket_us, score, rule_hit, tag, thresholds).alert;
      }
    }
    (i < split.boundary ? searched : test).Add(tx, h.parties(i), action, alert);
  }
  return {searched.Figures(split.searched_days), test.Figures(split.test_days)};
}

// Replaces the value of each constant in "values" where the policy wrote it, and the version.
absl::StatusOr<std::string> Rewrite(std::string_view text, const Policy& policy,
                                    const std::map<std::string, double>& values,
                                    std::string_view version) {
  std::vector<std::string> lines = absl::StrSplit(A(text), '\n');
  for (const PolicyConstant& c : policy.constants()) {
    const auto v = values.find(c.name);
    if (v == values.end() || v->second == c.value) continue;
    if (c.line < 0 || static_cast<size_t>(c.line) >= lines.size()) {
      return absl::InternalError(absl::StrCat("constant '", c.name, "': no line ", c.line + 1));
    }
    std::string& line = lines[static_cast<size_t>(c.line)];
    const size_t at = static_cast<size_t>(c.column);
    if (line.compare(at, c.text.size(), c.text) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant '", c.name, "' (line ", c.line + 1,
                       "): write its value as a plain number to tune it"));
    }
    line.replace(at, c.text.size(), absl::StrFormat("%.10g", v->second));
  }
  bool replaced = false;
  for (std::string& line : lines) {
    if (line.rfind("version:", 0) == 0) {
      line = absl::StrCat("version: \"", A(version), "\"");
      replaced = true;
      break;
    }
  }
  if (!replaced) {
    return absl::InvalidArgumentError(
        "the policy's version must be written on a line of its own, 'version: ...', to tune it");
  }
  return absl::StrJoin(lines, "\n");
}

// The grid of a tunable's range: "grid" even steps, whole numbers when the range and the
// current value are whole (counts, days).
std::vector<double> Grid(const TunableConstant& t, double current, int grid) {
  const bool whole = t.low == std::floor(t.low) && t.high == std::floor(t.high) &&
                     current == std::floor(current);
  std::vector<double> values;
  for (int k = 0; k < grid; ++k) {
    double v = t.low + (t.high - t.low) * k / std::max(1, grid - 1);
    if (whole) v = std::round(v);
    values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// Whether "a" is a better choice than "b" on the searched part.
bool Better(const TuningFigures& a, const TuningFigures& b, const TuningOptions& o) {
  const bool accounts = o.unit == TuningOptions::Unit::kAccounts;
  const double load_a = accounts ? a.account_alerts_per_day : a.alerts_per_day;
  const double load_b = accounts ? b.account_alerts_per_day : b.alerts_per_day;
  const bool fits_a = load_a <= o.budget_per_day, fits_b = load_b <= o.budget_per_day;
  if (fits_a != fits_b) return fits_a;
  if (!fits_a) return load_a < load_b;  // neither fits: the closer to the budget
  const double recall_a = accounts ? a.account_recall.value : a.recall.value;
  const double recall_b = accounts ? b.account_recall.value : b.recall.value;
  if (recall_a != recall_b) return recall_a > recall_b;
  return load_a < load_b;
}

}  // namespace

uint32_t TuningHistory::AccountNumber(const Party& p) {
  const auto [it, inserted] = account_numbers_.try_emplace(
      absl::StrCat(p.bank_id, "\x1f", p.account_id), static_cast<uint32_t>(account_numbers_.size()));
  return it->second;
}

void TuningHistory::Add(const Transaction& tx, absl::Span<const double> row, double score) {
  txs_.push_back(tx);
  rows_.insert(rows_.end(), row.begin(), row.end());
  scores_.push_back(score);
  parties_.push_back({AccountNumber(tx.originator), AccountNumber(tx.beneficiary)});
}

absl::StatusOr<TuningResult> TunePolicy(std::string_view text, std::string_view file,
                                        std::string_view version, const PolicyInputLayout& layout,
                                        const ListLibrary& library, const TuningHistory& history,
                                        const TuningOptions& options) {
  if (!(options.budget_per_day > 0)) {
    return absl::InvalidArgumentError("the alert budget must be above 0 a day");
  }
  if (!(options.test_share > 0 && options.test_share < 1)) {
    return absl::InvalidArgumentError("the held-out share must be between 0 and 1");
  }
  if (history.width() != layout.schema().size()) {
    return absl::InvalidArgumentError(absl::StrCat("the history's rows have ", history.width(),
                                                   " columns, the policy's schema ",
                                                   layout.schema().size()));
  }
  auto original = Policy::Parse(text, file, layout, library);
  if (!original.ok()) return original.status();
  const Policy& policy = **original;
  if (policy.tunables().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        A(file), ": declares nothing tunable; add a 'tune:' section naming constants and their "
              "ranges (docs/policy.md, Tuning)"));
  }
  if (history.size() < 2) {
    return absl::InvalidArgumentError("the history holds fewer than 2 payments");
  }
  // The split by event time.
  const int64_t first = ToUnixMicros(history.tx(0).event_time);
  const int64_t last = ToUnixMicros(history.tx(history.size() - 1).event_time);
  const int64_t cut = last - static_cast<int64_t>(options.test_share * static_cast<double>(last - first));
  Split split;
  while (split.boundary < history.size() &&
         ToUnixMicros(history.tx(split.boundary).event_time) < cut) {
    ++split.boundary;
  }
  if (split.boundary == 0 || split.boundary == history.size()) {
    return absl::InvalidArgumentError(
        "the split by event time leaves a part empty: the history spans too short a time");
  }
  int64_t searched_laundering = 0;
  for (size_t i = 0; i < split.boundary; ++i) {
    const auto& label = history.tx(i).label;
    searched_laundering += label.has_value() && label->is_laundering;
  }
  if (searched_laundering == 0) {
    return absl::InvalidArgumentError(
        "the searched part of the history holds no payment labelled laundering: nothing to "
        "tune for");
  }
  split.searched_days = CalendarDays(history, 0, split.boundary);
  split.test_days = CalendarDays(history, split.boundary, history.size());
  const int64_t bucket_us = std::max<int64_t>(
      3'600'000'000, options.account_window.count() / AccountRisk::kBuckets);

  std::map<std::string, double> current;
  for (const TunableConstant& t : policy.tunables()) {
    for (const PolicyConstant& c : policy.constants()) {
      if (c.name == t.name) current[t.name] = c.value;
    }
  }
  TuningResult result;
  result.searched_span = absl::StrCat(FormatUtc(history.tx(0).event_time), " .. ",
                                      FormatUtc(history.tx(split.boundary - 1).event_time));
  result.test_span = absl::StrCat(FormatUtc(history.tx(split.boundary).event_time), " .. ",
                                  FormatUtc(history.tx(history.size() - 1).event_time));
  for (const TunableConstant& t : policy.tunables()) result.before.emplace_back(t.name, current[t.name]);

  const auto evaluate = [&](const std::map<std::string, double>& values,
                            size_t stop) -> absl::StatusOr<std::array<TuningFigures, 2>> {
    absl::StatusOr<std::string> candidate = Rewrite(text, policy, values, version);
    if (!candidate.ok()) return candidate.status();
    auto parsed = Policy::Parse(*candidate, file, layout, library);
    if (!parsed.ok()) return parsed.status();
    ++result.candidates;
    return Evaluate(**parsed, layout, history, split, stop, bucket_us);
  };
  absl::StatusOr<std::array<TuningFigures, 2>> best = evaluate(current, split.boundary);
  if (!best.ok()) return best.status();
  for (int round = 0; round < options.max_rounds; ++round) {
    bool changed = false;
    for (const TunableConstant& t : policy.tunables()) {
      for (double v : Grid(t, current[t.name], options.grid)) {
        if (v == current[t.name]) continue;
        std::map<std::string, double> candidate = current;
        candidate[t.name] = v;
        absl::StatusOr<std::array<TuningFigures, 2>> figures = evaluate(candidate, split.boundary);
        if (!figures.ok()) return figures.status();
        if (Better((*figures)[0], (*best)[0], options)) {
          best = figures;
          current = std::move(candidate);
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  for (const TunableConstant& t : policy.tunables()) result.after.emplace_back(t.name, current[t.name]);

  // Before and after over the whole history: the held-out part's account state has the searched
  // part's payments behind it, as it would in production.
  std::map<std::string, double> original_values;
  for (const auto& [name, value] : result.before) original_values[name] = value;
  absl::StatusOr<std::array<TuningFigures, 2>> before = evaluate(original_values, history.size());
  if (!before.ok()) return before.status();
  absl::StatusOr<std::array<TuningFigures, 2>> after = evaluate(current, history.size());
  if (!after.ok()) return after.status();
  result.searched_before = (*before)[0];
  result.test_before = (*before)[1];
  result.searched_after = (*after)[0];
  result.test_after = (*after)[1];
  const bool accounts = options.unit == TuningOptions::Unit::kAccounts;
  result.within_budget = (accounts ? result.searched_after.account_alerts_per_day
                                   : result.searched_after.alerts_per_day) <= options.budget_per_day;
  absl::StatusOr<std::string> tuned = Rewrite(text, policy, current, version);
  if (!tuned.ok()) return tuned.status();
  result.policy_text = *std::move(tuned);
  return result;
}

}  // namespace vigil::evaluation
