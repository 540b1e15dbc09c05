#include "vigil/cli/policy_command.h"

#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/rules/policy.h"

namespace vigil::cli {
namespace {

struct PolicyFlags {
  std::string file;
  std::string other;
  std::string lists;  // empty: <policy's directory>/lists when it exists
};

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
  return kExitOk;
}

std::string Describe(const PolicyRule& r) {
  return absl::StrCat(RuleActionName(r.action).data(), ", severity ", r.severity,
                      r.mode == RuleMode::kShadow ? ", shadow" : "", "\n      when: ",
                      r.when_text);
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
    std::cout << "~ thresholds: review " << a->review_threshold() << " → "
              << b->review_threshold() << ", block " << a->block_threshold() << " → "
              << b->block_threshold() << "\n";
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
  check->footer("Example:\n  vigil policy check policies/default.yaml");
  CLI::App* diff = app->add_subcommand(
      "diff", "List the changes from policy A to policy B: thresholds, rules added, removed "
              "and changed (condition, action, severity, mode, reason)");
  diff->add_option("A", flags->file, "The policy before")->required();
  diff->add_option("B", flags->other, "The policy after")->required();
  diff->add_option("--lists", flags->lists,
                   "Directory of named lists (default: 'lists' beside each policy)");
  diff->footer("Example:\n  vigil policy diff policies/default.yaml my-policy.yaml");
  return Command{app, [flags, check, diff] {
                   if (check->parsed()) return RunCheck(*flags);
                   if (diff->parsed()) return RunDiff(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
