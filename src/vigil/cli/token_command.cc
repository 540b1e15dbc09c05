#include "vigil/cli/token_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "nlohmann/json.hpp"
#include "vigil/cli/data_files.h"
#include "vigil/server/access_tokens.h"

namespace vigil::cli {
namespace {

struct TokenFlags {
  std::string data_dir;
  std::string role;
  std::string description;
  std::string id;
};

int Fail(const absl::Status& status) {
  std::cerr << "vigil token: " << status.message() << "\n";
  return absl::IsNotFound(status) ? kExitInputRejected : kExitUsage;
}

int RunCreate(const TokenFlags& flags) {
  absl::StatusOr<Role> role = ParseRole(flags.role);
  if (!role.ok()) return Fail(role.status());
  std::error_code ec;
  std::filesystem::create_directories(flags.data_dir, ec);
  absl::StatusOr<std::string> token = AccessTokens::Create(flags.data_dir, *role, flags.description);
  if (!token.ok()) return Fail(token.status());
  std::cout << *token << "\n";
  std::cerr << "vigil token: token " << AccessTokens::IdOf(*token) << " (role " << flags.role
            << ") created; it is shown only this once: give it to its holder now\n";
  return kExitOk;
}

int RunList(const TokenFlags& flags) {
  absl::StatusOr<AccessTokens> tokens = AccessTokens::Open(flags.data_dir);
  if (!tokens.ok()) return Fail(tokens.status());
  for (const AccessToken& t : tokens->tokens()) {
    std::cout << nlohmann::json({{"id", t.id},
                                 {"role", std::string(RoleName(t.role))},
                                 {"created", t.created},
                                 {"description", t.description}})
                     .dump()
              << "\n";
  }
  return kExitOk;
}

int RunRevoke(const TokenFlags& flags) {
  if (absl::Status s = AccessTokens::Revoke(flags.data_dir, flags.id); !s.ok()) return Fail(s);
  std::cerr << "vigil token: token " << flags.id << " revoked\n";
  return kExitOk;
}

}  // namespace

Command AddTokenCommand(CLI::App& vigil) {
  auto flags = std::make_shared<TokenFlags>();
  CLI::App* app = vigil.add_subcommand(
      "token",
      "Create, list and revoke the API tokens of a data directory (roles: scorer, "
      "policy-admin, auditor, admin, analyst, supervisor)");
  app->require_subcommand(1);
  CLI::App* create = app->add_subcommand("create", "Create a token; it is printed once");
  CLI::App* list = app->add_subcommand("list", "List tokens as JSON lines (no secrets)");
  CLI::App* revoke = app->add_subcommand("revoke", "Revoke a token by its id");
  AddDataDirOption(create, &flags->data_dir, DataDirUse::kMayCreate);
  AddDataDirOption(list, &flags->data_dir, DataDirUse::kExisting);
  AddDataDirOption(revoke, &flags->data_dir, DataDirUse::kExisting);
  create
      ->add_option("--role", flags->role,
                   "scorer, policy-admin, auditor, admin, analyst or supervisor")
      ->required();
  create->add_option("--description", flags->description, "Who or what holds it");
  revoke->add_option("ID", flags->id, "The token's id (from list)")->required();
  app->footer(
      "Example:\n  vigil token create --data-dir state --role scorer --description gateway\n"
      "Exit: 0 done; 1 revoke of an unknown id; 2 usage or environment error.");
  return Command{app, [flags, create, list] {
                   if (create->parsed()) return RunCreate(*flags);
                   if (list->parsed()) return RunList(*flags);
                   return RunRevoke(*flags);
                 }};
}

}  // namespace vigil::cli
