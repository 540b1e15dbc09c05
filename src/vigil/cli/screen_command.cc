#include "vigil/cli/screen_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "vigil/common/json_text.h"
#include "vigil/screening/screener.h"

namespace vigil::cli {
namespace {

struct ScreenFlags {
  std::vector<std::string> lists;
  std::vector<std::string> names;
  double min_score = 0.88;
  size_t max_hits = 10;
  bool identifier = false;
};

void AppendResult(std::string_view query, const std::vector<screening::ScreeningHit>& hits,
                  std::string& out) {
  out.clear();
  out += "{\"query\":";
  AppendJsonString(query, &out);
  out += ",\"hits\":[";
  for (size_t i = 0; i < hits.size(); ++i) {
    const screening::ScreeningHit& h = hits[i];
    if (i > 0) out += ',';
    out += "{\"entry_id\":";
    AppendJsonString(h.entry_id, &out);
    out += ",\"name\":";
    AppendJsonString(h.entry_name, &out);
    out += ",\"matched_alias\":";
    AppendJsonString(h.matched_name, &out);
    absl::StrAppendFormat(&out, ",\"score\":%.4f,\"list\":", h.score);
    AppendJsonString(h.list, &out);
    out += '}';
  }
  out += "]}\n";
}

int RunScreen(const ScreenFlags& flags) {
  screening::ScreenerConfig config;
  config.sources = flags.lists;
  absl::StatusOr<std::unique_ptr<screening::Screener>> screener =
      screening::Screener::Create(std::move(config));
  if (!screener.ok()) {
    std::cerr << "vigil screen: " << screener.status().message() << "\n";
    return kExitUsage;
  }
  const std::shared_ptr<const screening::ScreeningLists> lists = (*screener)->Current();
  const screening::ScreeningOptions options{flags.min_score, flags.max_hits};
  bool any_hit = false;
  std::string out;
  auto screen = [&](const std::string& query) {
    std::vector<screening::ScreeningHit> hits =
        flags.identifier ? lists->ScreenIdentifier(query) : lists->ScreenName(query, options);
    if (hits.size() > flags.max_hits) hits.resize(flags.max_hits);
    any_hit = any_hit || !hits.empty();
    AppendResult(query, hits, out);
    std::cout << out;
  };
  if (!flags.names.empty()) {
    for (const std::string& name : flags.names) screen(name);
  } else {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) screen(line);
    }
  }
  std::cout.flush();
  return any_hit ? kExitInputRejected : kExitOk;
}

}  // namespace

Command AddScreenCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ScreenFlags>();
  CLI::App* app = vigil.add_subcommand(
      "screen",
      "Screen names (or identifiers) against watchlists and print the hits as JSON Lines, one "
      "line per name, best hits first");
  app->add_option("--list", flags->lists,
                  "A list file in vigil's format (CSV or JSON Lines) or an OFAC folder holding "
                  "sdn.csv and alt.csv; repeatable")
      ->required()
      ->allow_extra_args(false);
  app->add_option("NAME", flags->names, "Names to screen (default: one per line on stdin)");
  app->add_option("--min-score", flags->min_score,
                  "Report hits scoring at least this (default 0.88, the review threshold)")
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--max-hits", flags->max_hits, "Hits per name at most (default 10)")
      ->check(CLI::PositiveNumber);
  app->add_flag("--identifier", flags->identifier,
                "Screen BICs, IBANs, account or passport numbers exactly, not names");
  app->footer(
      "Example:\n  vigil screen --list testdata/sanctions/ofac_sdn_legacy_csv_2019 "
      "\"Banco Nacional de Cuba\" \"Ayman al-Zawahiri\"\n"
      "Exit: 0 no hits; 1 some name had a hit; 2 usage error or a list that cannot be read.");
  return Command{app, [flags] { return RunScreen(*flags); }};
}

}  // namespace vigil::cli
