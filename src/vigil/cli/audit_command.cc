#include "vigil/cli/audit_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_export.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/audit/log_hash.h"
#include "vigil/audit/proof_bundle.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/signing_key.h"
#include "vigil/audit/tree_head.h"
#include "vigil/cli/data_dir_log.h"
#include "vigil/cli/data_files.h"
#include "vigil/cluster/partition_audit.h"
#include "vigil/common/private_file.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/decision.h"
#include "vigil/core/transaction.h"
#include "vigil/crypto/kek_command.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/store/kv_store.h"

namespace vigil::cli {
namespace {

struct AuditFlags {
  std::string data_dir;
  uint64_t from = 0;
  std::string pubkey;
  bool json = false;
  std::string txid;
  std::string out;
  uint64_t old_size = 0;
  uint64_t new_size = 0;  // 0: the latest tree head
  std::string old_head;   // prove-consistency: the older head, from a file the examiner holds
  std::vector<std::string> held_heads;  // verify: files of heads the examiner holds
  std::string file;
  std::string since, until, tx;
  std::string algorithm = "ed25519";
  std::string public_out;
  std::string kek;      // the key-encryption key's private half (PEM)
  // Or its public half (PEM) with a key-management hook: the command that unwraps a data key
  // through the key service holding the private half (crypto/kek_command.h).
  std::string kek_command;
  bool kek_command_given = false;  // also when given as ""
  std::string kek_public;
  std::string new_kek;  // rewrap: the new key-encryption key (PEM, public or private)
  std::string input;    // open: the export to read ("" or "-": stdin)
};

int Fail(std::string_view command, absl::string_view message, int code) {
  std::cerr << command << ": " << message << "\n";
  return code;
}

// An error met reading an opened log: damage (kDataLoss, or a record or node the log should
// hold and does not) is the log found wanting; anything else is the environment.
int LogReadError(std::string_view command, const absl::Status& s) {
  const bool damage = absl::IsDataLoss(s) || absl::IsNotFound(s);
  std::cerr << command << ": " << s.message() << (damage ? "; run `vigil audit verify`" : "")
            << "\n";
  return damage ? kExitInputRejected : kExitUsage;
}

// "1 record", "2 records".
std::string Count(uint64_t n, std::string_view noun) {
  return absl::StrCat(n, " ", ToAbsl(noun), n == 1 ? "" : "s");
}

std::string KeyPrefix(const std::string& key_id) { return key_id.substr(0, 16); }

std::string HeadName(const audit::SignedTreeHead& head) {
  return absl::StrCat("the tree head of size ", head.size, " at ", FormatUtc(head.time));
}

// ---------------------------------------------------------------------------------------------
// Writes "text" to "path", or to stdout when path is empty.
absl::Status WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text << std::flush;
    return absl::OkStatus();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// A record for people: the text of `show` (the export line is engine's AuditRecordViewJson).

std::string PartyLine(const Party& p) {
  std::vector<std::string> parts = {p.account_id};
  if (!p.name.empty()) parts.push_back(p.name);
  if (!p.bank_id.empty()) parts.push_back("bank " + p.bank_id);
  if (!p.country.empty()) parts.push_back(p.country);
  return absl::StrJoin(parts, ", ");
}

std::string ReasonLine(const Reason& r) {
  std::string line;
  switch (r.kind) {
    case Reason::Kind::kRule:
      line = absl::StrCat("rule       ", r.code,
                          r.shadow ? " (shadow: recorded, did not decide)" : "");
      break;
    case Reason::Kind::kModel:
      line = absl::StrFormat("model      %s %+.4f", r.code, r.contribution);
      break;
    case Reason::Kind::kScreening:
      line = absl::StrCat("screening  ", r.code);
      break;
  }
  if (!r.text.empty()) absl::StrAppend(&line, ": ", r.text);
  return line;
}

// One "  label         value" line of `show`.
void Line(const char* label, const std::string& value) {
  std::cout << absl::StrFormat("  %-13s %s\n", label, value);
}

// A party's line, then its address (its lines joined with "; ") when it has one.
void PartyLines(const char* label, const Party& p) {
  Line(label, PartyLine(p));
  std::vector<std::string> address;
  for (const std::string& line : p.address) {
    if (!line.empty()) address.push_back(line);
  }
  if (!address.empty()) Line("  address", absl::StrJoin(address, "; "));
}

void PrintPayment(const Transaction& tx) {
  std::string amount = tx.amount.ToString();
  if (tx.settled_amount.has_value()) {
    absl::StrAppend(&amount, " (settled ", tx.settled_amount->ToString(), ")");
  }
  Line("amount", amount);
  Line("payment", absl::StrCat(PaymentFormatJsonName(tx.payment_format),
                               tx.channel.empty() ? "" : ", channel ", tx.channel, ", priority ",
                               PriorityName(tx.priority)));
  Line("event time", FormatUtc(tx.event_time));
  PartyLines("originator", tx.originator);
  PartyLines("beneficiary", tx.beneficiary);
  if (tx.ultimate_originator.has_value()) PartyLines("ultimate orig", *tx.ultimate_originator);
  if (tx.ultimate_beneficiary.has_value()) PartyLines("ultimate bene", *tx.ultimate_beneficiary);
  if (!tx.remittance.empty()) Line("remittance", tx.remittance);
  if (tx.label.has_value()) {
    Line("label", absl::StrCat(tx.label->is_laundering ? "laundering" : "normal",
                               tx.label->typology.empty() ? "" : " (", tx.label->typology,
                               tx.label->typology.empty() ? "" : ")"));
  }
}

void PrintRecord(const audit::AuditRecord& r, const audit::Hash& leaf_hash,
                 const std::string& log_id) {
  const Decision& d = r.decision;
  const Transaction& tx = r.transaction;
  std::cout << "transaction " << tx.id << ": record " << r.sequence << " of audit log " << log_id
            << "\n";
  Line("received", FormatUtc(r.received));
  Line("decided",
       absl::StrCat(FormatUtc(r.decided), r.decided >= r.received
                                              ? absl::StrCat(" (", (r.decided - r.received).count(),
                                                             " µs after it was received)")
                                              : std::string()));
  Line("source", absl::StrCat(r.source, r.input_format.empty() ? "" : ", input ", r.input_format,
                              r.actor.empty() ? "" : ", actor ", r.actor));
  Line("action", absl::StrCat(ActionName(d.action), ", score ",
                              std::isnan(d.score) ? std::string("none (no model scored)")
                                                  : absl::StrFormat("%.6f", d.score)));
  std::string model = d.model_version.empty() ? "none (rules only)" : d.model_version;
  if (!d.model_role.empty()) absl::StrAppend(&model, " (", d.model_role, ")");
  if (!d.model_backend.empty()) absl::StrAppend(&model, ", scored on ", d.model_backend);
  if (!d.shadow_model_version.empty()) {
    absl::StrAppend(
        &model, "; shadow ", d.shadow_model_version, " scored ",
        std::isnan(d.shadow_score) ? std::string("none") : absl::StrFormat("%.6f", d.shadow_score));
  }
  Line("model", model);
  Line("policy", d.policy_version.empty() ? "none" : d.policy_version);
  Line("features",
       absl::StrCat(d.feature_schema_version.empty() ? "(no schema)" : d.feature_schema_version,
                    ", ", r.features.size(), " values"));
  Line("degraded", d.degraded ? absl::StrCat("yes: ", d.degraded_reason) : "no");
  Line("trace", absl::StrCat(d.trace_id.ToString(), d.traceparent.empty() ? "" : ", traceparent ",
                             d.traceparent));
  if (d.reasons.empty()) {
    Line("reasons", "none");
  } else {
    std::cout << "  reasons\n";
    for (const Reason& reason : d.reasons) std::cout << "    " << ReasonLine(reason) << "\n";
  }
  PrintPayment(tx);
  Line("input sha256", audit::HashHex(r.input_sha256));
  Line("leaf hash", audit::HashHex(leaf_hash));
}

// The record of "txid", decoded, with its leaf hash. kNotFound (message for the user) when the
// log does not hold it.
struct FoundRecord {
  audit::AuditRecord record;
  std::string bytes;
  audit::Hash leaf_hash{};
};
absl::StatusOr<FoundRecord> FindRecord(const audit::AuditLog& log, const std::string& txid) {
  VIGIL_ASSIGN_OR_RETURN(std::optional<uint64_t> sequence, log.FindTransaction(txid));
  if (!sequence.has_value()) {
    return absl::NotFoundError(absl::StrCat("transaction ", txid, " is not in the audit log"));
  }
  FoundRecord found;
  VIGIL_ASSIGN_OR_RETURN(found.bytes, log.ReadRecord(*sequence));
  VIGIL_ASSIGN_OR_RETURN(found.record, audit::DecodeRecord(found.bytes));
  if (found.record.sequence != *sequence || found.record.transaction.id != txid) {
    return absl::DataLossError(absl::StrCat("the index points ", txid, " at record ", *sequence,
                                            ", which is another record"));
  }
  found.leaf_hash = audit::LeafHash(log.hash(), found.bytes);
  return found;
}

// The signed tree heads in the file at "path", which an examiner kept: one head (JSON, as the
// log stores it), a proof bundle (its heads), or a `vigil audit verify --json` report (its
// latest head). Errors carry the message for the user (exit 2).
absl::StatusOr<std::vector<audit::SignedTreeHead>> ReadHeldHeads(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a JSON object"));
  }
  std::vector<const nlohmann::json*> found;
  if (j.contains("signature") && j.contains("root")) found.push_back(&j);
  for (const char* member : {"tree_head", "old_tree_head", "new_tree_head", "latest_tree_head"}) {
    if (j.contains(member) && j[member].is_object()) found.push_back(&j[member]);
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' holds no signed tree head (a head, a proof bundle, or a "
                                "`vigil audit verify --json` report)"));
  }
  std::vector<audit::SignedTreeHead> heads;
  for (const nlohmann::json* member : found) {
    absl::StatusOr<audit::SignedTreeHead> head = audit::TreeHeadFromJson(member->dump());
    if (!head.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "': ", head.status().message()));
    }
    heads.push_back(*std::move(head));
  }
  return heads;
}

// ---------------------------------------------------------------------------------------------
// The subcommands.

// The report of one log's check, as `verify` prints it; "prefix" begins each line (a
// partition's name in a cluster's export).
void PrintVerifyReport(const audit::VerifyReport& report, const audit::VerifyOptions& options,
                       const std::string& prefix) {
  std::cout << prefix;
  if (report.intact()) {
    std::cout << "intact: " << Count(report.records, "record")
              << (options.from > 0 ? absl::StrCat(" (checked from sequence ", options.from, ")")
                                   : "")
              << ", " << Count(report.tree_heads_checked, "signed tree head") << ", ";
    if (report.latest_tree_head.has_value()) {
      std::cout << "latest tree head size " << report.latest_tree_head->size << " at "
                << FormatUtc(report.latest_tree_head->time);
    } else {
      std::cout << "no signed tree head yet";
    }
    std::cout << " (key " << KeyPrefix(report.key_id) << ")";
    if (report.legacy_tree_heads > 0) {
      std::cout << "; " << report.legacy_tree_heads << " of the heads unchained (written before "
                << "heads were chained: a removed one is found only where a chained head "
                   "follows)";
    }
    if (!options.held_heads.empty()) {
      std::cout << "; extends " << Count(options.held_heads.size(), "held tree head");
    }
    std::cout << "\n";
  } else {
    std::cout << "DAMAGED at sequence " << report.damage->sequence << ": "
              << audit::DamageKindName(report.damage->kind) << ": " << report.damage->detail
              << "\n";
  }
}

// The check of the log in "data_dir"; errors carry the message for the user (exit 2).
absl::StatusOr<audit::VerifyReport> VerifyLogIn(const std::string& data_dir,
                                                const audit::VerifyOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(OpenedLog opened, OpenLog(data_dir));
  if (options.from > opened.log->size()) {
    return absl::InvalidArgumentError(absl::StrCat("--from ", options.from,
                                                   " is past the end of the log (",
                                                   Count(opened.log->size(), "record"), ")"));
  }
  return audit::VerifyAuditLog(*opened.log, options);
}

int RunVerify(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit verify";
  std::unique_ptr<audit::LogVerifier> trusted;
  if (!flags.pubkey.empty()) {
    absl::StatusOr<std::unique_ptr<audit::LogVerifier>> key =
        audit::LogVerifier::FromPemFile(flags.pubkey);
    if (!key.ok()) return Fail(kCommand, key.status().message(), kExitUsage);
    trusted = *std::move(key);
  }
  audit::VerifyOptions options;
  options.from = flags.from;
  options.trusted_key = trusted.get();
  for (const std::string& path : flags.held_heads) {
    absl::StatusOr<std::vector<audit::SignedTreeHead>> held = ReadHeldHeads(path);
    if (!held.ok()) return Fail(kCommand, absl::StrCat("--held-head: ", held.status().message()), kExitUsage);
    options.held_heads.insert(options.held_heads.end(), held->begin(), held->end());
  }
  // A cluster's export (`vigil cluster audit-export`): every partition's log, each checked as
  // one; intact when every one is.
  const std::vector<std::string> partitions = cluster::PartitionAuditDirs(flags.data_dir);
  const bool cluster_export = !partitions.empty();
  if (cluster_export && (flags.from > 0 || !flags.held_heads.empty())) {
    return Fail(kCommand,
                absl::StrCat(flags.data_dir, " is a cluster's export of ",
                             Count(partitions.size(), "partition log"),
                             ": --from and --held-head check one log; give --data-dir ",
                             flags.data_dir, "/partition-<p>"),
                kExitUsage);
  }
  const std::vector<std::string> dirs =
      cluster_export ? partitions : std::vector<std::string>{flags.data_dir};
  bool intact = true;
  uint64_t records = 0;  // checked: up to the damage, in a damaged log
  std::vector<size_t> damaged;
  std::string key_id;
  nlohmann::json reports = nlohmann::json::array();
  for (size_t p = 0; p < dirs.size(); ++p) {
    absl::StatusOr<audit::VerifyReport> report = VerifyLogIn(dirs[p], options);
    if (!report.ok()) return Fail(kCommand, report.status().message(), kExitUsage);
    intact = intact && report->intact();
    if (!report->intact()) damaged.push_back(p);
    records += report->records;
    key_id = report->key_id;
    const std::string prefix = cluster_export ? absl::StrCat("partition-", p, ": ") : "";
    if (!flags.json) {
      PrintVerifyReport(*report, options, prefix);
    } else if (!cluster_export) {
      std::cout << audit::VerifyReportToJson(*report) << "\n";
    } else {
      reports.push_back({{"partition", p},
                         {"data_dir", dirs[p]},
                         {"report", nlohmann::json::parse(audit::VerifyReportToJson(*report))}});
    }
  }
  if (cluster_export) {
    if (flags.json) {
      std::cout << nlohmann::json{{"intact", intact},
                                  {"records", records},
                                  {"damaged", damaged},
                                  {"partitions", reports}}
                       .dump()
                << "\n";
    } else if (intact) {
      std::cout << "intact: " << Count(dirs.size(), "partition log") << ", "
                << Count(records, "record") << " in all\n";
    } else {
      std::cout << "DAMAGED: " << damaged.size() << " of " << Count(dirs.size(), "partition log")
                << " (partition-" << absl::StrJoin(damaged, ", partition-") << ")\n";
    }
  }
  if (trusted == nullptr) {
    std::cerr << "note: checked with the public key in the log's own header (key "
              << KeyPrefix(key_id)
              << "); without --pubkey this proves only that the log is consistent with itself, "
                 "not who signed it\n";
  }
  return intact ? kExitOk : kExitInputRejected;
}

// The record view of `export` and of proof bundles, as JSON text (audit::RecordViewFn).
std::string RecordViewJson(const audit::AuditRecord& r, const audit::Hash& leaf_hash) {
  return AuditRecordViewJson(r, leaf_hash);
}

// The key-encryption key's private half from "path" (refused when its group or others may read
// it). Errors carry the message for the user (exit 2).
absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> LoadKek(const std::string& path) {
  absl::StatusOr<crypto::KeyEncryptionKey> kek = crypto::KeyEncryptionKey::LoadPrivateKeyFile(path);
  if (!kek.ok()) {
    return absl::Status(kek.status().code(),
                        absl::StrCat("--kek: ", kek.status().message()));
  }
  return std::make_shared<const crypto::KeyEncryptionKey>(*std::move(kek));
}

constexpr char kKekFlags[] =
    "--kek FILE (the key-encryption key's private half), or --kek-command CMD with --kek-public "
    "FILE (a key-management hook and the public half)";

// The key-encryption key that opens sealed fields: --kek's private half, or --kek-public's
// public half unwrapping through --kek-command. Null when none is given and "required" is
// false. Errors carry the message for the user (exit 2).
absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> LoadOpeningKek(
    const AuditFlags& flags, bool required) {
  const bool command = flags.kek_command_given;
  if (!flags.kek.empty() && (command || !flags.kek_public.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--kek and --kek-command/--kek-public are alternatives: give ", kKekFlags, ", not both"));
  }
  if (!flags.kek.empty()) return LoadKek(flags.kek);
  if (command && flags.kek_public.empty()) {
    return absl::InvalidArgumentError(
        "--kek-command needs --kek-public FILE: the key-encryption key's public half (PEM), "
        "which names the key id and algorithm the command is asked to unwrap with");
  }
  if (!command && !flags.kek_public.empty()) {
    return absl::InvalidArgumentError(
        "--kek-public is the public half for --kek-command; give --kek-command CMD too (or "
        "--kek FILE for a private key file)");
  }
  if (!command) {
    if (!required) return std::shared_ptr<const crypto::KeyEncryptionKey>();
    return absl::InvalidArgumentError(absl::StrCat("give ", kKekFlags));
  }
  if (absl::StripAsciiWhitespace(flags.kek_command).empty()) {
    return absl::InvalidArgumentError("--kek-command: the command is empty");
  }
  absl::StatusOr<crypto::KeyEncryptionKey> kek =
      crypto::KeyEncryptionKeyWithCommand(flags.kek_public, flags.kek_command);
  if (!kek.ok()) {
    return absl::Status(kek.status().code(),
                        absl::StrCat("--kek-public: ", kek.status().message()));
  }
  return std::make_shared<const crypto::KeyEncryptionKey>(*std::move(kek));
}

// Whether "s" is the key-management hook's failure (crypto::KeyEncryptionKey names it so):
// the environment, not the log or the export, is wanting (exit 2).
bool IsKeyHookError(const absl::Status& s) {
  return !s.ok() && s.message().find("key-management hook for key ") != absl::string_view::npos;
}

// An error opening sealed fields: the wrong key-encryption key (or a public one) is a usage
// error; a field that does not open, or a data key that is missing, is the log found wanting.
int OpenError(std::string_view command, const absl::Status& s) {
  if (absl::IsFailedPrecondition(s) || IsKeyHookError(s)) {
    return Fail(command, s.message(), kExitUsage);
  }
  return LogReadError(command, s);
}

// "<n> sealed personal fields under data key <id>".
std::string SealedSummary(size_t fields, const std::string& data_key_id) {
  return absl::StrCat(Count(fields, "sealed personal field"), " under data key ", data_key_id);
}

int RunProve(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit prove";
  // In a cluster's export, the partition whose log holds the decision.
  const std::vector<std::string> partitions = cluster::PartitionAuditDirs(flags.data_dir);
  const std::vector<std::string> dirs =
      partitions.empty() ? std::vector<std::string>{flags.data_dir} : partitions;
  absl::StatusOr<audit::ProofBundle> bundle = absl::NotFoundError("");
  std::string found_in;
  for (const std::string& dir : dirs) {
    absl::StatusOr<OpenedLog> opened = OpenLog(dir);
    if (!opened.ok()) return Fail(kCommand, opened.status().message(), kExitUsage);
    bundle = audit::InclusionBundle(*opened->log, flags.txid, RecordViewJson);
    found_in = dir;
    if (!absl::IsNotFound(bundle.status())) break;
  }
  if (absl::IsNotFound(bundle.status())) {
    if (!partitions.empty()) {
      return Fail(kCommand,
                  absl::StrCat("transaction ", flags.txid, " is in none of the ",
                               Count(partitions.size(), "partition log"), " of ", flags.data_dir),
                  kExitInputRejected);
    }
    return Fail(kCommand, bundle.status().message(), kExitInputRejected);
  }
  if (absl::IsFailedPrecondition(bundle.status())) {
    const audit::AuditLogOptions defaults;
    return Fail(kCommand,
                absl::StrCat(bundle.status().message(), "; try again after the next head (every ",
                             defaults.tree_head_every_records, " records or ",
                             defaults.tree_head_interval.count(),
                             " ms by default: audit.tree_head_every, audit.tree_head_interval_ms; "
                             "and when the server stops)"),
                kExitInputRejected);
  }
  if (!bundle.ok()) return LogReadError(kCommand, bundle.status());
  if (absl::Status s = WriteOutput(flags.out, bundle->json); !s.ok()) {
    return Fail(kCommand, s.message(), kExitUsage);
  }
  std::cerr << "inclusion of transaction " << flags.txid << " (record " << bundle->proof.sequence
            << (partitions.empty() ? std::string() : " of " + found_in) << ") in "
            << HeadName(bundle->proof.tree_head)
            << (flags.out.empty() ? "" : " written to " + flags.out) << "\n";
  return kExitOk;
}

// prove-consistency from a head the examiner holds (--old-head) to the latest.
int ProveFromHeldHead(const AuditFlags& flags, const audit::AuditLog& log,
                      const std::vector<audit::SignedTreeHead>& heads) {
  constexpr char kCommand[] = "vigil audit prove-consistency";
  absl::StatusOr<std::vector<audit::SignedTreeHead>> held = ReadHeldHeads(flags.old_head);
  if (!held.ok()) return Fail(kCommand, absl::StrCat("--old-head: ", held.status().message()), kExitUsage);
  // A bundle's heads: the oldest is the one to extend.
  audit::SignedTreeHead old_head = held->front();
  for (const audit::SignedTreeHead& h : *held) {
    if (h.size < old_head.size) old_head = h;
  }
  if (old_head.log_id != log.header().log_id) {
    return Fail(kCommand, absl::StrCat("--old-head: ", HeadName(old_head), " is of audit log ",
                                       old_head.log_id, ", not of this one (",
                                       log.header().log_id, ")"),
                kExitUsage);
  }
  absl::StatusOr<std::unique_ptr<audit::LogVerifier>> key =
      audit::LogVerifier::FromPem(log.header().public_key_pem, "the audit log's header");
  if (!key.ok()) return Fail(kCommand, key.status().message(), kExitUsage);
  if (absl::Status s = audit::VerifyTreeHead(**key, old_head); !s.ok()) {
    return Fail(kCommand, absl::StrCat("--old-head: does not verify with the log's key: ",
                                       s.message()),
                kExitUsage);
  }
  if (old_head.size == 0) {
    return Fail(kCommand, "--old-head: the head of size 0 is extended by every log", kExitUsage);
  }
  const audit::SignedTreeHead& latest = heads.back();
  if (old_head.size > latest.size) {
    return Fail(kCommand,
                absl::StrCat("the log does not extend ", HeadName(old_head), ": ",
                             log.size() < old_head.size
                                 ? absl::StrCat("it holds ", Count(log.size(), "record"))
                                 : absl::StrCat("its newest signed tree head is of size ",
                                                latest.size),
                             " (truncated, or its newer heads removed); run `vigil audit "
                             "verify --held-head ",
                             flags.old_head, "`"),
                kExitInputRejected);
  }
  absl::StatusOr<audit::ProofBundle> bundle = audit::ConsistencyBundle(log, old_head, latest);
  if (!bundle.ok()) {
    return Fail(kCommand,
                absl::StrCat("the log does not extend ", HeadName(old_head), ": ",
                             bundle.status().message(), "; run `vigil audit verify --held-head ",
                             flags.old_head, "`"),
                absl::IsDataLoss(bundle.status()) || absl::IsNotFound(bundle.status())
                    ? kExitInputRejected
                    : kExitUsage);
  }
  if (absl::Status s = WriteOutput(flags.out, bundle->json); !s.ok()) {
    return Fail(kCommand, s.message(), kExitUsage);
  }
  std::cerr << "consistency of the held " << HeadName(old_head) << " with " << HeadName(latest)
            << (flags.out.empty() ? "" : " written to " + flags.out) << "\n";
  return kExitOk;
}

int RunProveConsistency(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit prove-consistency";
  if ((flags.old_size == 0) == flags.old_head.empty()) {
    return Fail(kCommand, "give --old SIZE (a head the log holds) or --old-head FILE (one you hold)",
                kExitUsage);
  }
  if (!flags.old_head.empty() && flags.new_size != 0) {
    return Fail(kCommand, "--old-head proves consistency with the latest head: leave out --new",
                kExitUsage);
  }
  if (flags.new_size != 0 && flags.new_size < flags.old_size) {
    return Fail(kCommand, "--old must not be larger than --new", kExitUsage);
  }
  absl::StatusOr<OpenedLog> opened = OpenLog(flags.data_dir);
  if (!opened.ok()) return Fail(kCommand, opened.status().message(), kExitUsage);
  const audit::AuditLog& log = *opened->log;
  absl::StatusOr<std::vector<audit::SignedTreeHead>> heads = log.TreeHeads();
  if (!heads.ok()) return LogReadError(kCommand, heads.status());
  if (heads->empty()) {
    return Fail(kCommand, "the audit log has no signed tree head yet", kExitInputRejected);
  }
  if (!flags.old_head.empty()) return ProveFromHeldHead(flags, log, *heads);
  const auto find = [&](uint64_t size) -> const audit::SignedTreeHead* {
    for (const audit::SignedTreeHead& h : *heads) {
      if (h.size == size) return &h;
    }
    return nullptr;
  };
  const audit::SignedTreeHead* old_head = find(flags.old_size);
  const audit::SignedTreeHead* new_head =
      flags.new_size == 0 ? &heads->back() : find(flags.new_size);
  if (old_head == nullptr || new_head == nullptr) {
    // The sizes it has, the first and last few of them when there are many.
    std::vector<std::string> sizes;
    for (size_t i = 0; i < heads->size(); ++i) {
      if (heads->size() > 12 && i == 6) sizes.push_back("…");
      if (heads->size() <= 12 || i < 6 || i >= heads->size() - 6) {
        sizes.push_back(absl::StrCat((*heads)[i].size));
      }
    }
    return Fail(
        kCommand,
        absl::StrCat("the audit log has no signed tree head of size ",
                     old_head == nullptr ? flags.old_size : flags.new_size, " (",
                     Count(heads->size(), "head"), ", of sizes ", absl::StrJoin(sizes, ", "), ")"),
        kExitInputRejected);
  }
  if (old_head->size > new_head->size) {
    return Fail(kCommand,
                absl::StrCat("--old ", old_head->size, " is larger than the latest head's size ",
                             new_head->size),
                kExitUsage);
  }
  absl::StatusOr<audit::ProofBundle> bundle = audit::ConsistencyBundle(log, *old_head, *new_head);
  if (!bundle.ok()) return LogReadError(kCommand, bundle.status());
  if (absl::Status s = WriteOutput(flags.out, bundle->json); !s.ok()) {
    return Fail(kCommand, s.message(), kExitUsage);
  }
  std::cerr << "consistency of " << HeadName(*old_head) << " with " << HeadName(*new_head)
            << (flags.out.empty() ? "" : " written to " + flags.out) << "\n";
  return kExitOk;
}

// The line after "valid: ".
std::string ProofSummary(const audit::CheckedProof& proof, const audit::LogVerifier& key) {
  if (proof.type == audit::ProofType::kInclusion) {
    return absl::StrCat("transaction ", proof.transaction_id, " is record ", proof.sequence,
                        " of audit log ", proof.log_id, ", included in ", HeadName(proof.tree_head),
                        " signed by key ", KeyPrefix(key.key_id()), " (decided ",
                        ActionName(proof.action), " at ", FormatUtc(proof.decided), ")");
  }
  return absl::StrCat(HeadName(*proof.old_tree_head), " is a prefix of ", HeadName(proof.tree_head),
                      " of audit log ", proof.log_id, ", both signed by key ",
                      KeyPrefix(key.key_id()));
}

int RunCheckProof(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit check-proof";
  std::ifstream in(flags.file, std::ios::binary);
  if (!in) return Fail(kCommand, absl::StrCat("cannot read '", flags.file, "'"), kExitUsage);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::unique_ptr<audit::LogVerifier>> key =
      audit::LogVerifier::FromPemFile(flags.pubkey);
  if (!key.ok()) return Fail(kCommand, key.status().message(), kExitUsage);
  // Not a bundle (kInvalidArgument) and a bundle that proves nothing (kDataLoss) are both
  // the input found wanting.
  absl::StatusOr<audit::CheckedProof> checked =
      audit::CheckProofBundle(text, **key, RecordViewJson);
  if (!checked.ok()) {
    std::cout << "INVALID: " << checked.status().message() << "\n";
    return kExitInputRejected;
  }
  std::cout << "valid: " << ProofSummary(*checked, **key) << "\n";
  return kExitOk;
}

int RunShow(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit show";
  absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> loaded =
      LoadOpeningKek(flags, /*required=*/false);
  if (!loaded.ok()) return Fail(kCommand, loaded.status().message(), kExitUsage);
  const std::shared_ptr<const crypto::KeyEncryptionKey> kek = *std::move(loaded);
  absl::StatusOr<OpenedLog> opened = OpenLog(flags.data_dir);
  if (!opened.ok()) return Fail(kCommand, opened.status().message(), kExitUsage);
  absl::StatusOr<FoundRecord> found = FindRecord(*opened->log, flags.txid);
  if (absl::IsNotFound(found.status())) {
    return Fail(kCommand, found.status().message(), kExitInputRejected);
  }
  if (!found.ok()) return LogReadError(kCommand, found.status());
  audit::AuditRecord& record = found->record;
  const size_t sealed = record.sealed.size();
  if (kek != nullptr && sealed > 0) {
    const std::unique_ptr<audit::RecordOpener> opener =
        audit::RecordOpener::ForLog(*opened->log, kek);
    if (absl::Status s = opener->Open(record); !s.ok()) return OpenError(kCommand, s);
  }
  if (flags.json) {
    std::cout << audit::ExportRecordLine(record, found->leaf_hash, RecordViewJson) << "\n";
    return kExitOk;
  }
  // What is still sealed shows as "[sealed]" in its place.
  audit::AuditRecord shown = record;
  for (const audit::SealedField& field : record.sealed) {
    audit::MarkSealedField(field.path, "[sealed]", shown.transaction)
        .IgnoreError();  // DecodeRecord's paths always have their place
  }
  PrintRecord(shown, found->leaf_hash, opened->log->header().log_id);
  if (sealed > 0) {
    Line("sealed", absl::StrCat(SealedSummary(sealed, record.data_key_id),
                                record.sealed.empty() ? ", opened" : "; --kek opens them"));
  }
  return kExitOk;
}

absl::StatusOr<std::optional<UtcTime>> ParseTimeFlag(const std::string& flag, const char* name) {
  if (flag.empty()) return std::optional<UtcTime>();
  absl::StatusOr<UtcTime> t = ParseRfc3339(flag);
  if (!t.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " '", flag, "': ", t.status().message()));
  }
  return std::optional<UtcTime>(*t);
}

int RunExport(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit export";
  absl::StatusOr<std::optional<UtcTime>> since = ParseTimeFlag(flags.since, "--since");
  absl::StatusOr<std::optional<UtcTime>> until = ParseTimeFlag(flags.until, "--until");
  if (!since.ok() || !until.ok()) {
    return Fail(kCommand, (!since.ok() ? since : until).status().message(), kExitUsage);
  }
  absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> loaded =
      LoadOpeningKek(flags, /*required=*/false);
  if (!loaded.ok()) return Fail(kCommand, loaded.status().message(), kExitUsage);
  const std::shared_ptr<const crypto::KeyEncryptionKey> kek = *std::move(loaded);
  absl::StatusOr<OpenedLog> opened = OpenLog(flags.data_dir);
  if (!opened.ok()) return Fail(kCommand, opened.status().message(), kExitUsage);
  const audit::AuditLog& log = *opened->log;
  std::unique_ptr<audit::RecordOpener> opener;
  if (kek != nullptr) opener = audit::RecordOpener::ForLog(log, kek);
  std::ofstream file;
  if (!flags.out.empty()) {
    file.open(flags.out, std::ios::binary | std::ios::trunc);
    if (!file) return Fail(kCommand, absl::StrCat("cannot write '", flags.out, "'"), kExitUsage);
  }
  std::ostream& out = flags.out.empty() ? std::cout : file;
  audit::ExportRange range;
  range.since = *since;
  range.until = *until;
  range.transaction_id = flags.tx;
  absl::StatusOr<audit::ExportSummary> summary = audit::WriteExport(
      log, range, opener.get(), RecordViewJson, [&](std::string_view line) {
        out << line << "\n";
        return absl::OkStatus();
      });
  if (!summary.ok()) {
    if (!flags.tx.empty() && absl::IsNotFound(summary.status()) &&
        summary.status().message().find("not in the audit log") != absl::string_view::npos) {
      return Fail(kCommand, summary.status().message(), kExitInputRejected);
    }
    return OpenError(kCommand, summary.status());
  }
  out.flush();
  if (!out) return Fail(kCommand, absl::StrCat("cannot write '", flags.out, "'"), kExitUsage);
  std::cerr << "exported " << summary->exported << " of " << Count(summary->examined, "record")
            << (flags.out.empty() ? "" : " to " + flags.out);
  if (summary->sealed > 0) {
    std::cerr << "; " << summary->sealed << " with sealed personal fields (--kek opens them), "
              << Count(summary->data_keys, "data key") << " included";
  }
  std::cerr << "\n";
  return kExitOk;
}

int RunOpen(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit open";
  absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> kek =
      LoadOpeningKek(flags, /*required=*/true);
  if (!kek.ok()) return Fail(kCommand, kek.status().message(), kExitUsage);
  std::ifstream file;
  const bool from_stdin = flags.input.empty() || flags.input == "-";
  if (!from_stdin) {
    file.open(flags.input, std::ios::binary);
    if (!file) return Fail(kCommand, absl::StrCat("cannot read '", flags.input, "'"), kExitUsage);
  }
  std::ofstream out_file;
  if (!flags.out.empty()) {
    out_file.open(flags.out, std::ios::binary | std::ios::trunc);
    if (!out_file) {
      return Fail(kCommand, absl::StrCat("cannot write '", flags.out, "'"), kExitUsage);
    }
  }
  std::ostream& out = flags.out.empty() ? std::cout : out_file;
  audit::RecordOpener opener(*kek);
  absl::StatusOr<audit::ExportSummary> summary =
      audit::OpenExport(from_stdin ? std::cin : file, opener, [&](std::string_view line) {
        out << line << "\n";
        return absl::OkStatus();
      });
  if (!summary.ok()) {
    if (absl::IsFailedPrecondition(summary.status())) {
      return Fail(kCommand, summary.status().message(), kExitUsage);
    }
    if (absl::IsUnavailable(summary.status()) || IsKeyHookError(summary.status())) {
      return Fail(kCommand, summary.status().message(), kExitUsage);
    }
    return Fail(kCommand, summary.status().message(), kExitInputRejected);
  }
  out.flush();
  if (!out) return Fail(kCommand, absl::StrCat("cannot write '", flags.out, "'"), kExitUsage);
  std::cerr << "opened " << summary->sealed << " of " << Count(summary->exported, "record")
            << " (" << Count(summary->data_keys, "data key") << ")"
            << (flags.out.empty() ? "" : " to " + flags.out) << "\n";
  return kExitOk;
}

int RunRewrap(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit rewrap";
  absl::StatusOr<std::shared_ptr<const crypto::KeyEncryptionKey>> old_kek =
      LoadOpeningKek(flags, /*required=*/true);
  if (!old_kek.ok()) return Fail(kCommand, old_kek.status().message(), kExitUsage);
  absl::StatusOr<crypto::KeyEncryptionKey> new_kek =
      crypto::KeyEncryptionKey::LoadPublicKeyFile(flags.new_kek);
  if (!new_kek.ok()) {
    // A private key file holds its public half too.
    absl::StatusOr<crypto::KeyEncryptionKey> private_half =
        crypto::KeyEncryptionKey::LoadPrivateKeyFile(flags.new_kek);
    if (!private_half.ok()) {
      return Fail(kCommand, absl::StrCat("--new-kek: ", new_kek.status().message()), kExitUsage);
    }
    new_kek = std::move(private_half);
  }
  if (new_kek->key_id() == (*old_kek)->key_id()) {
    return Fail(
        kCommand,
        absl::StrCat("--new-kek is the same key-encryption key as ",
                     flags.kek.empty() ? "--kek-public" : "--kek", " (", new_kek->key_id(), ")"),
        kExitUsage);
  }
  absl::StatusOr<OpenedLog> opened = OpenLog(flags.data_dir);
  if (!opened.ok()) return Fail(kCommand, opened.status().message(), kExitUsage);
  if (opened->follower_dir != nullptr) {
    return Fail(kCommand,
                "a running `vigil serve` (or `vigil replay`) holds the store; stop it first (the "
                "data keys are rewritten in place)",
                kExitUsage);
  }
  absl::StatusOr<std::vector<crypto::WrappedDataKey>> keys = opened->log->DataKeys();
  if (!keys.ok()) return LogReadError(kCommand, keys.status());
  if (keys->empty()) {
    std::cout << "no data keys: the log's records are not sealed\n";
    return kExitOk;
  }
  absl::StatusOr<uint64_t> rewrapped = opened->log->RewrapDataKeys(**old_kek, *new_kek);
  if (!rewrapped.ok()) {
    if (absl::IsFailedPrecondition(rewrapped.status()) || IsKeyHookError(rewrapped.status())) {
      return Fail(kCommand, rewrapped.status().message(), kExitUsage);
    }
    return LogReadError(kCommand, rewrapped.status());
  }
  std::cout << "re-wrapped " << Count(*rewrapped, "data key") << " from key-encryption key "
            << (*old_kek)->key_id() << " to " << new_kek->key_id();
  if (*rewrapped < keys->size()) {
    std::cout << " (" << keys->size() - *rewrapped << " already under " << new_kek->key_id()
              << ")";
  }
  std::cout << "; the records are unchanged\n";
  return kExitOk;
}

int RunKeygen(const AuditFlags& flags) {
  constexpr char kCommand[] = "vigil audit keygen";
  absl::StatusOr<audit::SignatureAlgorithm> algorithm =
      audit::ParseSignatureAlgorithm(flags.algorithm);
  if (!algorithm.ok()) {
    return Fail(kCommand, absl::StrCat("--algorithm: ", algorithm.status().message()), kExitUsage);
  }
  // Both refused before either is written: a key is never replaced by accident, and a clash
  // over the public key's file leaves no new private key behind.
  constexpr char kPrivateWhat[] = "signing key", kPublicWhat[] = "public key";
  if (absl::Status s = CheckAbsent(flags.out, kPrivateWhat); !s.ok()) {
    return Fail(kCommand, s.message(), kExitUsage);
  }
  if (!flags.public_out.empty()) {
    if (absl::Status s = CheckAbsent(flags.public_out, kPublicWhat); !s.ok()) {
      return Fail(kCommand, s.message(), kExitUsage);
    }
  }
  absl::StatusOr<std::string> pem = audit::GeneratePrivateKeyPem(*algorithm);
  if (!pem.ok()) return Fail(kCommand, pem.status().message(), kExitUsage);
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer =
      audit::LogSigner::FromPem(*pem, "new key");
  if (!signer.ok()) return Fail(kCommand, signer.status().message(), kExitUsage);
  if (absl::Status s = CreateNewFile(flags.out, *pem, kPrivateWhat); !s.ok()) {
    return Fail(kCommand, s.message(), kExitUsage);
  }
  if (!flags.public_out.empty()) {
    if (absl::Status s = CreateNewFile(flags.public_out, (*signer)->PublicKeyPem(), kPublicWhat,
                                       /*mode=*/0644);
        !s.ok()) {
      return Fail(kCommand, s.message(), kExitUsage);
    }
  }
  std::cout << (*signer)->PublicKeyPem();
  std::cerr << "key id " << (*signer)->key_id() << " (" << audit::SignatureAlgorithmName(*algorithm)
            << "); private key written to " << flags.out << " (mode 0600)"
            << (flags.public_out.empty() ? "" : ", public key to " + flags.public_out) << "\n";
  return kExitOk;
}

// One subcommand of `vigil audit`: its sub-app and what runs it once parsed.
struct Subcommand {
  CLI::App* app = nullptr;
  int (*run)(const AuditFlags&) = nullptr;
};

// --kek-command and --kek-public, the alternative to --kek (a private key file) where the
// private half stays in a key service.
void AddKekCommandOptions(CLI::App* app, AuditFlags* flags) {
  app->add_option("--kek-command", flags->kek_command,
                  "Instead of --kek: a key-management hook, the command that unwraps each data "
                  "key through the key service holding the private half (an HSM, a KMS). Run "
                  "with /bin/sh -c, the wrapped key in base64 on stdin, VIGIL_KEK_ID and "
                  "VIGIL_KEK_ALGORITHM set; it prints the data key in base64 (docs/security.md, "
                  "\"Key-management hook\")")
      ->each([flags](const std::string&) { flags->kek_command_given = true; });
  app->add_option("--kek-public", flags->kek_public,
                  "With --kek-command: the key-encryption key's public half (PEM)");
}

// A subcommand that reads the log of a data dir: `--data-dir`, which must exist. "flags" outlives
// the sub-app (Command::run holds it).
CLI::App* AddLogSubcommand(CLI::App* audit, const char* name, const char* description,
                           AuditFlags* flags) {
  CLI::App* sub = audit->add_subcommand(name, description);
  AddDataDirOption(sub, &flags->data_dir, DataDirUse::kExisting);
  return sub;
}

Subcommand AddVerify(CLI::App* audit, AuditFlags* flags) {
  CLI::App* verify = AddLogSubcommand(
      audit, "verify",
      "Check the whole log: every record's encoding, the hash chain, the Merkle tree, the index "
      "and every signed tree head; name the first damage (exit 1) or say it is intact",
      flags);
  verify->add_option("--from", flags->from,
                     "Re-hash records from this sequence on (those before are taken from the "
                     "stored tree; the tree heads are all checked)");
  verify->add_option("--pubkey", flags->pubkey,
                     "The public key the tree heads must verify with (PEM). Without it, the key "
                     "in the log's own header: self-consistency only");
  verify->add_flag("--json", flags->json, "Print the report as JSON");
  verify->add_option("--held-head", flags->held_heads,
                     "A file with a signed tree head you hold from earlier (a head, a proof "
                     "bundle, a `verify --json` report; repeatable): the log must extend it "
                     "(else truncated or modified), whether or not it still stores it");
  verify->footer(
      "Examples:\n  vigil audit verify --data-dir state/ --pubkey audit_pub.pem\n"
      "  vigil audit verify --data-dir state/ --json\n"
      "  vigil audit verify --data-dir state/ --pubkey audit_pub.pem --held-head "
      "tx42.proof.json\n"
      "  vigil audit verify --data-dir audit/ --pubkey audit_pub.pem   # a cluster's export: "
      "every partition-<p>\n"
      "Prints 'intact: N records, ...' (exit 0) or 'DAMAGED at sequence N: KIND: DETAIL' (exit "
      "1); KIND is modified, deleted, reordered, truncated, bad_signature, missing_key or "
      "missing_head. For a cluster's export (vigil cluster audit-export), a line per partition "
      "and one for all: intact when every partition's log is.");
  return {verify, RunVerify};
}

Subcommand AddProve(CLI::App* audit, AuditFlags* flags) {
  CLI::App* prove = AddLogSubcommand(
      audit, "prove",
      "Write a self-contained proof (JSON, vigil-audit-proof/v1) that a transaction's decision "
      "is in the log: the record's bytes, the latest signed tree head and the Merkle path",
      flags);
  prove->add_option("TXID", flags->txid, "The transaction id")->required();
  prove->add_option("--out", flags->out, "Write the proof here (default: stdout)");
  prove->footer(
      "Example:\n  vigil audit prove --data-dir state/ tx-2026-000042 --out tx42.proof.json\n"
      "  vigil audit check-proof tx42.proof.json --pubkey audit_pub.pem");
  return {prove, RunProve};
}

Subcommand AddProveConsistency(CLI::App* audit, AuditFlags* flags) {
  CLI::App* consistency = AddLogSubcommand(
      audit, "prove-consistency",
      "Write a proof (JSON, vigil-audit-proof/v1) that the log at an older signed tree head is "
      "a prefix of the log at a newer one: nothing recorded before was changed or removed",
      flags);
  consistency->add_option("--old", flags->old_size, "Size of the older signed tree head")
      ->check(CLI::PositiveNumber);
  consistency->add_option("--old-head", flags->old_head,
                          "Instead of --old: a file with the older head, as you hold it (a head, "
                          "a proof bundle, a `verify --json` report); the log need not still "
                          "store it. Exit 1 when the log does not extend it");
  consistency->add_option("--new", flags->new_size,
                          "Size of the newer signed tree head (default: the latest)");
  consistency->add_option("--out", flags->out, "Write the proof here (default: stdout)");
  consistency->footer(
      "Example:\n  vigil audit prove-consistency --data-dir state/ --old 10000 --out "
      "since-10000.proof.json\n  vigil audit prove-consistency --data-dir state/ --old-head "
      "tx42.proof.json --out since.proof.json\n  vigil audit check-proof since-10000.proof.json --pubkey "
      "audit_pub.pem");
  return {consistency, RunProveConsistency};
}

Subcommand AddCheckProof(CLI::App* audit, AuditFlags* flags) {
  CLI::App* check = audit->add_subcommand(
      "check-proof",
      "Check a proof written by `prove` or `prove-consistency` with nothing but the file and "
      "the log's public key: 'valid: ...' (exit 0) or 'INVALID: reason' (exit 1)");
  check->add_option("FILE", flags->file, "The proof (JSON)")->required();
  check->add_option("--pubkey", flags->pubkey, "The log's public key (PEM)")->required();
  check->footer("Example:\n  vigil audit check-proof tx42.proof.json --pubkey audit_pub.pem");
  return {check, RunCheckProof};
}

Subcommand AddShow(CLI::App* audit, AuditFlags* flags) {
  CLI::App* show = AddLogSubcommand(
      audit, "show",
      "Show one recorded decision: times, action, score, versions, reasons, the payment", flags);
  show->add_option("TXID", flags->txid, "The transaction id")->required();
  show->add_flag("--json", flags->json, "Print the record as `export` writes it");
  show->add_option("--kek", flags->kek,
                   "The key-encryption key's private half (PEM, mode 0600): open the sealed "
                   "personal fields (names, accounts, remittance)");
  AddKekCommandOptions(show, flags);
  show->footer(
      "Examples:\n  vigil audit show --data-dir state/ tx-2026-000042 --kek kek.pem\n"
      "  vigil audit show --data-dir state/ tx-2026-000042 --kek-command /etc/vigil/kek-hook.sh "
      "--kek-public kek.pub.pem");
  return {show, RunShow};
}

Subcommand AddExport(CLI::App* audit, AuditFlags* flags) {
  CLI::App* export_app = AddLogSubcommand(
      audit, "export",
      "Export records as JSON Lines for an examiner: the decision, the transaction, the "
      "features, the hashes; by decision time or one transaction",
      flags);
  CLI::Option* since = export_app->add_option("--since", flags->since,
                                              "Records decided at or after this time (RFC 3339)");
  CLI::Option* until = export_app->add_option("--until", flags->until,
                                              "Records decided before this time (RFC 3339)");
  export_app->add_option("--tx", flags->tx, "Only the record of this transaction")
      ->excludes(since)
      ->excludes(until);
  export_app->add_option("--out", flags->out, "Write here (default: stdout)");
  export_app->add_option("--kek", flags->kek,
                         "The key-encryption key's private half (PEM, mode 0600): open the "
                         "sealed personal fields. Without it they are written sealed, with the "
                         "wrapped data keys, for `vigil audit open`");
  AddKekCommandOptions(export_app, flags);
  export_app->footer(
      "Example:\n  vigil audit export --data-dir state/ --since 2026-11-01T00:00:00Z --until "
      "2026-12-01T00:00:00Z --out november.jsonl");
  return {export_app, RunExport};
}

Subcommand AddOpen(CLI::App* audit, AuditFlags* flags) {
  CLI::App* open = audit->add_subcommand(
      "open",
      "Open the sealed personal fields of an export written without --kek, offline: the same "
      "lines an export with the key writes");
  open->add_option("--kek", flags->kek,
                   "The key-encryption key's private half (PEM, mode 0600); or --kek-command "
                   "with --kek-public");
  AddKekCommandOptions(open, flags);
  open->add_option("--input", flags->input, "The export (default: stdin)");
  open->add_option("--out", flags->out, "Write here (default: stdout)");
  open->footer(
      "Example:\n  vigil audit export --data-dir state/ --out sealed.jsonl\n  vigil audit open "
      "--kek kek.pem --input sealed.jsonl --out november.jsonl");
  return {open, RunOpen};
}

Subcommand AddRewrap(CLI::App* audit, AuditFlags* flags) {
  CLI::App* rewrap = AddLogSubcommand(
      audit, "rewrap",
      "Rotate the key-encryption key: re-wrap the log's data keys under a new one (the records "
      "are not rewritten; verification is unaffected)",
      flags);
  rewrap->add_option("--kek", flags->kek,
                     "The current key-encryption key's private half (PEM, mode 0600); or "
                     "--kek-command with --kek-public");
  AddKekCommandOptions(rewrap, flags);
  rewrap->add_option("--new-kek", flags->new_kek,
                     "The new key-encryption key (PEM; its public half is enough)")
      ->required();
  rewrap->footer(
      "Example:\n  vigil audit rewrap --data-dir state/ --kek kek-2026.pem --new-kek "
      "kek-2027.pub.pem\n  (configure writers with the new key first; stop the server while "
      "this runs)");
  return {rewrap, RunRewrap};
}

Subcommand AddKeygen(CLI::App* audit, AuditFlags* flags) {
  CLI::App* keygen = audit->add_subcommand(
      "keygen",
      "Make a new signing key for the log (unencrypted PKCS#8 PEM, mode 0600); print its public "
      "key (stdout) and key id (stderr)");
  keygen->add_option("--out", flags->out, "The private key file to create (never overwritten)")
      ->required();
  keygen->add_option("--algorithm", flags->algorithm, "ed25519 or sm2")->capture_default_str();
  keygen->add_option("--public-out", flags->public_out, "Also write the public key here");
  keygen->footer(
      "Example:\n  vigil audit keygen --out /etc/vigil/audit_key.pem --public-out "
      "audit_pub.pem\n  (then `vigil serve --audit-key /etc/vigil/audit_key.pem`, or "
      "audit.signing_key in its config)");
  return {keygen, RunKeygen};
}

}  // namespace

Command AddAuditCommand(CLI::App& vigil) {
  auto flags = std::make_shared<AuditFlags>();
  CLI::App* app = vigil.add_subcommand(
      "audit", "Examine the tamper-evident decision log: verify, prove, check proofs, export");
  app->require_subcommand(1);
  app->footer(
      "The log is in <data dir>/features, kept by `vigil serve` and `vigil replay`; stop a "
      "running server first (or ask it: GET /v1/audit/verify). See docs/audit-cli.md.");
  const std::vector<Subcommand> subcommands = {AddVerify(app, flags.get()),
                                               AddProve(app, flags.get()),
                                               AddProveConsistency(app, flags.get()),
                                               AddCheckProof(app, flags.get()),
                                               AddShow(app, flags.get()),
                                               AddExport(app, flags.get()),
                                               AddOpen(app, flags.get()),
                                               AddRewrap(app, flags.get()),
                                               AddKeygen(app, flags.get())};
  return Command{app, [flags, subcommands] {
                   for (const Subcommand& sub : subcommands) {
                     if (sub.app->parsed()) return sub.run(*flags);
                   }
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
