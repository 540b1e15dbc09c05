#include "vigil/ingest/swift_mt_types.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil {
namespace {

// The option letters a field number allows ("" for none; " " when the field may also come
// without a letter), for the fields of MT103 and MT202(COV).
struct FieldOptions {
  std::string_view number;
  std::string_view options;
};
constexpr FieldOptions kOptions[] = {
    {"13", "C"},   {"20", " "},   {"21", " "},    {"23", "BE"},  {"26", "T"},
    {"32", "A"},   {"33", "B"},   {"36", " "},    {"50", "AFK"}, {"51", "A"},
    {"52", "AD"},  {"53", "ABD"}, {"54", "ABD"},  {"55", "ABD"}, {"56", "ACD"},
    {"57", "ABCD"}, {"58", "AD"}, {"59", " AF"},  {"70", " "},   {"71", "AFG"},
    {"72", " "},   {"77", "BT"},
};

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
bool Has(const SwiftMtMessage& m, size_t begin, size_t end, std::string_view number,
         std::string_view letters = "") {
  for (size_t i = begin; i < end; ++i) {
    const std::string_view tag = m.fields[i].tag;
    if (tag.substr(0, 2) != number) continue;
    if (letters.empty()) return true;
    const char letter = tag.size() == 3 ? tag[2] : ' ';
    if (letters.find(letter) != std::string_view::npos) return true;
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
    const std::string_view number = f.tag.substr(0, 2);
    const char letter = f.tag.size() == 3 ? f.tag[2] : ' ';
    for (const FieldOptions& o : kOptions) {
      if (o.number != number) continue;
      if (o.options.find(letter) == std::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            ToAbsl(name), ": field :", ToAbsl(f.tag), ": (line ", f.line, ") ",
            letter == ' ' ? std::string("needs an option letter")
                          : absl::StrCat("option ", std::string(1, letter), " is not allowed"),
            " (", Allowed(o.options), ")"));
      }
      break;
    }
  }
  const size_t n = m.fields.size();
  if (type == MtType::kMt103 || type == MtType::kMt103Stp) {
    for (std::string_view tag : {"20", "23B", "32A"}) {
      if (m.Find(tag) == nullptr) return Missing(type, tag);
    }
    if (!Has(m, 0, n, "50")) return Missing(type, "50a");
    if (!Has(m, 0, n, "59")) return Missing(type, "59a");
    if (m.Find("71A") == nullptr) return Missing(type, "71A");
    return absl::OkStatus();
  }
  // MT202 and sequence A of MT202COV.
  size_t sequence_b = n;
  if (type == MtType::kMt202Cov) {
    for (size_t i = 0; i < n; ++i) {
      if (m.fields[i].tag.substr(0, 2) == "50") {
        sequence_b = i;
        break;
      }
    }
  }
  for (std::string_view tag : {"20", "21", "32A"}) {
    if (!Has(m, 0, sequence_b, tag.substr(0, 2), tag.size() == 3 ? tag.substr(2) : " ")) {
      return Missing(type, tag);
    }
  }
  if (!Has(m, 0, sequence_b, "58")) return Missing(type, "58a");
  if (type == MtType::kMt202Cov) {
    if (sequence_b == n) return Missing(type, "50a (sequence B, the underlying customer)");
    if (!Has(m, sequence_b, n, "59")) return Missing(type, "59a (sequence B)");
  }
  return absl::OkStatus();
}

}  // namespace vigil
