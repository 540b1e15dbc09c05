#include "vigil/cli/parse_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "vigil/core/transaction.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/ingest/record_error.h"
#include "vigil/ingest/transaction_reader.h"

namespace vigil::cli {
namespace {

struct ParseFlags {
  std::vector<std::string> files;
};

int RunParse(const ParseFlags& flags) {
  bool invalid = false, unsupported = false;
  std::string out;
  for (const std::string& file : flags.files) {
    ReaderOptions options;
    // A message's own priority, or normal: parse shows what the message says, not a replay's.
    options.default_priority = Priority::kP1;
    absl::StatusOr<std::unique_ptr<TransactionReader>> reader = OpenTransactionFile(file, options);
    if (!reader.ok()) {
      std::cerr << "vigil parse: " << reader.status().message() << "\n";
      invalid = true;
      continue;
    }
    Transaction tx;
    RecordError error;
    for (;;) {
      absl::StatusOr<ReadResult> r = (*reader)->Next(&tx, &error);
      if (!r.ok()) {
        std::cerr << "vigil parse: " << file << ": " << r.status().message() << "\n";
        invalid = true;
        break;
      }
      if (*r == ReadResult::kEnd) break;
      if (*r == ReadResult::kRejected) {
        std::cerr << error.ToString() << " [" << error.reason << "]\n";
        (error.reason == "unsupported_message_type" ? unsupported : invalid) = true;
        continue;
      }
      out = TransactionToJson(tx);
      out += '\n';
      std::cout << out;
    }
  }
  std::cout.flush();
  if (invalid) return kExitUsage;
  if (unsupported) return kExitInputRejected;
  return kExitOk;
}

}  // namespace

Command AddParseCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ParseFlags>();
  CLI::App* app = vigil.add_subcommand(
      "parse",
      "Read payment messages and print the normalized transactions as JSON Lines: SWIFT MT103, "
      "MT202, MT202COV; ISO 20022 pacs.008, pacs.009; JSON Lines; AMLworld CSV (detected from "
      "the content)");
  app->add_option("FILE", flags->files, "Message files")->required()->check(CLI::ExistingFile);
  app->footer(
      "Example:\n  vigil parse testdata/swift_mt/messages/mt103_0003.fin\n"
      "Exit: 0 all read; 2 a record refused (stderr names the block, tag and line, or the "
      "XPath); 1 only messages of unsupported types (MT205, pacs.002, ...).");
  return Command{app, [flags] { return RunParse(*flags); }};
}

}  // namespace vigil::cli
