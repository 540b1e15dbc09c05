#include "vigil/cli/drift_command.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "vigil/common/csv_record_reader.h"
#include "vigil/common/json_text.h"
#include "vigil/common/status_macros.h"
#include "vigil/drift/binned.h"
#include "vigil/drift/two_sample.h"

namespace vigil::cli {
namespace {

struct DriftFlags {
  std::string reference, live, columns;
};

// The numeric columns of a CSV with a header: a column is numeric when every non-empty cell
// parses as a number (empty cells are missing values, NaN). Read as pandas.read_csv reads it:
// quoted cells (ids with commas, as `vigil replay --features-out` writes them) are one cell,
// blank lines are skipped, and a quote inside an unquoted cell is text.
struct NumericTable {
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> columns;
};

constexpr CsvDialect kTableCsvDialect{.skip_empty_lines = true, .allow_bare_quotes = true};

absl::StatusOr<NumericTable> ReadNumericCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  CsvRecordReader reader(in, path, kTableCsvDialect);
  std::vector<std::string> header;
  VIGIL_ASSIGN_OR_RETURN(const bool has_header, reader.Next(&header));
  if (!has_header) return absl::InvalidArgumentError(absl::StrCat(path, ": empty"));
  std::vector<std::vector<double>> values(header.size());
  std::vector<bool> numeric(header.size(), true);
  std::vector<std::string> cells;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(const bool more, reader.Next(&cells));
    if (!more) break;
    if (cells.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", reader.line(), ": ", cells.size(),
                                                     " cells, the header has ", header.size()));
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      double v = std::nan("");
      if (!cells[c].empty() && !absl::SimpleAtod(cells[c], &v)) numeric[c] = false;
      if (numeric[c]) values[c].push_back(v);
    }
  }
  NumericTable table;
  for (size_t c = 0; c < header.size(); ++c) {
    if (!numeric[c]) continue;
    table.names.push_back(header[c]);
    table.columns[header[c]] = std::move(values[c]);
  }
  return table;
}

// numpy.quantile's default (linear) on sorted values.
double Quantile(absl::Span<const double> sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (pos - static_cast<double>(lo));
}

void Number(const char* key, double v, std::string* out) {
  absl::StrAppend(out, ",\"", key, "\":");
  if (std::isfinite(v)) {
    absl::StrAppendFormat(out, "%.17g", v);
  } else {
    out->append("null");
  }
}

int RunCompare(const DriftFlags& flags) {
  absl::StatusOr<NumericTable> ref = ReadNumericCsv(flags.reference);
  absl::StatusOr<NumericTable> live = ref.ok() ? ReadNumericCsv(flags.live) : ref;
  if (!ref.ok() || !live.ok()) {
    std::cerr << "vigil drift compare: " << (!ref.ok() ? ref : live).status().message() << "\n";
    return kExitUsage;
  }
  std::vector<std::string> wanted;
  if (flags.columns.empty()) {
    for (const std::string& name : ref->names) {
      if (live->columns.contains(name)) wanted.push_back(name);
    }
  } else {
    wanted = absl::StrSplit(flags.columns, ',', absl::SkipEmpty());
    for (const std::string& name : wanted) {
      if (!ref->columns.contains(name) || !live->columns.contains(name)) {
        std::cerr << "vigil drift compare: --columns: '" << name
                  << "' is not a numeric column of both files\n";
        return kExitUsage;
      }
    }
  }
  for (const std::string& name : wanted) {
    const drift::ReferenceSample reference(ref->columns[name]);
    std::vector<double> window;
    size_t live_missing = 0;
    for (double v : live->columns[name]) {
      if (std::isnan(v)) {
        ++live_missing;
      } else {
        window.push_back(v);
      }
    }
    std::sort(window.begin(), window.end());
    std::string out = "{\"column\":";
    AppendJsonString(name, &out);
    absl::StrAppend(&out, ",\"n_ref\":", reference.size(), ",\"n_live\":", window.size(),
                    ",\"missing_ref\":", reference.missing(), ",\"missing_live\":", live_missing);
    if (reference.size() == 0 || window.empty()) {
      out += ",\"error\":\"no values to compare\"}";
      std::cout << out << "\n";
      continue;
    }
    const double ks = drift::KsStatistic(reference, window);
    const double w1 = drift::Wasserstein1(reference, window);
    Number("ks", ks, &out);
    Number("ks_pvalue", drift::KsPValue(reference.size(), window.size(), ks), &out);
    Number("wasserstein", w1, &out);
    Number("wasserstein_norm", reference.stddev() > 0 ? w1 / reference.stddev() : std::nan(""),
           &out);
    // The reference's deciles (distinct edges) as bins, as tools/train.py's profile has them.
    std::vector<double> edges;
    for (int q = 0; q <= 10; ++q) {
      const double e = Quantile(reference.sorted(), q / 10.0);
      if (edges.empty() || e > edges.back()) edges.push_back(e);
    }
    if (edges.size() < 2) edges.push_back(edges.back() + 1);  // a constant reference
    std::vector<double> ref_counts(edges.size() - 1, 0.0), live_counts(edges.size() - 1, 0.0);
    absl::StatusOr<drift::ReferenceBins> bins = drift::ReferenceBins::Create(edges, ref_counts);
    for (double v : reference.sorted()) ref_counts[bins->Bin(v)] += 1;
    for (double v : window) live_counts[bins->Bin(v)] += 1;
    const drift::Divergences d = drift::BinnedDivergences(ref_counts, live_counts);
    Number("kl", d.kl, &out);
    Number("js", d.js, &out);
    Number("psi", d.psi, &out);
    const double score = 0.4 * d.kl + 0.35 * d.js + 0.25 * d.psi;
    Number("score", score, &out);
    // Levels by the fixed raw cut-offs (0.15, 0.30): a preset, uncalibrated for the window size.
    absl::StrAppend(&out, ",\"level\":\"", score >= 0.30 ? "L2" : score >= 0.15 ? "L1" : "none",
                    "\",\"calibration\":\"raw-preset\"}");
    std::cout << out << "\n";
  }
  return kExitOk;
}

}  // namespace

Command AddDriftCommand(CLI::App& vigil) {
  auto flags = std::make_shared<DriftFlags>();
  CLI::App* app = vigil.add_subcommand("drift", "Measure how far live data drifted from a reference");
  app->require_subcommand(1);
  CLI::App* compare = app->add_subcommand(
      "compare",
      "Per numeric column of two CSV files (header row; empty cell = missing): KS statistic and "
      "p-value (scipy's ks_2samp rule), Wasserstein-1 (raw and over the reference's standard "
      "deviation), KL, Jensen-Shannon distance and PSI over the reference's deciles, the "
      "weighted score 0.4 KL + 0.35 JS + 0.25 PSI and its level; one JSON object per line");
  compare->add_option("REF", flags->reference, "Reference CSV (e.g. training features)")->required();
  compare->add_option("LIVE", flags->live, "Live CSV")->required();
  compare->add_option("--columns", flags->columns, "Only these columns (comma-separated)");
  compare->footer(
      "Example:\n  vigil drift compare train_features.csv live_features.csv --columns "
      "amount_reporting,orig_out_count_24h\n"
      "Levels here use the raw preset cut-offs (0.15, 0.30), not a calibration for the window "
      "size.");
  return Command{app, [flags, compare] {
                   if (compare->parsed()) return RunCompare(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
