#include "vigil/audit/audit_export.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::audit {
namespace {

// Members stay in the order the view wrote them.
using Json = nlohmann::ordered_json;

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// "transaction.agents[1].account_id" -> "/transaction/agents/1/account_id".
Json::json_pointer Pointer(std::string_view path) {
  std::string p = "/";
  for (char c : path) {
    if (c == '.' || c == '[') {
      p.push_back('/');
    } else if (c != ']') {
      p.push_back(c);
    }
  }
  return Json::json_pointer(p);
}

// A stand-in for a sealed field's value, so that the view shows the member in its place (a view
// leaves empty fields out); replaced by {"sealed": ...} afterwards.
constexpr std::string_view kSealedStandIn = "sealed";

// The places of an export line's transaction where a sealed field may be.
std::vector<std::string> SealablePaths(const Json& line) {
  std::vector<std::string> paths;
  const auto tx = line.find("transaction");
  if (tx == line.end() || !tx->is_object()) return paths;
  for (const char* party :
       {"originator", "beneficiary", "ultimate_originator", "ultimate_beneficiary"}) {
    for (const char* field : {"account_id", "name", "address"}) {
      paths.push_back(absl::StrCat("transaction.", party, ".", field));
    }
  }
  const auto agents = tx->find("agents");
  if (agents != tx->end() && agents->is_array()) {
    for (size_t i = 0; i < agents->size(); ++i) {
      paths.push_back(absl::StrCat("transaction.agents[", i, "].account_id"));
    }
  }
  paths.push_back("transaction.remittance");
  return paths;
}

}  // namespace

std::string ExportRecordLine(const AuditRecord& record, const Hash& leaf_hash, RecordViewFn view) {
  if (record.data_key_id.empty()) return view(record, leaf_hash);
  std::string text;
  if (record.sealed.empty()) {
    text = view(record, leaf_hash);
  } else {
    AuditRecord shown = record;
    for (const SealedField& field : record.sealed) {
      // The paths DecodeRecord lists always have their place.
      MarkSealedField(field.path, kSealedStandIn, shown.transaction).IgnoreError();
    }
    text = view(shown, leaf_hash);
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return text;  // not a view this can annotate
  for (const SealedField& field : record.sealed) {
    j[Pointer(field.path)] = Json{{"sealed", absl::Base64Escape(field.bytes)}};
  }
  j["data_key_id"] = record.data_key_id;
  return Dump(j);
}

std::string DataKeyLine(const crypto::WrappedDataKey& key) {
  Json j;
  j["data_key"] = Json::parse(key.ToJson());
  return Dump(j);
}

absl::StatusOr<ExportSummary> WriteExport(const AuditLog& log, const ExportRange& range,
                                          const RecordOpener* opener, RecordViewFn view,
                                          ExportLineFn line) {
  ExportSummary summary;
  std::set<std::string, std::less<>> keys_written;
  const auto emit = [&](AuditRecord& record, std::string_view bytes) -> absl::Status {
    if (opener != nullptr) {
      if (absl::Status s = opener->Open(record); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("record ", record.sequence, " (transaction ",
                                                   record.transaction.id, "): ", s.message()));
      }
    }
    if (!record.sealed.empty()) {
      ++summary.sealed;
      if (!keys_written.contains(record.data_key_id)) {
        VIGIL_ASSIGN_OR_RETURN(std::optional<crypto::WrappedDataKey> key,
                               log.DataKey(record.data_key_id));
        if (!key.has_value()) {
          return absl::DataLossError(absl::StrCat(
              "record ", record.sequence, " is sealed under data key ", record.data_key_id,
              ", which the log does not hold: its personal fields can never be opened"));
        }
        VIGIL_RETURN_IF_ERROR(line(DataKeyLine(*key)));
        keys_written.insert(record.data_key_id);
        ++summary.data_keys;
      }
    }
    VIGIL_RETURN_IF_ERROR(line(ExportRecordLine(record, LeafHash(log.hash(), bytes), view)));
    ++summary.exported;
    return absl::OkStatus();
  };

  if (!range.transaction_id.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::optional<uint64_t> sequence,
                           log.FindTransaction(range.transaction_id));
    if (!sequence.has_value()) {
      return absl::NotFoundError(
          absl::StrCat("transaction ", range.transaction_id, " is not in the audit log"));
    }
    VIGIL_ASSIGN_OR_RETURN(const std::string bytes, log.ReadRecord(*sequence));
    VIGIL_ASSIGN_OR_RETURN(AuditRecord record, DecodeRecord(bytes));
    if (record.sequence != *sequence || record.transaction.id != range.transaction_id) {
      return absl::DataLossError(absl::StrCat("the index points ", range.transaction_id,
                                              " at record ", *sequence,
                                              ", which is another record"));
    }
    summary.examined = 1;
    VIGIL_RETURN_IF_ERROR(emit(record, bytes));
    return summary;
  }
  // Ends the walk at a page's end; never returned.
  const absl::Status page_full = absl::CancelledError("export page full");
  absl::Status walked =
      log.ForEachRecord(range.from, [&](uint64_t sequence, std::string_view bytes) -> absl::Status {
        if (range.max_records > 0 && summary.exported == range.max_records) {
          summary.next_from = sequence;
          return page_full;
        }
        ++summary.examined;
        absl::StatusOr<AuditRecord> record = DecodeRecord(bytes);
        if (!record.ok()) {
          return absl::DataLossError(
              absl::StrCat("record ", sequence, ": ", record.status().message()));
        }
        if ((range.since && record->decided < *range.since) ||
            (range.until && record->decided >= *range.until)) {
          return absl::OkStatus();
        }
        return emit(*record, bytes);
      });
  if (!walked.ok() && !(summary.next_from.has_value() && walked == page_full)) return walked;
  return summary;
}

absl::StatusOr<ExportSummary> OpenExport(std::istream& in, RecordOpener& opener,
                                         ExportLineFn line) {
  ExportSummary summary;
  std::string text;
  for (uint64_t number = 1; std::getline(in, text); ++number) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    ++summary.examined;
    const auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", ToAbsl(why), " (not a line of `vigil audit export`)"));
    };
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    if (j.size() == 1 && j.contains("data_key")) {
      absl::StatusOr<crypto::WrappedDataKey> key =
          crypto::WrappedDataKey::FromJson(j["data_key"].dump());
      if (!key.ok()) return bad(ToStd(key.status().message()));
      opener.AddDataKey(*std::move(key));
      ++summary.data_keys;
      continue;
    }
    ++summary.exported;
    const auto id = j.find("data_key_id");
    if (id == j.end()) {
      VIGIL_RETURN_IF_ERROR(line(text));  // written in the clear: as it is
      continue;
    }
    const Json* tx_id = j.contains(Pointer("transaction.id")) ? &j[Pointer("transaction.id")]
                                                              : nullptr;
    if (!id->is_string() || tx_id == nullptr || !tx_id->is_string()) {
      return bad("\"data_key_id\" and \"transaction\".\"id\" must be strings");
    }
    const std::string data_key_id = id->get<std::string>();
    const std::string transaction_id = tx_id->get<std::string>();
    bool opened = false;
    for (const std::string& path : SealablePaths(j)) {
      const Json::json_pointer at = Pointer(path);
      if (!j.contains(at)) continue;
      const Json& value = j[at];
      if (!value.is_object() || value.size() != 1 || !value.contains("sealed")) continue;
      std::string sealed;
      if (!value["sealed"].is_string() ||
          !absl::Base64Unescape(value["sealed"].get<std::string>(), &sealed)) {
        return bad(absl::StrCat(path, ": \"sealed\" is not base64"));
      }
      absl::StatusOr<std::string> payload =
          opener.OpenField(data_key_id, transaction_id, path, sealed);
      if (!payload.ok()) {
        return absl::Status(payload.status().code(),
                            absl::StrCat("line ", number, ": ", payload.status().message()));
      }
      absl::StatusOr<std::vector<std::string>> values = SealedFieldValues(path, *payload);
      if (!values.ok()) {
        return absl::Status(values.status().code(),
                            absl::StrCat("line ", number, ": ", values.status().message()));
      }
      j[at] = path.ends_with(".address") ? Json(*values) : Json((*values)[0]);
      opened = true;
    }
    if (opened) ++summary.sealed;
    VIGIL_RETURN_IF_ERROR(line(Dump(j)));
  }
  if (in.bad()) return absl::UnavailableError("cannot read the export");
  return summary;
}

}  // namespace vigil::audit
