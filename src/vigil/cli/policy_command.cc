#include "vigil/cli/policy_command.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/cli/data_files.h"
#include "vigil/common/clock.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/engine/replay.h"
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
  const BacktestSummary& b = *summary->backtest;
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
  add->add_option("--data-dir", flags->data_dir, "The engine's data directory")->required();
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
  activate->add_option("--data-dir", flags->data_dir, "The engine's data directory")->required();
  activate->add_option("--author", flags->author, "Who activates it (default: $USER)");
  CLI::App* rollback = app->add_subcommand(
      "rollback", "Activate again the version that was active before the current one");
  rollback->add_option("--data-dir", flags->data_dir, "The engine's data directory")->required();
  rollback->add_option("--author", flags->author, "Who rolls back (default: $USER)");
  CLI::App* list = app->add_subcommand(
      "list", "Stored versions (the active one marked *) and the activation history");
  list->add_option("--data-dir", flags->data_dir, "The engine's data directory")->required();
  return Command{app, [flags, check, diff, add, activate, rollback, list] {
                   if (check->parsed()) return RunCheck(*flags);
                   if (diff->parsed()) return RunDiff(*flags);
                   if (add->parsed()) return RunAdd(*flags);
                   if (activate->parsed()) return RunActivate(*flags, false);
                   if (rollback->parsed()) return RunActivate(*flags, true);
                   if (list->parsed()) return RunList(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
