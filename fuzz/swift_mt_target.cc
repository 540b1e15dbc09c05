// Fuzz target: SwiftMtMessage, the SWIFT FIN (MT) block and field splitter.
//
// The message-type layer (swift_mt_types.h) and the mapping to a Transaction
// (swift_mt_transaction.h) run in FuzzMessageType(), so one target and one corpus reach all of
// them.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "vigil/ingest/swift_mt.h"
#include "fuzz/transaction_checks.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/swift_mt_transaction.h"
#include "vigil/ingest/swift_mt_types.h"

namespace vigil::fuzz {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether "view" lies inside "text" (swift_mt.h: every view points into the parsed text).
// An empty view may be a default-constructed one, pointing nowhere.
bool Within(std::string_view view, std::string_view text) {
  if (view.empty()) return true;
  const auto begin = reinterpret_cast<uintptr_t>(text.data());
  const auto v = reinterpret_cast<uintptr_t>(view.data());
  return v >= begin && v + view.size() <= begin + text.size();
}

void CheckTagValues(const std::vector<MtTagValue>& tvs, std::string_view text) {
  for (const MtTagValue& tv : tvs) {
    FUZZ_CHECK(!tv.tag.empty() && tv.tag.size() <= 3);
    FUZZ_CHECK(Within(tv.tag, text));
    FUZZ_CHECK(Within(tv.value, text));
  }
}

void CheckFields(const SwiftMtMessage& m, std::string_view text) {
  FUZZ_CHECK(!m.fields.empty());
  FUZZ_CHECK(m.fields.size() <= kMaxFields);
  int previous_line = 0;
  for (const MtField& f : m.fields) {
    // :NN: or :NNa:
    FUZZ_CHECK(f.tag.size() == 2 || f.tag.size() == 3);
    FUZZ_CHECK(IsDigit(f.tag[0]) && IsDigit(f.tag[1]));
    FUZZ_CHECK(!f.value.empty());
    FUZZ_CHECK(Within(f.tag, text));
    FUZZ_CHECK(Within(f.value, text));
    FUZZ_CHECK(f.line > previous_line);  // fields come in order, one per line at least
    previous_line = f.line;
    FUZZ_CHECK(m.Find(f.tag) != nullptr);
    FUZZ_CHECK(m.Find(f.tag.substr(0, 2)) != nullptr);
    // MtLines: one line per line break, the line endings dropped.
    size_t breaks = 0;
    for (char c : f.value) breaks += c == '\n';
    const std::vector<std::string_view> lines = MtLines(f.value);
    FUZZ_CHECK(lines.size() == breaks + 1);
    for (std::string_view l : lines) {
      FUZZ_CHECK(Within(l, f.value));
      FUZZ_CHECK(l.find('\n') == std::string_view::npos);
    }
  }
}

// The message-type layer (swift_mt_types.h) and the mapping (swift_mt_transaction.h).
void FuzzMessageType(const SwiftMtMessage& m) {
  const absl::StatusOr<MtType> type = SupportedMtType(m);
  if (!type.ok()) {
    FUZZ_CHECK(type.status().code() == absl::StatusCode::kUnimplemented);
    FUZZ_CHECK(m.application.message_type != "103" && m.application.message_type != "202");
    return;
  }
  const absl::Status fields = CheckMtFields(m, *type);
  // Whatever it says, an MT103 without :20: never passes.
  if ((*type == MtType::kMt103 || *type == MtType::kMt103Stp) && m.Find("20") == nullptr) {
    FUZZ_CHECK(!fields.ok());
  }
  FUZZ_CHECK(fields.ok() || fields.code() == absl::StatusCode::kInvalidArgument);

  // The mapping: fails exactly where the type checks fail or a field's content is wrong, and a
  // mapped transaction keeps transaction.h's invariants and survives a JSON round trip.
  // Mapping into a dirty Transaction must give what mapping into a fresh one gives.
  Transaction fresh;
  const absl::Status mapped = SwiftMtToTransaction(m, &fresh);
  if (!fields.ok()) FUZZ_CHECK(!mapped.ok());
  if (!mapped.ok()) {
    FUZZ_CHECK(mapped.code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!mapped.message().empty());
    return;
  }
  Transaction reused = DirtyTransaction();
  FUZZ_CHECK(SwiftMtToTransaction(m, &reused).ok());
  FUZZ_CHECK(reused == fresh);
  CheckParsedTransaction(fresh);
  FUZZ_CHECK(fresh.message_type == MtTypeName(*type));
  FUZZ_CHECK(fresh.value_date.size() == 10);
  FUZZ_CHECK(fresh.agents.size() >= 2);
  static JsonTransactionParser& parser = *new JsonTransactionParser();
  CheckJsonRoundTrip(fresh, parser);
}

}  // namespace

int FuzzSwiftMt(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<SwiftMtMessage> m = SwiftMtMessage::Parse(text);
  if (!m.ok()) {
    // kUnimplemented only for an acknowledgement (service 21) with no message after it.
    const size_t start = text.find_first_not_of(" \t\n\v\f\r");
    const bool acknowledgement = start != std::string_view::npos && text.size() >= start + 6 &&
                                 text.compare(start, 3, "{1:") == 0 &&
                                 text.compare(start + 4, 2, "21") == 0;
    FUZZ_CHECK(m.status().code() == absl::StatusCode::kInvalidArgument ||
               (acknowledgement && m.status().code() == absl::StatusCode::kUnimplemented));
    return 0;
  }
  if (m->acknowledgement.has_value()) {
    FUZZ_CHECK(m->acknowledgement->basic.service_id == "21");
    CheckTagValues(m->acknowledgement->text, text);
    CheckTagValues(m->acknowledgement->trailer, text);
    const std::string reference = m->acknowledgement->Reference();
    FUZZ_CHECK(reference.empty() || reference.size() == 28);
  }
  FUZZ_CHECK(size <= kMaxMessageBytes);
  // The headers: swift_mt.h's fixed widths.
  FUZZ_CHECK(m->basic.logical_terminal.size() == 12);
  FUZZ_CHECK(m->basic.session.size() == 4 && m->basic.sequence.size() == 6);
  FUZZ_CHECK(m->application.message_type.size() == 3);
  FUZZ_CHECK(m->application.counterparty_address.size() == 12);
  if (!m->application.input) FUZZ_CHECK(m->application.input_reference.size() == 28);
  FUZZ_CHECK(m->application.priority == 'N' || m->application.priority == 'U' ||
             m->application.priority == 'S');
  for (std::string_view v :
       {m->basic.service_id, m->basic.logical_terminal, m->basic.session, m->basic.sequence,
        m->application.message_type, m->application.counterparty_address, m->application.input_time,
        m->application.input_reference, m->application.output_date, m->application.output_time}) {
    FUZZ_CHECK(Within(v, text));
  }
  // BIC8 and the 3-character branch of a 12-character logical terminal.
  FUZZ_CHECK(m->SenderBic().size() == 11);
  FUZZ_CHECK(m->ReceiverBic().size() == 11);
  CheckTagValues(m->user_header, text);
  CheckTagValues(m->trailer, text);
  CheckTagValues(m->system_trailer, text);
  if (const auto uetr = m->UserHeader("121"); uetr.has_value()) FUZZ_CHECK(Within(*uetr, text));
  CheckFields(*m, text);
  FuzzMessageType(*m);
  return 0;
}

}  // namespace vigil::fuzz
