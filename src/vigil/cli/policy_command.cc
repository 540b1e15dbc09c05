#include "vigil/cli/policy_command.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/data_files.h"
#include "vigil/common/clock.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/engine/replay.h"
#include "vigil/evaluation/policy_tuner.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/rules/policy.h"

namespace vigil::cli {
namespace {

struct PolicyFlags {
  std::string file;
  std::string other;
  std::string lists;  // empty: <policy's directory>/lists when it exists
  std::string data_dir;
  std::string author;
  int64_t id = 0;
  bool activate = false;
  // check --stream: replay this labelled or unlabelled stream and report each rule's firing.
  std::string stream;
  std::string fx_rates;
  double most_traffic = 0.5;
  // tune
  std::string budget;  // "N" or "N/day"
  std::string unit = "payments";
  std::string out;
  std::string version;
  std::string model;
  std::string json_out;
  double test_share = 0.2;
  int grid = 9;
};

std::string Author(const PolicyFlags& flags) {
  if (!flags.author.empty()) return flags.author;
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? user : "unknown";
}

std::unique_ptr<PolicyStore> OpenStore(const PolicyFlags& flags, const char* command) {
  auto library = LoadListLibrary(flags.lists, flags.file);
  if (!library.ok()) {
    std::cerr << command << ": " << library.status().message() << "\n";
    return nullptr;
  }
  auto store = OpenPolicyStore(flags.data_dir, *std::move(library), RealClock());
  if (!store.ok()) {
    std::cerr << command << ": " << store.status().message() << "\n";
    return nullptr;
  }
  return *std::move(store);
}

int Fail(const char* command, const absl::Status& s) {
  std::cerr << command << ": " << s.message() << "\n";
  return s.code() == absl::StatusCode::kInvalidArgument ||
                 s.code() == absl::StatusCode::kNotFound ||
                 s.code() == absl::StatusCode::kFailedPrecondition
             ? kExitInputRejected
             : kExitUsage;
}

int RunAdd(const PolicyFlags& flags) {
  constexpr char kCommand[] = "vigil policy add";
  auto store = OpenStore(flags, kCommand);
  if (store == nullptr) return kExitUsage;
  std::ifstream in(flags.file, std::ios::binary);
  if (!in) return Fail(kCommand, absl::NotFoundError(flags.file + ": cannot open"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto entry = store->Add(text, flags.file, Author(flags));
  if (!entry.ok()) {
    std::cerr << entry.status().message() << "\n";
    return kExitInputRejected;
  }
  std::cout << "stored as id " << entry->id << ": version " << entry->version << ", sha256 "
            << entry->sha256 << ", by " << entry->author << "\n";
  if (flags.activate) {
    if (absl::Status s = store->Activate(entry->id, Author(flags)); !s.ok()) {
      return Fail(kCommand, s);
    }
    std::cout << "active: id " << entry->id << "\n";
  }
  return kExitOk;
}

int RunActivate(const PolicyFlags& flags, bool rollback) {
  const char* command = rollback ? "vigil policy rollback" : "vigil policy activate";
  auto store = OpenStore(flags, command);
  if (store == nullptr) return kExitUsage;
  const absl::Status s =
      rollback ? store->Rollback(Author(flags)) : store->Activate(flags.id, Author(flags));
  if (!s.ok()) return Fail(command, s);
  std::cout << "active: id " << *store->active_id() << ", version " << store->Active()->version()
            << "\n";
  return kExitOk;
}

int RunList(const PolicyFlags& flags) {
  constexpr char kCommand[] = "vigil policy list";
  auto store = OpenStore(flags, kCommand);
  if (store == nullptr) return kExitUsage;
  auto entries = store->List();
  if (!entries.ok()) return Fail(kCommand, entries.status());
  auto history = store->History();
  if (!history.ok()) return Fail(kCommand, history.status());
  const std::optional<int64_t> active = store->active_id();
  std::cout << "  id  version                 sha256        author        added\n";
  for (const PolicyStore::Entry& e : *entries) {
    std::cout << (active == e.id ? "* " : "  ")
              << absl::StrFormat("%-3d %-23s %-13s %-13s %s", e.id, e.version,
                                 e.sha256.substr(0, 12), e.author, FormatUtc(e.added))
              << "\n";
  }
  for (const PolicyStore::Activation& a : *history) {
    std::cout << "activated id " << a.id << " by " << a.author << " at " << FormatUtc(a.at) << "\n";
  }
  return kExitOk;
}

// Loads "path" against the engine's feature schema and the list library. Errors go to stderr.
std::shared_ptr<const Policy> Load(const std::string& path, const PolicyFlags& flags,
                                   const char* command) {
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  auto policy = LoadPolicyFile(path, flags.lists, layout);
  if (!policy.ok()) {
    if (policy.status().code() != absl::StatusCode::kInvalidArgument) std::cerr << command << ": ";
    std::cerr << policy.status().message() << "\n";
    return nullptr;
  }
  return *policy;
}

// Replays flags.stream through features and this policy alone (no model: a rule must stand on
// the traffic, not on a score) and reports how often each rule fires: a rule that never fires
// there, or fires on more than flags.most_traffic of the payments, is called out.
int CheckOnStream(const PolicyFlags& flags, const Policy& policy) {
  constexpr char kCommand[] = "vigil policy check";
  absl::StatusOr<FxRates> fx = LoadFxRates(flags.fx_rates);
  if (!fx.ok()) return Fail(kCommand, fx.status());
  DecisionConfig config;
  config.policy_path = flags.file;
  config.lists_dir = flags.lists;
  auto decider = BuildDecisionMaker(config);
  if (!decider.ok()) return Fail(kCommand, decider.status());
  ReplayOptions options;
  options.input_path = flags.stream;
  options.decisions = decider->get();
  absl::StatusOr<ReplaySummary> summary = RunReplay(options, *fx, RealClock());
  if (!summary.ok()) return Fail(kCommand, summary.status());
  const evaluation::BacktestSummary& b = *summary->backtest;
  std::cout << "on " << flags.stream << ": " << b.decisions << " payments decided ("
            << b.labelled << " labelled), " << b.days << " days\n";
  if (b.decisions == 0) {
    std::cout << "warning: the stream has no payment the engine accepted; nothing to measure\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("  %-34s %-7s %10s %9s %10s\n", "rule", "mode", "hits",
                               "share", "precision");
  int warnings = 0;
  for (const PolicyRule& r : policy.rules()) {
    const auto it = b.rules.find(r.id);
    const int64_t hits = it == b.rules.end() ? 0 : it->second.hits;
    const double share = static_cast<double>(hits) / static_cast<double>(b.decisions);
    std::string precision = "-";
    if (hits > 0 && b.labelled > 0) precision = absl::StrFormat("%.3f", it->second.precision);
    std::cout << absl::StrFormat("  %-34s %-7s %10d %8.3f%% %10s\n", r.id,
                                 r.mode == RuleMode::kShadow ? "shadow" : "active", hits,
                                 100 * share, precision);
    if (hits == 0) {
      std::cout << "    warning: never fires on this stream\n";
      ++warnings;
    } else if (share > flags.most_traffic) {
      std::cout << absl::StrFormat("    warning: fires on %.1f%% of the payments (more than %.0f%%)\n",
                                   100 * share, 100 * flags.most_traffic);
      ++warnings;
    }
  }
  const evaluation::BacktestSummary::Accounts& a = b.accounts;
  if (policy.account_alerts().enabled() && a.accounts > 0) {
    std::cout << absl::StrFormat(
        "  account alerts: %d raised (%.1f a day) on %d of %d accounts; recall %.3f, FPR %.4f "
        "(labelled accounts)\n",
        a.alerts, a.alerts_per_day, a.alerted, a.accounts, a.recall, a.false_positive_rate);
  }
  std::cout << warnings << (warnings == 1 ? " warning" : " warnings") << "\n";
  return kExitOk;
}

int RunCheck(const PolicyFlags& flags) {
  const auto policy = Load(flags.file, flags, "vigil policy check");
  if (policy == nullptr) return kExitInputRejected;
  size_t shadow = 0;
  for (const PolicyRule& r : policy->rules()) shadow += r.mode == RuleMode::kShadow;
  std::cout << flags.file << ": valid\n"
            << "version " << policy->version() << ", sha256 " << policy->content_hash() << "\n"
            << "thresholds: review at score >= " << policy->review_threshold()
            << ", block at score >= " << policy->block_threshold() << "\n"
            << policy->rules().size() << " rules (" << policy->rules().size() - shadow
            << " active, " << shadow << " shadow)\n";
  if (flags.stream.empty()) return kExitOk;
  return CheckOnStream(flags, *policy);
}

// "N" or "N/day": alerts a day; NaN when it is neither.
double ParseBudget(const std::string& text) {
  absl::string_view number = text;
  if (absl::EndsWith(number, "/day")) number.remove_suffix(4);
  double value = 0;
  if (!absl::SimpleAtod(number, &value) ||
      !std::isfinite(value) || value <= 0) {
    return std::nan("");
  }
  return value;
}

std::string RateText(const evaluation::Rate& r) {
  if (r.n == 0) return "-";
  return absl::StrFormat("%.3f [%.3f, %.3f]", r.value, r.low, r.high);
}

void PrintFigures(const evaluation::TuningResult& r) {
  const evaluation::TuningFigures* f[4] = {&r.searched_before, &r.searched_after, &r.test_before,
                                           &r.test_after};
  std::cout << absl::StrFormat("  %-26s %-44s %s\n", "", "searched", "held out");
  std::cout << absl::StrFormat("  %-26s %-22s%-22s %-22s%-22s\n", "", "before", "after", "before",
                               "after");
  const auto row = [&](const char* name, auto cell) {
    std::cout << absl::StrFormat("  %-26s", name);
    for (int i = 0; i < 4; ++i) {
      std::cout << absl::StrFormat(i == 2 ? " %-22s" : "%-22s", cell(*f[i]));
    }
    std::cout << "\n";
  };
  using F = evaluation::TuningFigures;
  row("payments (laundering)",
      [](const F& x) { return absl::StrFormat("%d (%d)", x.payments, x.laundering); });
  row("alerts a day", [](const F& x) { return absl::StrFormat("%.2f", x.alerts_per_day); });
  row("recall", [](const F& x) { return RateText(x.recall); });
  row("precision", [](const F& x) { return RateText(x.precision); });
  row("accounts (laundering)",
      [](const F& x) { return absl::StrFormat("%d (%d)", x.accounts, x.laundering_accounts); });
  row("account alerts a day",
      [](const F& x) { return absl::StrFormat("%.2f", x.account_alerts_per_day); });
  row("account recall", [](const F& x) { return RateText(x.account_recall); });
  row("account precision", [](const F& x) { return RateText(x.account_precision); });
  row("account FPR",
      [](const F& x) { return absl::StrFormat("%.4f", x.account_false_positive_rate); });
}

nlohmann::json FiguresJson(const evaluation::TuningFigures& f) {
  const auto rate = [](const evaluation::Rate& r) {
    return nlohmann::json{{"k", r.k}, {"n", r.n}, {"value", r.value}, {"low", r.low},
                          {"high", r.high}};
  };
  return {{"payments", f.payments},
          {"laundering", f.laundering},
          {"days", f.days},
          {"alerts", f.alerts},
          {"alerts_per_day", f.alerts_per_day},
          {"recall", rate(f.recall)},
          {"precision", rate(f.precision)},
          {"accounts", f.accounts},
          {"laundering_accounts", f.laundering_accounts},
          {"account_alerts", f.account_alerts},
          {"account_alerts_per_day", f.account_alerts_per_day},
          {"account_recall", rate(f.account_recall)},
          {"account_precision", rate(f.account_precision)},
          {"account_false_positive_rate", f.account_false_positive_rate}};
}

// Replays flags.stream once (with flags.model, its scores), then searches the policy's tunable
// constants on the earlier part of it and reports both parts before and after.
int RunTune(const PolicyFlags& flags) {
  constexpr char kCommand[] = "vigil policy tune";
  const auto policy = Load(flags.file, flags, kCommand);
  if (policy == nullptr) return kExitInputRejected;
  const double budget = ParseBudget(flags.budget);
  if (std::isnan(budget)) {
    return Fail(kCommand, absl::InvalidArgumentError(absl::StrCat(
                              "--budget: '", flags.budget,
                              "' is not a number of alerts a day above 0 (e.g. 50 or 50/day)")));
  }
  std::ifstream in(flags.file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<ListLibrary> library = LoadListLibrary(flags.lists, flags.file);
  if (!library.ok()) return Fail(kCommand, library.status());
  absl::StatusOr<FxRates> fx = LoadFxRates(flags.fx_rates);
  if (!fx.ok()) return Fail(kCommand, fx.status());

  const size_t width = FeatureExtractor::Schema()->size();
  evaluation::TuningHistory history(width);
  ReplayOptions options;
  options.input_path = flags.stream;
  std::shared_ptr<const DecisionMaker> scorer;
  if (!flags.model.empty()) {
    // The model's scores, once: the tuning moves rules, not the model.
    DecisionConfig config;
    config.policy_path = flags.file;
    config.lists_dir = flags.lists;
    config.model_path = flags.model;
    config.options.reason_codes = 0;
    auto decider = BuildDecisionMaker(config);
    if (!decider.ok()) return Fail(kCommand, decider.status());
    scorer = *std::move(decider);
    options.decisions = scorer.get();
  }
  options.on_record = [&history](const Transaction& tx, absl::Span<const double> row,
                                 const Decision* d) {
    history.Add(tx, row, d != nullptr ? d->score : std::nan(""));
  };
  absl::StatusOr<ReplaySummary> replayed = RunReplay(options, *fx, RealClock());
  if (!replayed.ok()) return Fail(kCommand, replayed.status());

  evaluation::TuningOptions tuning;
  tuning.budget_per_day = budget;
  tuning.unit = flags.unit == "accounts" ? evaluation::TuningOptions::Unit::kAccounts
                                         : evaluation::TuningOptions::Unit::kPayments;
  tuning.test_share = flags.test_share;
  tuning.grid = flags.grid;
  const std::string version =
      flags.version.empty() ? absl::StrCat(policy->version(), "-tuned") : flags.version;
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  absl::StatusOr<evaluation::TuningResult> tuned =
      evaluation::TunePolicy(text, flags.file, version, layout, *library, history, tuning);
  if (!tuned.ok()) return Fail(kCommand, tuned.status());
  const evaluation::TuningResult& r = *tuned;

  std::cout << "on " << flags.stream << ": " << history.size() << " payments"
            << (flags.model.empty() ? ", rules only" : absl::StrCat(", scored by ", flags.model))
            << "\n";
  std::cout << "searched " << r.searched_span << "; held out " << r.test_span << " (the last "
            << absl::StrFormat("%.0f", 100 * flags.test_share) << "% of the time)\n";
  std::cout << absl::StrFormat("budget: %g %s alerts a day on the searched part: %s (%d policies tried)\n",
                               budget, flags.unit == "accounts" ? "account" : "payment",
                               r.within_budget ? "met" : "MISSED, the closest was chosen",
                               r.candidates);
  for (size_t i = 0; i < r.after.size(); ++i) {
    const bool moved = r.after[i].second != r.before[i].second;
    std::cout << absl::StrFormat("  %s %s: %g%s\n", moved ? "~" : "=", r.after[i].first,
                                 r.before[i].second,
                                 moved ? absl::StrFormat(" → %g", r.after[i].second) : "");
  }
  PrintFigures(r);
  std::ofstream out(flags.out, std::ios::binary | std::ios::trunc);
  out << r.policy_text;
  out.close();
  if (!out) {
    return Fail(kCommand, absl::UnavailableError(absl::StrCat("cannot write '", flags.out, "'")));
  }
  std::cout << "wrote " << flags.out << " (version " << version << "); review it with: vigil policy diff "
            << flags.file << " " << flags.out << "\n";
  if (!flags.json_out.empty()) {
    nlohmann::json changes = nlohmann::json::array();
    for (size_t i = 0; i < r.after.size(); ++i) {
      changes.push_back({{"constant", r.after[i].first},
                         {"before", r.before[i].second},
                         {"after", r.after[i].second}});
    }
    const nlohmann::json j = {
        {"policy", flags.file},
        {"tuned_policy", flags.out},
        {"version", version},
        {"stream", flags.stream},
        {"budget_per_day", budget},
        {"unit", flags.unit},
        {"within_budget", r.within_budget},
        {"candidates", r.candidates},
        {"searched", {{"span", r.searched_span}, {"before", FiguresJson(r.searched_before)},
                      {"after", FiguresJson(r.searched_after)}}},
        {"held_out", {{"span", r.test_span}, {"before", FiguresJson(r.test_before)},
                      {"after", FiguresJson(r.test_after)}}},
        {"constants", changes}};
    std::ofstream json(flags.json_out, std::ios::binary | std::ios::trunc);
    json << j.dump(2) << "\n";
    if (!json) {
      return Fail(kCommand,
                  absl::UnavailableError(absl::StrCat("cannot write '", flags.json_out, "'")));
    }
  }
  return kExitOk;
}

std::string Describe(const PolicyRule& r) {
  return absl::StrCat(RuleActionName(r.action).data(), ", severity ", r.severity,
                      r.mode == RuleMode::kShadow ? ", shadow" : "", "\n      when: ", r.when_text);
}

int RunDiff(const PolicyFlags& flags) {
  const auto a = Load(flags.file, flags, "vigil policy diff");
  const auto b = Load(flags.other, flags, "vigil policy diff");
  if (a == nullptr || b == nullptr) return kExitInputRejected;
  std::cout << "--- " << flags.file << " (version " << a->version() << ")\n"
            << "+++ " << flags.other << " (version " << b->version() << ")\n";
  size_t changes = 0;
  if (a->review_threshold() != b->review_threshold() ||
      a->block_threshold() != b->block_threshold()) {
    ++changes;
    std::cout << "~ thresholds: review " << a->review_threshold() << " → " << b->review_threshold()
              << ", block " << a->block_threshold() << " → " << b->block_threshold() << "\n";
  }
  std::map<std::string, const PolicyRule*> before, after;
  for (const PolicyRule& r : a->rules()) before[r.id] = &r;
  for (const PolicyRule& r : b->rules()) after[r.id] = &r;
  for (const auto& [id, r] : before) {
    if (!after.contains(id)) {
      ++changes;
      std::cout << "- " << id << ": " << Describe(*r) << "\n";
    }
  }
  for (const auto& [id, r] : after) {
    auto it = before.find(id);
    if (it == before.end()) {
      ++changes;
      std::cout << "+ " << id << ": " << Describe(*r) << "\n";
      continue;
    }
    const PolicyRule& old = *it->second;
    std::string what;
    if (old.when_text != r->when_text) {
      absl::StrAppend(&what, "\n    when: ", old.when_text, "\n       → ", r->when_text);
    }
    if (old.action != r->action) {
      absl::StrAppend(&what, "\n    action: ", RuleActionName(old.action).data(), " → ",
                      RuleActionName(r->action).data());
    }
    if (old.severity != r->severity) {
      absl::StrAppend(&what, "\n    severity: ", old.severity, " → ", r->severity);
    }
    if (old.mode != r->mode) {
      absl::StrAppend(&what, "\n    mode: ", old.mode == RuleMode::kShadow ? "shadow" : "active",
                      " → ", r->mode == RuleMode::kShadow ? "shadow" : "active");
    }
    if (old.reason_text != r->reason_text) {
      absl::StrAppend(&what, "\n    reason: ", old.reason_text, "\n         → ", r->reason_text);
    }
    if (!what.empty()) {
      ++changes;
      std::cout << "~ " << id << ":" << what << "\n";
    }
  }
  std::cout << changes << (changes == 1 ? " change" : " changes") << "\n";
  return kExitOk;
}

}  // namespace

Command AddPolicyCommand(CLI::App& vigil) {
  auto flags = std::make_shared<PolicyFlags>();
  CLI::App* app = vigil.add_subcommand("policy", "Check and compare policy files (docs/policy.md)");
  app->require_subcommand(1);
  CLI::App* check = app->add_subcommand(
      "check",
      "Validate a policy against the engine's feature schema without applying it: every error "
      "with file:line:column; exit 0 when valid, 1 otherwise");
  check->add_option("FILE", flags->file, "Policy YAML")->required();
  check->add_option("--lists", flags->lists,
                    "Directory of named lists (default: 'lists' beside the policy)");
  check->add_option("--stream", flags->stream,
                    "Also replay this stream (any format vigil replay reads) through the policy "
                    "alone, no model, and report each rule's hits, share of payments and "
                    "precision on labels; warn about rules that never fire or fire on most of it");
  check->add_option("--most-traffic", flags->most_traffic,
                    "With --stream: the share of payments above which a rule is called out")
      ->check(CLI::Range(0.0, 1.0));
  check->add_option("--fx-rates", flags->fx_rates,
                    "With --stream: FX rates table (default: data/fx_rates.csv)");
  check->footer(
      "Examples:\n  vigil policy check policies/default.yaml\n"
      "  vigil policy check policies/default.yaml --stream transactions.csv");
  CLI::App* tune = app->add_subcommand(
      "tune",
      "Search the constants a policy declares tunable (its 'tune:' section) on labelled history: "
      "the most recall within an alert budget on the earlier part of STREAM, reported before "
      "and after on the held-out later part; writes the tuned policy (docs/policy.md, Tuning)");
  tune->add_option("POLICY", flags->file, "Policy YAML with a 'tune:' section")->required();
  tune->add_option("STREAM", flags->stream,
                   "Labelled history (any format vigil replay reads), split by event time")
      ->required();
  tune->add_option("--budget", flags->budget, "Alerts a day allowed: N or N/day")->required();
  tune->add_option("--unit", flags->unit,
                   "What the budget counts and the recall is of: payments (REVIEW or BLOCK "
                   "decisions) or accounts (account alerts)")
      ->check(CLI::IsMember({"payments", "accounts"}));
  tune->add_option("--out", flags->out, "Where to write the tuned policy")->required();
  tune->add_option("--version", flags->version,
                   "The tuned policy's version (default: the policy's, with -tuned)");
  tune->add_option("--model", flags->model,
                   "Score the stream with this model (its scores meet the policy's thresholds); "
                   "default: rules only");
  tune->add_option("--test-share", flags->test_share,
                   "The latest share of the stream's time span held out (default 0.2)")
      ->check(CLI::Range(0.05, 0.95));
  tune->add_option("--grid", flags->grid, "Values tried per constant (default 9)")
      ->check(CLI::Range(2, 101));
  tune->add_option("--json-out", flags->json_out, "Also write the figures as JSON here");
  tune->add_option("--lists", flags->lists,
                   "Directory of named lists (default: 'lists' beside the policy)");
  tune->add_option("--fx-rates", flags->fx_rates, "FX rates table (default: data/fx_rates.csv)");
  tune->footer(
      "Example:\n  vigil policy tune policies/default.yaml history.csv --budget 50/day "
      "--out tuned.yaml");
  CLI::App* diff = app->add_subcommand(
      "diff",
      "List the changes from policy A to policy B: thresholds, rules added, removed "
      "and changed (condition, action, severity, mode, reason)");
  diff->add_option("A", flags->file, "The policy before")->required();
  diff->add_option("B", flags->other, "The policy after")->required();
  diff->add_option("--lists", flags->lists,
                   "Directory of named lists (default: 'lists' beside each policy)");
  diff->footer("Example:\n  vigil policy diff policies/default.yaml my-policy.yaml");
  CLI::App* add = app->add_subcommand(
      "add",
      "Check a policy and store it as a new version in --data-dir (the same text twice is "
      "one version); --activate makes it the active one");
  add->add_option("FILE", flags->file, "Policy YAML")->required();
  AddDataDirOption(add, &flags->data_dir, DataDirUse::kMayCreate);
  add->add_option("--author", flags->author, "Who adds it (default: $USER)");
  add->add_option("--lists", flags->lists,
                  "Directory of named lists (default: 'lists' beside the policy); stored with "
                  "the version");
  add->add_flag("--activate", flags->activate, "Activate the version once stored");
  add->footer(
      "Example:\n  vigil policy add policies/default.yaml --data-dir state/ --author alice "
      "--activate");
  CLI::App* activate = app->add_subcommand(
      "activate", "Make a stored version the active policy (durable, then an atomic swap)");
  activate->add_option("ID", flags->id, "Version id (see vigil policy list)")->required();
  AddDataDirOption(activate, &flags->data_dir, DataDirUse::kExisting);
  activate->add_option("--author", flags->author, "Who activates it (default: $USER)");
  CLI::App* rollback = app->add_subcommand(
      "rollback", "Activate again the version that was active before the current one");
  AddDataDirOption(rollback, &flags->data_dir, DataDirUse::kExisting);
  rollback->add_option("--author", flags->author, "Who rolls back (default: $USER)");
  CLI::App* list = app->add_subcommand(
      "list", "Stored versions (the active one marked *) and the activation history");
  AddDataDirOption(list, &flags->data_dir, DataDirUse::kExisting);
  return Command{app, [flags, check, tune, diff, add, activate, rollback, list] {
                   if (check->parsed()) return RunCheck(*flags);
                   if (tune->parsed()) return RunTune(*flags);
                   if (diff->parsed()) return RunDiff(*flags);
                   if (add->parsed()) return RunAdd(*flags);
                   if (activate->parsed()) return RunActivate(*flags, false);
                   if (rollback->parsed()) return RunActivate(*flags, true);
                   if (list->parsed()) return RunList(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
