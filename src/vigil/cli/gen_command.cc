#include "vigil/cli/gen_command.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/clock.h"
#include "vigil/core/fx_rates.h"
#include "vigil/core/transaction.h"
#include "vigil/cli/data_files.h"
#include "vigil/synth/generator.h"

namespace vigil::cli {
namespace {

struct GenFlags {
  synth::GeneratorOptions options;
  std::string start = "2022-09-01";
  std::string fx_rates;
  std::string out;
};

int RunGen(GenFlags& flags) {
  absl::StatusOr<UtcTime> start = ParseRfc3339(absl::StrCat(flags.start, "T00:00:00Z"));
  if (!start.ok()) {
    std::cerr << "vigil gen: --start: expected a date YYYY-MM-DD, got '" << flags.start << "'\n";
    return kExitUsage;
  }
  flags.options.start = *start;
  absl::StatusOr<FxRates> fx = LoadFxRates(flags.fx_rates);
  if (!fx.ok()) {
    std::cerr << "vigil gen: " << fx.status().message() << "\n";
    return kExitUsage;
  }

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (flags.out != "-") {
    file.open(flags.out, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "vigil gen: cannot open '" << flags.out
                << "' for writing: " << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    out = &file;
  }

  const auto began = RealClock().Monotonic();
  absl::StatusOr<synth::GeneratorStats> stats =
      synth::GenerateTransactions(flags.options, *fx, *out);
  if (stats.ok() && file.is_open()) {
    file.close();
    if (!file) stats = absl::UnavailableError(absl::StrCat("closing '", flags.out, "' failed"));
  }
  const double seconds = std::chrono::duration<double>(RealClock().Monotonic() - began).count();
  if (!stats.ok()) {
    std::cerr << "vigil gen: " << stats.status().message() << "\n";
    return kExitUsage;
  }
  std::cerr << "vigil gen: " << synth::FormatGeneratorStats(*stats) << " to "
            << (flags.out == "-" ? "stdout" : flags.out) << " in "
            << absl::StrFormat("%.2f", seconds) << " s\n";
  return kExitOk;
}

}  // namespace

Command AddGenCommand(CLI::App& vigil) {
  auto flags = std::make_shared<GenFlags>();
  CLI::App* app = vigil.add_subcommand(
      "gen",
      "Generate a deterministic, labelled synthetic transaction stream: AMLworld CSV columns plus "
      "Typology, with injected laundering typologies (FAN-OUT, FAN-IN, CYCLE, SCATTER-GATHER, "
      "GATHER-SCATTER, BIPARTITE, STACK, STRUCTURING, PASS-THROUGH)");
  app->add_option("--accounts", flags->options.accounts,
                  "Accounts in the population (about 0.5 rows per account per day)")
      ->required()
      ->check(CLI::Range(int64_t{100}, int64_t{20'000'000}));
  app->add_option("--days", flags->options.days, "Days of traffic")
      ->required()
      ->check(CLI::Range(1, 3650));
  app->add_option("--seed", flags->options.seed,
                  "Seed: the same flags and seed give the same bytes")
      ->required();
  app->add_option("--laundering-rate", flags->options.laundering_rate,
                  "Share of rows that are laundering")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5));
  app->add_option("--start", flags->start, "First day (UTC), YYYY-MM-DD")->capture_default_str();
  app->add_option("--fx-rates", flags->fx_rates,
                  "FX rates table (default: data/fx_rates.csv in the current directory, else "
                  "above the executable's directory)");
  app->add_option("--out", flags->out, "Output CSV file, '-' for standard output")->required();
  app->footer(
      "Example:\n"
      "  vigil gen --accounts 100000 --days 20 --seed 7 --out tx.csv\n"
      "    writes about 1 million rows (0.1% laundering) and prints a summary line to stderr.");
  return Command{app, [flags] { return RunGen(*flags); }};
}

}  // namespace vigil::cli
