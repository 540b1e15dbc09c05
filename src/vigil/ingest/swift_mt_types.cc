#include "vigil/ingest/swift_mt_types.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil {
namespace {

// The option letters a field number allows, for the fields of MT103 and MT202(COV): empty for
// a number outside them; ' ' when the field may also come without a letter.
constexpr std::array<std::string_view, 100> OptionTable() {
  std::array<std::string_view, 100> t{};
  t[13] = "C";   t[20] = " ";   t[21] = " ";    t[23] = "BE";  t[26] = "T";
  t[32] = "A";   t[33] = "B";   t[36] = " ";    t[50] = "AFK"; t[51] = "A";
  t[52] = "AD";  t[53] = "ABD"; t[54] = "ABD";  t[55] = "ABD"; t[56] = "ACD";
  t[57] = "ABCD"; t[58] = "AD"; t[59] = " AF";  t[70] = " ";   t[71] = "AFG";
  t[72] = " ";   t[77] = "BT";
  return t;
}
constexpr std::array<std::string_view, 100> kOptions = OptionTable();

std::string Allowed(std::string_view options) {
  std::string out;
  for (char c : options) {
    if (!out.empty()) out += ", ";
    out += c == ' ' ? std::string("no letter") : std::string(1, c);
  }
  return out;
}

absl::Status Missing(MtType type, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(MtTypeName(type)),
                                                 ": mandatory field :", ToAbsl(what),
                                                 ": is missing"));
}

// Whether [begin, end) of the fields holds one with this number (and, when "letters" is not
// empty, one of those options; ' ' for no letter).
bool Has(const SwiftMtMessage& m, size_t begin, size_t end, int number,
         std::string_view letters = "") {
  for (size_t i = begin; i < end; ++i) {
    const MtField& f = m.fields[i];
    if (f.number() != number) continue;
    if (letters.empty() || letters.find(f.option()) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::string_view MtTypeName(MtType type) {
  switch (type) {
    case MtType::kMt103: return "MT103";
    case MtType::kMt103Stp: return "MT103STP";
    case MtType::kMt202: return "MT202";
    case MtType::kMt202Cov: return "MT202COV";
  }
  return "MT103";
}

absl::StatusOr<MtType> SupportedMtType(const SwiftMtMessage& message) {
  const std::string_view type = message.application.message_type;
  const std::string_view validation = message.UserHeader("119").value_or("");
  if (type == "103") return validation == "STP" ? MtType::kMt103Stp : MtType::kMt103;
  if (type == "202") return validation == "COV" ? MtType::kMt202Cov : MtType::kMt202;
  return absl::UnimplementedError(absl::StrCat(
      "unsupported message type MT", ToAbsl(type), ToAbsl(validation),
      " (vigil reads MT103, MT202 and MT202COV)"));
}

absl::Status CheckMtFields(const SwiftMtMessage& m, MtType type) {
  const std::string_view name = MtTypeName(type);
  for (const MtField& f : m.fields) {
    const std::string_view options = kOptions[f.number()];
    const char letter = f.option();
    if (!options.empty() && options.find(letter) == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          ToAbsl(name), ": field :", ToAbsl(f.tag), ": (line ", f.line, ") ",
          letter == ' ' ? std::string("needs an option letter")
                        : absl::StrCat("option ", std::string(1, letter), " is not allowed"),
          " (", Allowed(options), ")"));
    }
  }
  const size_t n = m.fields.size();
  if (type == MtType::kMt103 || type == MtType::kMt103Stp) {
    if (!Has(m, 0, n, 20)) return Missing(type, "20");
    if (!Has(m, 0, n, 23, "B")) return Missing(type, "23B");
    if (!Has(m, 0, n, 32, "A")) return Missing(type, "32A");
    if (!Has(m, 0, n, 50)) return Missing(type, "50a");
    if (!Has(m, 0, n, 59)) return Missing(type, "59a");
    if (!Has(m, 0, n, 71, "A")) return Missing(type, "71A");
    return absl::OkStatus();
  }
  // MT202 and sequence A of MT202COV.
  size_t sequence_b = n;
  if (type == MtType::kMt202Cov) {
    for (size_t i = 0; i < n; ++i) {
      if (m.fields[i].number() == 50) {
        sequence_b = i;
        break;
      }
    }
  }
  if (!Has(m, 0, sequence_b, 20, " ")) return Missing(type, "20");
  if (!Has(m, 0, sequence_b, 21, " ")) return Missing(type, "21");
  if (!Has(m, 0, sequence_b, 32, "A")) return Missing(type, "32A");
  if (!Has(m, 0, sequence_b, 58)) return Missing(type, "58a");
  if (type == MtType::kMt202Cov) {
    if (sequence_b == n) return Missing(type, "50a (sequence B, the underlying customer)");
    if (!Has(m, sequence_b, n, 59)) return Missing(type, "59a (sequence B)");
  }
  return absl::OkStatus();
}

}  // namespace vigil
