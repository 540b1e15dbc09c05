#include "vigil/audit/proof_bundle.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_export.h"
#include "vigil/audit/merkle_tree.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"

namespace vigil::audit {
namespace {

// Members stay in the order written, so that a bundle reads top-down as docs/audit-cli.md
// describes it.
using Json = nlohmann::ordered_json;
// Compared as JSON values: member order and number spelling do not matter.
using JsonValue = nlohmann::json;

std::string Dump(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string KeyPrefix(const std::string& key_id) { return key_id.substr(0, 16); }

std::string HeadName(const SignedTreeHead& head) {
  return absl::StrCat("the tree head of size ", head.size, " at ", FormatUtc(head.time));
}

// ---------------------------------------------------------------------------------------------
// Checking. Every error of a bundle that is one is kDataLoss (Invalid); kInvalidArgument
// (NotABundle) is kept for input that is not a v1 bundle at all.

absl::Status Invalid(absl::string_view message) { return absl::DataLossError(message); }
absl::Status NotABundle(absl::string_view message) { return absl::InvalidArgumentError(message); }

absl::StatusOr<const Json*> Member(const Json& object, const char* name, Json::value_t type) {
  const auto it = object.find(name);
  if (it == object.end()) return Invalid(absl::StrCat("\"", name, "\" is missing"));
  const bool ok =
      type == Json::value_t::number_unsigned ? it->is_number_unsigned() : it->type() == type;
  if (!ok) {
    return Invalid(absl::StrCat("\"", name, "\" must be ",
                                type == Json::value_t::number_unsigned ? "a non-negative integer"
                                : type == Json::value_t::string        ? "a string"
                                : type == Json::value_t::array         ? "an array"
                                                                       : "an object"));
  }
  return &*it;
}

absl::StatusOr<std::string> StringMember(const Json& object, const char* name) {
  VIGIL_ASSIGN_OR_RETURN(const Json* m, Member(object, name, Json::value_t::string));
  return m->get<std::string>();
}

absl::StatusOr<Hash> ParseCanonicalHash(const std::string& hex, std::string_view where) {
  absl::StatusOr<Hash> hash = ParseHashHex(hex);
  if (!hash.ok() || HashHex(*hash) != hex) {
    return Invalid(absl::StrCat(ToAbsl(where), " is not a hash (64 lower-case hex digits)"));
  }
  return *hash;
}

absl::StatusOr<std::vector<Hash>> ProofMember(const Json& object) {
  VIGIL_ASSIGN_OR_RETURN(const Json* proof, Member(object, "proof", Json::value_t::array));
  std::vector<Hash> hashes;
  for (size_t i = 0; i < proof->size(); ++i) {
    const std::string where = absl::StrCat("proof[", i, "]");
    if (!(*proof)[i].is_string()) return Invalid(absl::StrCat(where, " is not a string"));
    VIGIL_ASSIGN_OR_RETURN(Hash h, ParseCanonicalHash((*proof)[i].get<std::string>(), where));
    hashes.push_back(h);
  }
  return hashes;
}

absl::Status OnlyMembers(const Json& object, std::string_view where,
                         std::initializer_list<std::string_view> names) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view name : names) known = known || key == name;
    if (!known) return Invalid(absl::StrCat(ToAbsl(where), " has an unknown member \"", key, "\""));
  }
  return absl::OkStatus();
}

JsonValue AsValue(const Json& j) { return JsonValue::parse(Dump(j)); }

// The signed tree head in member "name", its signature checked with "key". Members outside the
// signed bytes ("time", "key_id") must agree with the signed ones.
absl::StatusOr<SignedTreeHead> CheckedHead(const Json& bundle, const char* name,
                                           const LogVerifier& key) {
  VIGIL_ASSIGN_OR_RETURN(const Json* member, Member(bundle, name, Json::value_t::object));
  absl::StatusOr<SignedTreeHead> head = TreeHeadFromJson(Dump(*member));
  if (!head.ok()) return Invalid(absl::StrCat(name, ": ", head.status().message()));
  if (AsValue(*member) != JsonValue::parse(TreeHeadToJson(*head))) {
    return Invalid(absl::StrCat(name,
                                ": its members disagree with what is signed (\"time\" "
                                "differs from \"time_us\", or an unknown member)"));
  }
  if (head->key_id != key.key_id()) {
    return Invalid(absl::StrCat(name, ": names signing key ", KeyPrefix(head->key_id),
                                ", the given key is ", KeyPrefix(key.key_id())));
  }
  if (absl::Status s = VerifyTreeHead(key, *head); !s.ok()) {
    return Invalid(absl::StrCat(name, ": ", s.message()));
  }
  return *std::move(head);
}

// The view "view" makes of "record", as the export writes it (sealed fields as such):
// kInternal unless it is a JSON object.
absl::StatusOr<Json> MakeView(RecordViewFn view, const AuditRecord& record, const Hash& leaf_hash) {
  Json j = Json::parse(ExportRecordLine(record, leaf_hash, view), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InternalError("the record view given is not a JSON object");
  }
  return j;
}

// The first JSON pointer at which two values differ ("" when equal).
std::string FirstDifference(const JsonValue& a, const JsonValue& b) {
  const JsonValue patch = JsonValue::diff(a, b);
  if (patch.empty()) return "";
  return patch[0].value("path", std::string("/"));
}

// "given" equals the view "view" makes of "record". The feature names come from the producer's
// schema, which the checker may not have: a named view is then compared by value.
absl::Status CheckView(const Json& given, RecordViewFn view, const AuditRecord& record,
                       const Hash& leaf_hash) {
  VIGIL_ASSIGN_OR_RETURN(Json expected, MakeView(view, record, leaf_hash));
  Json normalized = given;
  const auto values = [](const Json& object) {
    Json out = Json::array();
    for (const auto& [name, value] : object.items()) out.push_back(value);
    return out;
  };
  if (normalized.contains("features") &&
      expected["features"].is_object() != normalized["features"].is_object()) {
    if (expected["features"].is_object()) expected["features"] = values(expected["features"]);
    if (normalized["features"].is_object()) normalized["features"] = values(normalized["features"]);
  }
  const std::string where = FirstDifference(AsValue(expected), AsValue(normalized));
  if (!where.empty()) {
    return Invalid(absl::StrCat("the decoded view \"record\" does not match the record bytes (at ",
                                where, ")"));
  }
  return absl::OkStatus();
}

// The members of an inclusion bundle, read and checked one by one; then what they claim.
struct InclusionMembers {
  std::string log_id, hash_name, transaction_id, base64;
  uint64_t sequence = 0;
  Hash leaf{};
  std::vector<Hash> proof;
  const Json* view = nullptr;
  SignedTreeHead head;
};

absl::StatusOr<InclusionMembers> ReadInclusion(const Json& bundle, const LogVerifier& key) {
  VIGIL_RETURN_IF_ERROR(
      OnlyMembers(bundle, "the bundle",
                  {"format", "type", "log_id", "hash", "transaction_id", "sequence",
                   "record_base64", "leaf_hash", "tree_head", "proof", "record"}));
  InclusionMembers m;
  VIGIL_ASSIGN_OR_RETURN(m.log_id, StringMember(bundle, "log_id"));
  VIGIL_ASSIGN_OR_RETURN(m.hash_name, StringMember(bundle, "hash"));
  VIGIL_ASSIGN_OR_RETURN(m.transaction_id, StringMember(bundle, "transaction_id"));
  VIGIL_ASSIGN_OR_RETURN(const Json* seq,
                         Member(bundle, "sequence", Json::value_t::number_unsigned));
  m.sequence = seq->get<uint64_t>();
  VIGIL_ASSIGN_OR_RETURN(m.base64, StringMember(bundle, "record_base64"));
  VIGIL_ASSIGN_OR_RETURN(const std::string leaf_hex, StringMember(bundle, "leaf_hash"));
  VIGIL_ASSIGN_OR_RETURN(m.leaf, ParseCanonicalHash(leaf_hex, "leaf_hash"));
  VIGIL_ASSIGN_OR_RETURN(m.proof, ProofMember(bundle));
  VIGIL_ASSIGN_OR_RETURN(m.view, Member(bundle, "record", Json::value_t::object));
  VIGIL_ASSIGN_OR_RETURN(m.head, CheckedHead(bundle, "tree_head", key));
  return m;
}

absl::StatusOr<CheckedProof> CheckInclusion(const Json& bundle, const LogVerifier& key,
                                            RecordViewFn view) {
  VIGIL_ASSIGN_OR_RETURN(const InclusionMembers m, ReadInclusion(bundle, key));
  const SignedTreeHead& head = m.head;
  absl::StatusOr<HashAlgorithm> hash = ParseHashAlgorithm(m.hash_name);
  if (!hash.ok() || HashAlgorithmName(*hash) != m.hash_name) {
    return Invalid(absl::StrCat("\"hash\" must be sha256 or sm3, not \"", m.hash_name, "\""));
  }
  if (head.log_id != m.log_id || head.hash != *hash) {
    return Invalid(absl::StrCat("the tree head is of log ", head.log_id, " (",
                                ToAbsl(HashAlgorithmName(head.hash)), "), the bundle names log ",
                                m.log_id, " (", m.hash_name, ")"));
  }
  std::string bytes;
  if (!absl::Base64Unescape(m.base64, &bytes) || absl::Base64Escape(bytes) != m.base64) {
    return Invalid("\"record_base64\" is not base64 (RFC 4648, padded, one line)");
  }
  if (LeafHash(*hash, bytes) != m.leaf) {
    return Invalid("\"leaf_hash\" is not the leaf hash of the record bytes");
  }
  absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
  if (!record.ok()) {
    return Invalid(absl::StrCat("the record bytes do not decode: ", record.status().message()));
  }
  if (record->sequence != m.sequence) {
    return Invalid(absl::StrCat("the record's own sequence is ", record->sequence,
                                ", the bundle says ", m.sequence));
  }
  if (record->transaction.id != m.transaction_id) {
    return Invalid(absl::StrCat("the record is of transaction ", record->transaction.id,
                                ", the bundle says ", m.transaction_id));
  }
  if (absl::Status s = VerifyInclusion(*hash, m.sequence, head.size, m.leaf, m.proof, head.root);
      !s.ok()) {
    return Invalid(absl::StrCat("the inclusion proof does not lead to ", HeadName(head),
                                "'s root: ", s.message()));
  }
  VIGIL_RETURN_IF_ERROR(CheckView(*m.view, view, *record, m.leaf));
  CheckedProof checked;
  checked.type = ProofType::kInclusion;
  checked.log_id = m.log_id;
  checked.tree_head = head;
  checked.sequence = m.sequence;
  checked.transaction_id = m.transaction_id;
  checked.action = record->decision.action;
  checked.decided = record->decided;
  return checked;
}

absl::StatusOr<CheckedProof> CheckConsistency(const Json& bundle, const LogVerifier& key) {
  VIGIL_RETURN_IF_ERROR(OnlyMembers(bundle, "the bundle",
                                    {"format", "type", "old_tree_head", "new_tree_head", "proof"}));
  VIGIL_ASSIGN_OR_RETURN(const std::vector<Hash> proof, ProofMember(bundle));
  VIGIL_ASSIGN_OR_RETURN(SignedTreeHead old_head, CheckedHead(bundle, "old_tree_head", key));
  VIGIL_ASSIGN_OR_RETURN(SignedTreeHead new_head, CheckedHead(bundle, "new_tree_head", key));
  if (old_head.log_id != new_head.log_id || old_head.hash != new_head.hash) {
    return Invalid(absl::StrCat("the tree heads are of different logs: ", old_head.log_id, " and ",
                                new_head.log_id));
  }
  if (old_head.size == 0 || old_head.size > new_head.size) {
    return Invalid(absl::StrCat("the old tree head's size ", old_head.size,
                                " must be positive and at most the new one's, ", new_head.size));
  }
  if (absl::Status s = VerifyConsistency(old_head.hash, old_head.size, new_head.size, old_head.root,
                                         new_head.root, proof);
      !s.ok()) {
    return Invalid(absl::StrCat("the consistency proof does not verify: ", s.message()));
  }
  CheckedProof checked;
  checked.type = ProofType::kConsistency;
  checked.log_id = new_head.log_id;
  checked.tree_head = std::move(new_head);
  checked.old_tree_head = std::move(old_head);
  return checked;
}

// CheckProofBundle, where "view" may be null when the bundle is known to be a consistency one
// (this file's own self-check of a bundle it built).
absl::StatusOr<CheckedProof> CheckText(std::string_view text, const LogVerifier& key,
                                       const RecordViewFn* view) {
  const Json bundle = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (bundle.is_discarded() || !bundle.is_object()) return NotABundle("not a JSON object");
  absl::StatusOr<std::string> format = StringMember(bundle, "format");
  if (!format.ok()) return NotABundle(format.status().message());
  if (*format != kProofBundleFormat) {
    return NotABundle(absl::StrCat("format \"", *format, "\" (this build reads ",
                                   ToAbsl(kProofBundleFormat), ")"));
  }
  absl::StatusOr<std::string> type = StringMember(bundle, "type");
  if (!type.ok()) return NotABundle(type.status().message());
  if (*type == "inclusion") {
    if (view == nullptr) return absl::InternalError("an inclusion bundle checked without a view");
    return CheckInclusion(bundle, key, *view);
  }
  if (*type == "consistency") return CheckConsistency(bundle, key);
  return NotABundle(absl::StrCat("type \"", *type, "\" (inclusion or consistency)"));
}

// ---------------------------------------------------------------------------------------------
// Building.

// An error reading what the log says it holds. kNotFound there is damage (a record or node the
// index or the tree names is missing) and becomes kDataLoss; kFailedPrecondition (a dropped
// column family) becomes kUnavailable: those two codes keep the meanings the header gives them.
absl::Status FromLog(const absl::Status& s) {
  if (absl::IsNotFound(s)) return absl::DataLossError(s.message());
  if (absl::IsFailedPrecondition(s)) return absl::UnavailableError(s.message());
  return s;
}

Json HashesJson(const std::vector<Hash>& hashes) {
  Json out = Json::array();
  for (const Hash& h : hashes) out.push_back(HashHex(h));
  return out;
}

// Checks a bundle built from the log against the log's own key before handing it out: a proof
// that does not verify means the log is damaged.
absl::StatusOr<ProofBundle> SelfChecked(const AuditLog& log, std::string json,
                                        const RecordViewFn* view) {
  VIGIL_ASSIGN_OR_RETURN(
      std::unique_ptr<LogVerifier> key,
      LogVerifier::FromPem(log.header().public_key_pem, "the audit log's header"));
  absl::StatusOr<CheckedProof> checked = CheckText(json, *key, view);
  if (!checked.ok()) {
    return absl::DataLossError(absl::StrCat("the proof built from the log does not verify (",
                                            checked.status().message(), "): the log is damaged"));
  }
  return ProofBundle{std::move(json), *std::move(checked)};
}

// The sequence of "transaction_id" and the latest signed tree head, which covers it; errors as
// InclusionBundle's.
absl::StatusOr<std::pair<uint64_t, SignedTreeHead>> CoveredRecord(const AuditLog& log,
                                                                  std::string_view transaction_id) {
  absl::StatusOr<std::optional<uint64_t>> sequence = log.FindTransaction(transaction_id);
  if (!sequence.ok()) return FromLog(sequence.status());
  if (!sequence->has_value()) {
    return absl::NotFoundError(
        absl::StrCat("transaction ", ToAbsl(transaction_id), " is not in the audit log"));
  }
  absl::StatusOr<SignedTreeHead> head = log.LatestTreeHead();
  if (!head.ok() && !absl::IsNotFound(head.status())) return FromLog(head.status());
  if (!head.ok() || **sequence >= head->size) {
    return absl::FailedPreconditionError(
        absl::StrCat("transaction ", ToAbsl(transaction_id), " (record ", **sequence,
                     ") is not yet covered by a signed tree head (",
                     head.ok() ? absl::StrCat("the latest covers ", head->size,
                                              head->size == 1 ? " record" : " records")
                               : std::string("the log has none yet"),
                     ")"));
  }
  return std::make_pair(**sequence, *std::move(head));
}

}  // namespace

absl::StatusOr<ProofBundle> InclusionBundle(const AuditLog& log, std::string_view transaction_id,
                                            RecordViewFn view) {
  VIGIL_ASSIGN_OR_RETURN(const auto covered, CoveredRecord(log, transaction_id));
  const auto& [sequence, head] = covered;
  absl::StatusOr<std::string> bytes = log.ReadRecord(sequence);
  if (!bytes.ok()) return FromLog(bytes.status());
  VIGIL_ASSIGN_OR_RETURN(const AuditRecord record, DecodeRecord(*bytes));
  if (record.sequence != sequence || record.transaction.id != transaction_id) {
    return absl::DataLossError(absl::StrCat("the index points ", ToAbsl(transaction_id),
                                            " at record ", sequence, ", which is another record"));
  }
  const Hash leaf_hash = LeafHash(log.hash(), *bytes);
  absl::StatusOr<std::vector<Hash>> proof = log.InclusionProof(sequence, head.size);
  if (!proof.ok()) return FromLog(proof.status());
  VIGIL_ASSIGN_OR_RETURN(Json record_view, MakeView(view, record, leaf_hash));
  Json bundle;
  bundle["format"] = std::string(kProofBundleFormat);
  bundle["type"] = "inclusion";
  bundle["log_id"] = log.header().log_id;
  bundle["hash"] = std::string(HashAlgorithmName(log.hash()));
  bundle["transaction_id"] = record.transaction.id;
  bundle["sequence"] = record.sequence;
  bundle["record_base64"] = absl::Base64Escape(*bytes);
  bundle["leaf_hash"] = HashHex(leaf_hash);
  bundle["tree_head"] = Json::parse(TreeHeadToJson(head));
  bundle["proof"] = HashesJson(*proof);
  bundle["record"] = std::move(record_view);
  return SelfChecked(log, Dump(bundle, 2) + "\n", &view);
}

absl::StatusOr<ProofBundle> ConsistencyBundle(const AuditLog& log, const SignedTreeHead& old_head,
                                              const SignedTreeHead& new_head) {
  const std::string& log_id = log.header().log_id;
  if (old_head.log_id != log_id || new_head.log_id != log_id) {
    return absl::InvalidArgumentError(absl::StrCat("the tree heads must be of audit log ", log_id,
                                                   ", not of ", old_head.log_id, " and ",
                                                   new_head.log_id));
  }
  if (old_head.size == 0 || old_head.size > new_head.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("a consistency proof needs 0 < old size <= new size, not ", old_head.size,
                     " and ", new_head.size));
  }
  absl::StatusOr<std::vector<Hash>> proof = log.ConsistencyProof(old_head.size, new_head.size);
  if (!proof.ok()) return FromLog(proof.status());
  Json bundle;
  bundle["format"] = std::string(kProofBundleFormat);
  bundle["type"] = "consistency";
  bundle["old_tree_head"] = Json::parse(TreeHeadToJson(old_head));
  bundle["new_tree_head"] = Json::parse(TreeHeadToJson(new_head));
  bundle["proof"] = HashesJson(*proof);
  return SelfChecked(log, Dump(bundle, 2) + "\n", /*view=*/nullptr);
}

absl::StatusOr<CheckedProof> CheckProofBundle(std::string_view json, const LogVerifier& key,
                                              RecordViewFn view) {
  return CheckText(json, key, &view);
}

}  // namespace vigil::audit
