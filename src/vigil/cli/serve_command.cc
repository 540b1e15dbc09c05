#include "vigil/cli/serve_command.h"

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/cli/config_flags.h"
#include "vigil/cli/data_files.h"
#include "vigil/config/option_set.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/vigil_server.h"

namespace vigil::cli {
namespace {

// The configuration and its flags: one OptionSet over one ServeConfig (docs/configuration.md).
struct ServeState {
  ServeConfig config;
  config::OptionSet options;
  std::unique_ptr<ConfigFlags> flags;
  bool routes = false;
};

int Fail(absl::string_view message, int code = kExitUsage) {
  std::cerr << "vigil serve: " << message << "\n";
  return code;
}

int RunServe(ServeState& state) {
  if (state.routes) {
    for (const std::string& route : ServeApi::Routes()) std::cout << route << "\n";
    return kExitOk;
  }
  if (absl::Status s = state.flags->Apply(); !s.ok()) return Fail(s.message());
  ServeConfig& config = state.config;
  // A model named on the command line replaces the file's, whichever way the file named it.
  if (state.flags->Given("model.file") && !state.flags->Given("model.ref")) config.model_ref.clear();
  if (state.flags->Given("model.ref") && !state.flags->Given("model.file")) config.model.clear();
  if (config.data_dir.empty()) {
    return Fail("data_dir is required: give --data-dir or data_dir in --config");
  }
  if (absl::Status s = config.Validate(); !s.ok()) return Fail(s.message());
  absl::StatusOr<FxRates> fx = LoadFxRates(config.fx_rates);
  if (!fx.ok()) return Fail(fx.status().message());

  // Every thread the server starts inherits this mask; the signals are taken by sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<VigilServer>> server = VigilServer::Start(config, *std::move(fx));
  if (!server.ok()) {
    // A damaged audit log or feature state was examined and found wanting (exit 1, as `vigil
    // audit verify`); everything else is the environment or the configuration (2).
    return Fail(server.status().message(),
                absl::IsDataLoss(server.status()) ? kExitInputRejected : kExitUsage);
  }
  std::cout << "vigil serve: listening on " << config.host << ":" << (*server)->port() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  std::cerr << "vigil serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
            << ": stopping (answering requests in flight)\n";
  if (absl::Status s = (*server)->Shutdown(); !s.ok()) return Fail(s.message());
  return kExitOk;
}

}  // namespace

Command AddServeCommand(CLI::App& vigil) {
  auto state = std::make_shared<ServeState>();
  CLI::App* app = vigil.add_subcommand(
      "serve",
      "Serve decisions over HTTP: POST /v1/score and /v1/score/batch, policy ingest, model "
      "activation (canary, shadow), /healthz, /readyz, /metrics (docs/openapi.yaml)");
  DeclareServeOptions(&state->config, &state->options);
  state->flags = std::make_unique<ConfigFlags>(app, &state->options, config::kServe);
  app->add_flag("--routes", state->routes, "Print the served routes and exit");
  app->footer(
      "Examples:\n"
      "  vigil token create --data-dir state/ --role scorer   (prints a token once)\n"
      "  vigil serve --listen 0.0.0.0:8443 --data-dir state/ --model model.json \\\n"
      "      --policy policies/default.yaml --tls-cert tls/server.pem --tls-key tls/server.key \\\n"
      "      --client-ca tls/clients.pem --record-kek keys/kek_public.pem\n"
      "  vigil serve --listen 127.0.0.1:8080 --data-dir state/ --model model.json \\\n"
      "      --policy policies/default.yaml --plaintext --auth none   (a loopback demo)\n"
      "  vigil serve --listen 127.0.0.1:8080 --data-dir state/ --policy policies/default.yaml \\\n"
      "      --screening-list lists/sdn --screening-list lists/pep.csv\n"
      "    (OFAC's SDN folder and a list of vigil's format; decisions name the versions)\n"
      "  curl -s https://bank-host:8443/v1/score -H \"Authorization: Bearer $TOKEN\" \\\n"
      "      --cacert tls/ca.pem -H 'Content-Type: application/json' -d @tx.json\n"
      "Prints 'vigil serve: listening on HOST:PORT' once ready; stops on SIGTERM or SIGINT.");
  return Command{app, [state] { return RunServe(*state); }};
}

}  // namespace vigil::cli
