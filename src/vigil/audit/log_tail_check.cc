#include "vigil/audit/log_tail_check.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/audit/internal/head_chain.h"
#include "vigil/audit/tree_head.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/store/kv_store.h"

namespace vigil::audit {
namespace {

// The stored heads from "from_size" on, parsed where they parse and are what their key says.
absl::StatusOr<std::vector<internal::StoredHead>> ReadHeads(const AuditLog& log,
                                                            uint64_t from_size) {
  VIGIL_ASSIGN_OR_RETURN(auto stored, log.StoredTreeHeads(from_size));
  std::vector<internal::StoredHead> heads;
  heads.reserve(stored.size());
  for (const auto& [key, json] : stored) {
    internal::StoredHead& entry = heads.emplace_back(internal::StoredHead{key, {}});
    absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(json);
    if (head.ok() && head->size == key && head->log_id == log.header().log_id) {
      entry.head = *std::move(head);
    }
  }
  return heads;
}

// Whether "head" is the one the last check ended at.
bool IsVerifiedHead(const std::optional<SignedTreeHead>& head,
                    const AuditLog::VerifiedHead& verified) {
  return head.has_value() && head->size == verified.size && head->chain.has_value() &&
         head->chain->index == verified.index && TreeHeadHash(*head) == verified.hash;
}

}  // namespace

absl::StatusOr<TailCheckReport> CheckLogTail(const AuditLog& log, const LogVerifier& key) {
  TailCheckReport report;
  VIGIL_ASSIGN_OR_RETURN(const std::optional<AuditLog::VerifiedHead> verified,
                         log.ReadVerifiedHead());
  VIGIL_ASSIGN_OR_RETURN(const std::vector<internal::StoredHead> heads,
                         ReadHeads(log, verified.has_value() ? verified->size : 0));
  report.heads_checked = heads.size();
  std::optional<Damage> damage;
  uint64_t first_position = 0;
  if (verified.has_value()) {
    if (heads.empty() || !IsVerifiedHead(heads.front().head, *verified)) {
      internal::KeepFirst(damage, {DamageKind::kMissingHead, verified->size,
                                   absl::StrCat("the tree head of size ", verified->size,
                                                " (index ", verified->index,
                                                "), up to which the log was checked when it was "
                                                "last opened, is no longer stored as it was")});
    }
    first_position = verified->index;
  }
  const internal::ChainCheck chain = internal::CheckHeadChain(heads, first_position);
  if (chain.damage.has_value()) internal::KeepFirst(damage, *chain.damage);
  for (auto it = heads.rbegin(); it != heads.rend() && !report.newest.has_value(); ++it) {
    report.newest = it->head;
  }
  // The newest head's signature and root, and the records after it.
  VerifyOptions options;
  options.trusted_key = &key;
  options.from = report.newest.has_value() ? report.newest->size
                 : heads.empty()           ? 0
                                           : heads.back().key;
  options.heads_from = options.from;
  VIGIL_ASSIGN_OR_RETURN(const VerifyReport tail, VerifyAuditLog(log, options));
  if (tail.damage.has_value()) internal::KeepFirst(damage, *tail.damage);
  report.records = tail.records;
  report.tail_records = tail.records_checked;
  report.damage = std::move(damage);
  return report;
}

absl::Status CheckAuditLogAtStart(KvStore* store, const LogSigner& signer,
                                  std::string_view data_dir) {
  const std::string way_out = absl::StrCat(
      "vigil serve does not append to a damaged audit log. Run `vigil audit verify --data-dir ",
      ToAbsl(data_dir),
      " --pubkey <the log's public key>` for the full report; keep this data dir as evidence, "
      "and restore it from a backup (or start on a new data dir, keeping this one apart)");
  absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::OpenForReading(store);
  if (absl::IsNotFound(log.status())) return absl::OkStatus();  // a new data dir
  if (absl::IsDataLoss(log.status())) {
    return absl::DataLossError(absl::StrCat(log.status().message(), ". ", way_out));
  }
  if (!log.ok()) return log.status();
  // Another key: AuditLog::Open refuses it, saying so.
  if ((*log)->header().key_id != signer.key_id()) return absl::OkStatus();
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<LogVerifier> key,
                         LogVerifier::FromPem(signer.PublicKeyPem(), "audit.signing_key"));
  VIGIL_ASSIGN_OR_RETURN(const TailCheckReport report, CheckLogTail(**log, *key));
  if (!report.intact()) {
    return absl::DataLossError(absl::StrCat(
        "the audit log in ", store->path(), " is damaged: ", ToAbsl(DamageKindName(report.damage->kind)),
        " at sequence ", report.damage->sequence, ": ", report.damage->detail, ". ", way_out));
  }
  if (report.newest.has_value() && report.newest->chain.has_value()) {
    VIGIL_RETURN_IF_ERROR((*log)->WriteVerifiedHead(
        {report.newest->chain->index, report.newest->size, TreeHeadHash(*report.newest)}));
  }
  return absl::OkStatus();
}

}  // namespace vigil::audit
