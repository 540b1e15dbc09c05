#include "vigil/cli/cases_command.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/audit/audit_record.h"
#include "vigil/cases/case_labels.h"
#include "vigil/cli/data_dir_log.h"
#include "vigil/cli/data_files.h"
#include "vigil/common/csv_field.h"
#include "vigil/common/string_view.h"
#include "vigil/core/feature_schema.h"
#include "vigil/features/feature_extractor.h"

namespace vigil::cli {
namespace {

struct CasesFlags {
  std::string data_dir;
  std::string out;
  std::string valuable = "skip";
};

int Fail(absl::string_view message, int code) {
  std::cerr << "vigil cases export-labels: " << message << "\n";
  return code;
}

struct Row {
  UtcTime time{};
  std::string text;
};

int RunExportLabels(const CasesFlags& flags) {
  absl::StatusOr<OpenedLog> opened = OpenLog(flags.data_dir);
  if (!opened.ok()) return Fail(opened.status().message(), kExitUsage);
  absl::StatusOr<std::vector<cases::CaseLabel>> labels = cases::ReadCaseLabels(*opened->store);
  if (!labels.ok()) {
    return Fail(labels.status().message(),
                absl::IsNotFound(labels.status()) ? kExitInputRejected : kExitUsage);
  }
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  std::vector<Row> rows;
  size_t positive = 0, negative = 0, skipped = 0;
  for (const cases::CaseLabel& label : *labels) {
    std::string value;
    switch (label.outcome) {
      case cases::CaseOutcome::kSuspiciousReported:
        value = "1";
        break;
      case cases::CaseOutcome::kFalsePositive:
      case cases::CaseOutcome::kNotSuspicious:
        value = "0";
        break;
      default:
        value = flags.valuable == "skip" ? "" : flags.valuable;
        break;
    }
    if (value.empty()) {
      ++skipped;
      continue;
    }
    absl::StatusOr<std::string> bytes = opened->log->ReadRecord(label.sequence);
    if (!bytes.ok()) return Fail(bytes.status().message(), kExitUsage);
    absl::StatusOr<audit::AuditRecord> r = audit::DecodeRecord(*bytes);
    if (!r.ok()) {
      return Fail(absl::StrCat("record ", label.sequence, " of ", label.case_id, ": ",
                               r.status().message(), "; run `vigil audit verify`"),
                  kExitUsage);
    }
    if (!SchemaExtends(schema->version(), r->decision.feature_schema_version) ||
        r->features.size() > schema->size()) {
      return Fail(absl::StrCat("record ", label.sequence, " of ", label.case_id,
                               " has feature schema ", r->decision.feature_schema_version,
                               ", which this build's ", schema->version(),
                               " does not extend: export with the vigil that decided it"),
                  kExitUsage);
    }
    std::string line =
        absl::StrCat(CsvField(r->transaction.id), ",", FormatUtc(r->transaction.event_time), ",",
                     CsvField(r->transaction.originator.account_id), ",",
                     CsvField(r->transaction.beneficiary.account_id));
    for (size_t i = 0; i < schema->size(); ++i) {
      line += ',';
      // A column the deciding schema did not have yet is missing, as replay leaves it.
      if (i < r->features.size() && std::isfinite(r->features[i])) {
        absl::StrAppendFormat(&line, "%.17g", r->features[i]);
      }
    }
    absl::StrAppend(&line, ",", value, ",case:", ToAbsl(cases::CaseOutcomeName(label.outcome)),
                    "\n");
    rows.push_back({r->transaction.event_time, std::move(line)});
    ++(value == "1" ? positive : negative);
  }
  if (rows.empty()) {
    return Fail(absl::StrCat("no closed case to export (", labels->size(),
                             " alerts of closed "
                             "cases, ",
                             skipped, " left out as valuable_alert)"),
                kExitInputRejected);
  }
  // By event time, as model train splits them.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.time < b.time; });
  std::ofstream out(flags.out, std::ios::binary | std::ios::trunc);
  if (!out) return Fail(absl::StrCat("cannot write '", flags.out, "'"), kExitUsage);
  out << "tx_id,timestamp,originator,beneficiary";
  for (const std::string& name : schema->names()) out << ',' << name;
  out << ",label,typology\n";
  for (const Row& row : rows) out << row.text;
  out.close();
  if (!out) return Fail(absl::StrCat("writing '", flags.out, "' failed"), kExitUsage);
  std::cerr << "vigil cases export-labels: " << rows.size() << " rows (" << positive
            << " suspicious, " << negative << " not; " << skipped
            << " valuable_alert left out) from the closed cases of " << flags.data_dir << " to "
            << flags.out << "\n";
  return kExitOk;
}

}  // namespace

Command AddCasesCommand(CLI::App& vigil) {
  auto flags = std::make_shared<CasesFlags>();
  CLI::App* app =
      vigil.add_subcommand("cases", "The analysts' cases of a data directory (docs/cases.md)");
  app->require_subcommand(1);
  CLI::App* exp = app->add_subcommand(
      "export-labels",
      "Write the alerts of closed cases as labelled feature rows for vigil model train "
      "(suspicious_reported: 1; false_positive, not_suspicious: 0)");
  AddDataDirOption(exp, &flags->data_dir, DataDirUse::kExisting);
  exp->add_option("--out", flags->out, "The feature rows CSV to write")->required();
  exp->add_option("--valuable-alert", flags->valuable,
                  "The label of a case closed as valuable_alert: 1, 0, or skip (left out)")
      ->check(CLI::IsMember({"1", "0", "skip"}))
      ->capture_default_str();
  app->footer(
      "Example:\n  vigil cases export-labels --data-dir state --out labels.csv\n"
      "  vigil model train --features labels.csv --out-dir model/\n"
      "The labels are of alerted payments only (what the policy in force showed the analysts): "
      "see docs/cases.md before training on them alone.\n"
      "Exit: 0 written; 1 no closed case to export; 2 usage or environment error.");
  return Command{app, [flags] { return RunExportLabels(*flags); }};
}

}  // namespace vigil::cli
