#include "vigil/ingest/iso20022.h"

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <pugixml.hpp>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"
#include "vigil/core/money.h"
#include "vigil/ingest/party_key.h"
#include "vigil/ingest/swift_syntax.h"

namespace vigil {
namespace {

constexpr std::string_view kIsoNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:";
constexpr std::string_view kAppHdrNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:head.001.";
constexpr std::string_view kNotProvided = "NOTPROVIDED";

// pugixml's defaults without attribute whitespace conversion (no attribute vigil reads needs it),
// plus: DOCTYPE nodes and text outside the root element kept (parse_fragment; pugixml drops such
// text otherwise) so that the walk can refuse them, and element text stored in the element node
// (one node fewer per leaf: a faster parse and walk). Comments, processing instructions and
// whitespace-only text are dropped.
constexpr unsigned kParseOptions = pugi::parse_cdata | pugi::parse_escapes | pugi::parse_eol |
                                   pugi::parse_doctype | pugi::parse_fragment |
                                   pugi::parse_embed_pcdata;

bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }

// Equality with a literal as a length check and a memcmp of constant size, which the compiler
// inlines: the readers compare every child's local name with a dozen literals.
template <size_t N>
bool Is(std::string_view s, const char (&literal)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), literal, N - 1) == 0;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsXmlSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsXmlSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The position of the first byte at or after "i" that is not ASCII or is a control character
// XML 1.0 forbids (below 0x20 except tab, LF and CR), looking at whole blocks only: it may stop
// short, at the last block that does not fit before "n". Every byte of every message passes
// here, so it takes 16 bytes at a time with SSE2 (every x86-64) and 8 otherwise.
size_t SkipPlainAscii(const unsigned char* p, size_t n, size_t i) {
#ifdef __SSE2__
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  for (; n - i >= 16; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    // Signed: bytes of 0x80 and above are negative, so below 0x20 too.
    const __m128i below_space = _mm_cmplt_epi8(v, space);
    const __m128i allowed = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, lf)), _mm_cmpeq_epi8(v, cr));
    if (const int bad = _mm_movemask_epi8(_mm_andnot_si128(allowed, below_space)); bad != 0) {
      return i + static_cast<size_t>(std::countr_zero(static_cast<unsigned>(bad)));
    }
  }
#else
  // Per byte, exact (no carry crosses bytes): 0x80 where a byte below 0x80 is below 0x20, or
  // equals c.
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  for (; n - i >= 8; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t low = w & kLow7;
    const auto equal = [low](uint64_t c) {
      return ~(((low ^ (c * kOnes)) + kLow7) | (low ^ (c * kOnes))) & kHigh;
    };
    const uint64_t below_space = ~(low + 0x6060606060606060ULL) & kHigh;
    const uint64_t bad = (w & kHigh) | (below_space & ~(equal('\t') | equal('\n') | equal('\r')));
    if (bad != 0) return i;  // the byte loop finds which
  }
#endif
  return i;
}

// The offset of the first byte that is not part of well-formed UTF-8 (overlong forms, surrogates
// and code points above U+10FFFF included) or is a control character XML 1.0 forbids; npos
// when there is none.
size_t FindBadByte(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while ((i = SkipPlainAscii(p, n, i)) < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return i;
      ++i;
      continue;
    }
    size_t length;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
    } else {
      return i;
    }
    if (n - i < length) return i;
    uint32_t code_point = c & (0x7Fu >> length);
    for (size_t k = 1; k < length; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (p[i + k] & 0x3Fu);
    }
    if ((length == 3 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) ||
        (length == 4 && (code_point < 0x10000 || code_point > 0x10FFFF))) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

struct QName {
  std::string_view prefix;  // empty when unprefixed
  std::string_view local;
};

QName SplitName(const char* name) {
  size_t i = 0;
  while (name[i] != '\0' && name[i] != ':') ++i;
  if (name[i] == '\0') return {{}, std::string_view(name, i)};
  return {std::string_view(name, i), std::string_view(name + i + 1)};
}

std::string_view LocalName(pugi::xml_node element) { return SplitName(element.name()).local; }

// "/Envelope/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]": local names from the root down, with
// the 1-based position among the siblings of the same local name where there are several.
std::string XPath(pugi::xml_node node) {
  std::vector<std::string> steps;
  for (pugi::xml_node n = node; n && n.type() == pugi::node_element; n = n.parent()) {
    const std::string_view local = LocalName(n);
    int position = 1;
    int count = 1;
    for (pugi::xml_node s = n.previous_sibling(); s; s = s.previous_sibling()) {
      if (s.type() == pugi::node_element && LocalName(s) == local) ++position, ++count;
    }
    for (pugi::xml_node s = n.next_sibling(); s; s = s.next_sibling()) {
      if (s.type() == pugi::node_element && LocalName(s) == local) ++count;
    }
    steps.push_back(count > 1 ? absl::StrCat("/", ToAbsl(local), "[", position, "]")
                              : absl::StrCat("/", ToAbsl(local)));
  }
  std::string path;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) path += *it;
  return path;
}

absl::Status ErrorAt(pugi::xml_node node, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(XPath(node), ": ", ToAbsl(why)));
}

absl::Status MissingChild(pugi::xml_node parent, std::string_view child) {
  return absl::InvalidArgumentError(
      absl::StrCat(XPath(parent), "/", ToAbsl(child), ": missing (mandatory)"));
}

// Element text, surrounding whitespace trimmed.
std::string_view Text(pugi::xml_node element) { return Trim(element.child_value()); }

// Equality of two short texts (namespace prefixes) without a call to memcmp.
bool SameShortText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The namespace bindings in scope while descending the tree: every xmlns / xmlns:p attribute of
// the elements entered, innermost last. Entering an element costs nothing when it declares none,
// which is nearly every element of a message.
class NamespaceScope {
 public:
  // Binds the declarations of "element"; Leave(mark) with the returned mark unbinds them.
  size_t Enter(pugi::xml_node element) {
    const size_t mark = bindings_.size();
    for (pugi::xml_attribute a = element.first_attribute(); a; a = a.next_attribute()) {
      const char* name = a.name();
      if (std::strncmp(name, "xmlns", 5) != 0) continue;
      if (name[5] == '\0') {
        bindings_.push_back({{}, a.value()});
      } else if (name[5] == ':') {
        bindings_.push_back({name + 6, a.value()});
      }
    }
    return mark;
  }
  void Leave(size_t mark) {
    while (bindings_.size() > mark) bindings_.pop_back();
  }

  // Binds the declarations of "element" and of all its ancestors, outermost first.
  // REQUIRES: "element" lies at most kMaxIso20022Depth deep (FindMessageParts checked).
  void EnterPath(pugi::xml_node element) {
    std::array<pugi::xml_node, kMaxIso20022Depth> path;
    size_t depth = 0;
    for (pugi::xml_node n = element; n && n.type() == pugi::node_element && depth < path.size();
         n = n.parent()) {
      path[depth++] = n;
    }
    while (depth > 0) Enter(path[--depth]);
  }

  // The namespace URI of "prefix" (empty: the default namespace): empty for no namespace,
  // nullopt for a prefix nothing declares.
  std::optional<std::string_view> Resolve(std::string_view prefix) const {
    for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
      if (SameShortText(it->prefix, prefix)) return it->uri;
    }
    if (prefix.empty()) return std::string_view();
    if (prefix == "xml") return std::string_view("http://www.w3.org/XML/1998/namespace");
    return std::nullopt;
  }

 private:
  struct Binding {
    std::string_view prefix;
    std::string_view uri;
  };
  absl::InlinedVector<Binding, 8> bindings_;
};

// Visits the child elements of the one namespace a message's elements live in.
class NamespacedReader {
 public:
  NamespaceScope& scope() { return scope_; }
  // "ns" is the message's namespace URI as the document declares it.
  void set_namespace(std::string_view ns) { ns_ = ns; }

  // Calls f(local_name, child) for each child element of "parent" in the reader's namespace, in
  // document order, with the child's declarations in scope; stops at the first error f returns.
  // REQUIRES: the declarations of "parent" and its ancestors are in scope.
  template <typename F>
  absl::Status ForEachChild(pugi::xml_node parent, F&& f) {
    for (pugi::xml_node child = parent.first_child(); child; child = child.next_sibling()) {
      // Text and CDATA children have an empty name; no other kind is kept.
      const char* raw_name = child.name();
      if (*raw_name == '\0') continue;
      const size_t mark = scope_.Enter(child);
      const QName name = SplitName(raw_name);
      absl::Status status;
      if (InNamespace(name.prefix)) status = f(name.local, child);
      scope_.Leave(mark);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  bool InNamespace(std::string_view prefix) const {
    const std::optional<std::string_view> uri = scope_.Resolve(prefix);
    if (!uri.has_value()) return false;
    // Nearly always the very declaration ns_ was read from: the same bytes of the document.
    return uri->data() == ns_.data() ? uri->size() == ns_.size() : *uri == ns_;
  }

  std::string_view ns_;
  NamespaceScope scope_;
};

// ---------------------------------------------------------------------------------------------
// Values.

absl::Status CheckCountry(pugi::xml_node element, std::string_view country) {
  if (country.size() != 2 || !IsUpper(country[0]) || !IsUpper(country[1])) {
    return ErrorAt(element, absl::StrCat("country \"", ToAbsl(country),
                                         "\" is not an ISO 3166 code (two upper-case letters)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> ReadBic(pugi::xml_node element) {
  const std::string_view bic = Text(element);
  if (absl::Status s = CheckBic(bic); !s.ok()) return ErrorAt(element, ToStd(s.message()));
  return bic;
}

std::string_view BicCountry(std::string_view bic) {
  return bic.size() >= 6 ? bic.substr(4, 2) : std::string_view();
}

// An ActiveCurrencyAndAmount / ActiveOrHistoricCurrencyAndAmount: "1234.56" with Ccy="EUR".
absl::StatusOr<Money> ReadAmount(pugi::xml_node element) {
  const std::string_view code = element.attribute("Ccy").value();
  if (code.empty()) return ErrorAt(element, "has no Ccy attribute");
  const absl::StatusOr<Currency> currency = Currency::FromCode(ToAbsl(code));
  if (!currency.ok() || !currency->is_iso()) {
    return ErrorAt(element,
                   absl::StrCat("currency \"", ToAbsl(code), "\" is not an ISO 4217 code"));
  }
  absl::StatusOr<Money> money = Money::Parse(ToAbsl(Text(element)), *currency);
  if (!money.ok()) return ErrorAt(element, ToStd(money.status().message()));
  if (money->is_negative()) {
    return ErrorAt(element, absl::StrCat("amount ", money->ToDecimalString(), " is negative"));
  }
  if (absl::Status s = money->CheckIsoExponent(); !s.ok()) {
    return ErrorAt(element, ToStd(s.message()));
  }
  return money;
}

// MsgId, InstrId, EndToEndId, TxId (Max35Text): they make the transaction's id, so a line break
// or another control character in one is refused, as is a text over 35 characters.
absl::StatusOr<std::string_view> ReadIdentifier(pugi::xml_node element) {
  const std::string_view id = Text(element);
  size_t characters = 0;
  for (const char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return ErrorAt(element, "contains a control character");
    characters += (byte & 0xC0) != 0x80;  // UTF-8 continuation bytes are not characters
  }
  if (characters > 35) {
    return ErrorAt(element, absl::StrCat("is ", characters, " characters, more than 35"));
  }
  return id;
}

absl::StatusOr<std::string_view> ReadDate(pugi::xml_node element) {
  const std::string_view date = Text(element);
  if (absl::Status s = CheckIsoDate(date); !s.ok()) return ErrorAt(element, ToStd(s.message()));
  return date;
}

// A UUIDv4Identifier: 8-4-4-4-12 hexadecimal digits, version digit 4, variant digit 8, 9, a or
// b. Returned in lower case.
absl::StatusOr<std::string> ReadUetr(pugi::xml_node element) {
  const std::string_view text = Text(element);
  std::string uetr(text);
  bool ok = uetr.size() == 36;
  for (size_t i = 0; ok && i < uetr.size(); ++i) {
    char& c = uetr[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      ok = c == '-';
      continue;
    }
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    ok = IsDigit(c) || (c >= 'a' && c <= 'f');
  }
  if (!ok) {
    return ErrorAt(element, absl::StrCat("UETR \"", ToAbsl(text),
                                         "\" is not a UUID (8-4-4-4-12 hexadecimal digits)"));
  }
  if (uetr[14] != '4' ||
      (uetr[19] != '8' && uetr[19] != '9' && uetr[19] != 'a' && uetr[19] != 'b')) {
    return ErrorAt(element, absl::StrCat("UETR \"", ToAbsl(text),
                                         "\" is not a version 4 UUID (xxxxxxxx-xxxx-4xxx-[89ab]xxx-"
                                         "xxxxxxxxxxxx)"));
  }
  return uetr;
}

// An ISODateTime: "2022-10-20T09:35:00+02:00", "2021-05-11T10:13:41.960Z", "2018-04-30T16:35:54"
// (no offset: read as UTC). Digits of the fraction beyond microseconds are dropped. nullopt when
// it is none of these, or falls outside the years 0000 to 9999 in UTC.
std::optional<UtcTime> ParseIsoDateTime(std::string_view text) {
  // Room for the date and time (19), a fraction of 6 digits and an offset of 6 characters.
  char buffer[19 + 7 + 6];
  if (text.size() < 19) return std::nullopt;
  std::memcpy(buffer, text.data(), 19);
  size_t length = 19;
  size_t i = 19;
  if (i < text.size() && text[i] == '.') {
    buffer[length++] = '.';
    for (++i; i < text.size() && IsDigit(text[i]); ++i) {
      if (length < 19 + 7) buffer[length++] = text[i];
    }
  }
  const std::string_view offset = text.substr(i);
  if (offset.size() > 6) return std::nullopt;
  if (offset.empty()) {
    buffer[length++] = 'Z';
  } else {
    std::memcpy(buffer + length, offset.data(), offset.size());
    length += offset.size();
  }
  const absl::StatusOr<UtcTime> t = ParseRfc3339(absl::string_view(buffer, length));
  if (!t.ok()) return std::nullopt;
  // An offset can carry a time at the edge of the calendar out of the years 0000-9999, which
  // RFC 3339 (and so vigil's JSON) cannot write.
  using std::chrono::year;
  constexpr std::chrono::sys_days kFirst{year(0) / 1 / 1};
  constexpr std::chrono::sys_days kEnd{year(10000) / 1 / 1};
  if (*t < kFirst || *t >= kEnd) return std::nullopt;
  return *t;
}

absl::StatusOr<std::string_view> ReadCharges(pugi::xml_node element) {
  const std::string_view code = Text(element);
  if (code == "DEBT") return std::string_view("OUR");
  if (code == "CRED") return std::string_view("BEN");
  if (code == "SHAR" || code == "SLEV") return std::string_view("SHA");
  return ErrorAt(element, absl::StrCat("charge bearer \"", ToAbsl(code),
                                       "\" is not DEBT, CRED, SHAR or SLEV"));
}

// ---------------------------------------------------------------------------------------------
// What a message says about one party, agent or account, as views into the parsed document.

// A party (PartyIdentification: Nm, PstlAdr, Id/OrgId, CtryOfRes) or a financial institution
// (BranchAndFinancialInstitutionIdentification: FinInstnId/BICFI, ClrSysMmbId, LEI, Nm,
// PstlAdr): the reader takes either shape wherever it reads one.
struct Entity {
  pugi::xml_node node;       // the element (<Dbtr>, <CdtrAgt>, ...); null when absent
  bool institution = false;  // has FinInstnId
  std::string_view name;
  std::string_view bic;  // BICFI or AnyBIC, checked
  std::string_view lei;
  std::string_view member_id;        // ClrSysMmbId/MmbId
  std::string_view country;          // PstlAdr/Ctry, checked
  std::string_view residence;        // CtryOfRes, checked
  std::vector<std::string> address;  // PstlAdr as lines, when asked for
};

// RmtInf/Ustrd texts.
using Texts = absl::InlinedVector<std::string_view, 4>;

struct Account {
  pugi::xml_node node;
  std::string_view iban;   // Id/IBAN, checked
  std::string_view other;  // Id/Othr/Id
  std::string_view id() const { return iban.empty() ? other : iban; }
};

// The optional PstlAdr elements that form one line, in line order (iso20022.h).
constexpr std::string_view kAddressLines[][4] = {
    {"CareOf"},
    {"Dept"},
    {"SubDept"},
    {"StrtNm", "BldgNb"},
    {"BldgNm", "Flr", "Room", "UnitNb"},
    {"PstBx"},
    {"PstCd", "TwnNm"},
    {"TwnLctnNm"},
    {"DstrctNm"},
    {"CtrySubDvsn"},
};
constexpr size_t kNumAddressLines = sizeof(kAddressLines) / sizeof(kAddressLines[0]);

class MessageReader {
 public:
  NamespacedReader& xml() { return xml_; }

  template <typename F>
  absl::Status ForEachChild(pugi::xml_node parent, F&& f) {
    return xml_.ForEachChild(parent, std::forward<F>(f));
  }

  absl::Status ReadPostalAddress(pugi::xml_node element, Entity& e, bool with_lines) {
    std::string_view parts[kNumAddressLines][4] = {};
    absl::InlinedVector<std::string_view, 7> free_lines;  // AdrLine: at most 7
    VIGIL_RETURN_IF_ERROR(ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "Ctry")) {
        e.country = Text(c);
        return CheckCountry(c, e.country);
      }
      if (!with_lines) return absl::OkStatus();
      if (Is(local, "AdrLine")) {
        free_lines.push_back(Text(c));
        return absl::OkStatus();
      }
      for (size_t line = 0; line < kNumAddressLines; ++line) {
        for (size_t part = 0; part < 4; ++part) {
          if (!local.empty() && kAddressLines[line][part] == local) parts[line][part] = Text(c);
        }
      }
      return absl::OkStatus();
    }));
    if (!with_lines) return absl::OkStatus();
    for (size_t line = 0; line < kNumAddressLines; ++line) {
      std::string text;
      for (std::string_view part : parts[line]) {
        if (part.empty()) continue;
        if (!text.empty()) text += ' ';
        text += part;
      }
      if (!text.empty()) e.address.push_back(std::move(text));
    }
    for (std::string_view line : free_lines) {
      if (!line.empty()) e.address.emplace_back(line);
    }
    return absl::OkStatus();
  }

  absl::Status ReadFinInstnId(pugi::xml_node element, Entity& e, bool with_address) {
    e.institution = true;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
      if (Is(local, "BICFI")) {
        VIGIL_ASSIGN_OR_RETURN(e.bic, ReadBic(c));
      } else if (Is(local, "Nm")) {
        e.name = Text(c);
      } else if (Is(local, "PstlAdr")) {
        return ReadPostalAddress(c, e, with_address);
      } else if (Is(local, "LEI")) {
        e.lei = Text(c);
      } else if (Is(local, "ClrSysMmbId")) {
        return ForEachChild(c, [&](std::string_view l, pugi::xml_node m) {
          if (Is(l, "MmbId")) e.member_id = Text(m);
          return absl::OkStatus();
        });
      }
      return absl::OkStatus();
    });
  }

  // Id/OrgId/AnyBIC and LEI of a party.
  absl::Status ReadPartyId(pugi::xml_node element, Entity& e) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (!Is(local, "OrgId")) return absl::OkStatus();
      return ForEachChild(c, [&](std::string_view l, pugi::xml_node o) -> absl::Status {
        if (Is(l, "AnyBIC")) {
          VIGIL_ASSIGN_OR_RETURN(e.bic, ReadBic(o));
        } else if (Is(l, "LEI")) {
          e.lei = Text(o);
        }
        return absl::OkStatus();
      });
    });
  }

  absl::Status ReadEntity(pugi::xml_node element, Entity& e, bool with_address) {
    e.node = element;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
      if (Is(local, "FinInstnId")) return ReadFinInstnId(c, e, with_address);
      if (Is(local, "Nm")) {
        e.name = Text(c);
      } else if (Is(local, "PstlAdr")) {
        return ReadPostalAddress(c, e, with_address);
      } else if (Is(local, "Id")) {
        return ReadPartyId(c, e);
      } else if (Is(local, "CtryOfRes")) {
        e.residence = Text(c);
        return CheckCountry(c, e.residence);
      }
      return absl::OkStatus();
    });
  }

  absl::Status ReadAccount(pugi::xml_node element, Account& a) {
    a.node = element;
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (!Is(local, "Id")) return absl::OkStatus();
      return ForEachChild(c, [&](std::string_view l, pugi::xml_node id) -> absl::Status {
        if (Is(l, "IBAN")) {
          a.iban = Text(id);
          if (absl::Status s = CheckIban(a.iban); !s.ok()) return ErrorAt(id, ToStd(s.message()));
        } else if (Is(l, "Othr")) {
          return ForEachChild(id, [&](std::string_view o, pugi::xml_node other) {
            if (Is(o, "Id")) a.other = Text(other);
            return absl::OkStatus();
          });
        }
        return absl::OkStatus();
      });
    });
  }

  absl::Status ReadRemittance(pugi::xml_node element, Texts& texts) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "Ustrd")) texts.push_back(Text(c));
      return absl::OkStatus();
    });
  }

  // PmtTpInf/InstrPrty.
  absl::Status ReadPriority(pugi::xml_node element, std::string_view& priority) {
    return ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
      if (Is(local, "InstrPrty")) priority = Text(c);
      return absl::OkStatus();
    });
  }

 private:
  NamespacedReader xml_;
};

// ---------------------------------------------------------------------------------------------
// The message: application header, group header, transactions.

struct AppHeader {
  bool present = false;               // a head.001 AppHdr was read
  std::string_view from_bic, to_bic;  // Fr/FIId/FinInstnId/BICFI, To/..., checked
  std::string_view created;           // CreDt
};

struct GroupHeader {
  pugi::xml_node node;
  std::string_view message_id;
  pugi::xml_node created_node;  // CreDtTm
  std::optional<UtcTime> created;
  std::string_view value_date;  // IntrBkSttlmDt, checked
  std::string_view priority;    // PmtTpInf/InstrPrty
  Entity instructing, instructed;
  pugi::xml_node number_node;  // NbOfTxs
  std::string_view number_of_transactions;
};

// UndrlygCstmrCdtTrf of a pacs.009 COV.
struct Underlying {
  bool present = false;
  Entity debtor, creditor, debtor_agent, creditor_agent;
  Account debtor_account, creditor_account;
  Texts remittance;
};

struct TxFields {
  pugi::xml_node node;
  std::string_view instruction_id, end_to_end_id, transaction_id;
  std::string uetr;
  std::optional<Money> settlement_amount, instructed_amount;
  std::string_view value_date, charges, purpose_code, purpose_proprietary, priority;
  Texts remittance;
  Entity instructing, instructed, debtor_agent, creditor_agent, intermediary[3];
  Account debtor_agent_account, creditor_agent_account, intermediary_account[3];
  Entity debtor, creditor, ultimate_debtor, ultimate_creditor;
  Account debtor_account, creditor_account;
  Underlying underlying;
};

// An AppHdr of another namespace than head.001 is not read.
absl::Status ReadAppHeader(pugi::xml_node element, AppHeader& header) {
  MessageReader r;
  r.xml().scope().EnterPath(element);
  const std::optional<std::string_view> ns =
      r.xml().scope().Resolve(SplitName(element.name()).prefix);
  if (!ns || ns->substr(0, kAppHdrNamespacePrefix.size()) != kAppHdrNamespacePrefix) {
    return absl::OkStatus();
  }
  r.xml().set_namespace(*ns);
  header.present = true;
  // Fr / To: FIId/FinInstnId/BICFI (the OrgId form names no bank).
  const auto read_bic = [&r](pugi::xml_node party, std::string_view& bic) {
    return r.ForEachChild(party, [&](std::string_view l1, pugi::xml_node fi_id) {
      if (!Is(l1, "FIId")) return absl::OkStatus();
      return r.ForEachChild(fi_id, [&](std::string_view l2, pugi::xml_node fin) {
        if (!Is(l2, "FinInstnId")) return absl::OkStatus();
        return r.ForEachChild(fin, [&](std::string_view l3, pugi::xml_node b) -> absl::Status {
          if (Is(l3, "BICFI")) {
            VIGIL_ASSIGN_OR_RETURN(bic, ReadBic(b));
          }
          return absl::OkStatus();
        });
      });
    });
  };
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "Fr")) return read_bic(c, header.from_bic);
    if (Is(local, "To")) return read_bic(c, header.to_bic);
    if (Is(local, "CreDt")) header.created = Text(c);
    return absl::OkStatus();
  });
}

absl::Status ReadGroupHeader(MessageReader& r, pugi::xml_node element, GroupHeader& g) {
  g.node = element;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "MsgId")) {
      VIGIL_ASSIGN_OR_RETURN(g.message_id, ReadIdentifier(c));
      if (g.message_id.empty()) return ErrorAt(c, "is empty");
    } else if (Is(local, "CreDtTm")) {
      g.created_node = c;
      g.created = ParseIsoDateTime(Text(c));
    } else if (Is(local, "NbOfTxs")) {
      g.number_node = c;
      g.number_of_transactions = Text(c);
    } else if (Is(local, "IntrBkSttlmDt")) {
      VIGIL_ASSIGN_OR_RETURN(g.value_date, ReadDate(c));
    } else if (Is(local, "InstgAgt")) {
      return r.ReadEntity(c, g.instructing, false);
    } else if (Is(local, "InstdAgt")) {
      return r.ReadEntity(c, g.instructed, false);
    } else if (Is(local, "PmtTpInf")) {
      return r.ReadPriority(c, g.priority);
    }
    return absl::OkStatus();
  });
}

absl::Status ReadUnderlying(MessageReader& r, pugi::xml_node element, Underlying& u) {
  u.present = true;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "Dbtr")) return r.ReadEntity(c, u.debtor, true);
    if (Is(local, "Cdtr")) return r.ReadEntity(c, u.creditor, true);
    if (Is(local, "DbtrAcct")) return r.ReadAccount(c, u.debtor_account);
    if (Is(local, "CdtrAcct")) return r.ReadAccount(c, u.creditor_account);
    if (Is(local, "DbtrAgt")) return r.ReadEntity(c, u.debtor_agent, false);
    if (Is(local, "CdtrAgt")) return r.ReadEntity(c, u.creditor_agent, false);
    if (Is(local, "RmtInf")) return r.ReadRemittance(c, u.remittance);
    return absl::OkStatus();
  });
}

absl::Status ReadPaymentId(MessageReader& r, pugi::xml_node element, TxFields& f) {
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "InstrId")) {
      VIGIL_ASSIGN_OR_RETURN(f.instruction_id, ReadIdentifier(c));
    } else if (Is(local, "EndToEndId")) {
      VIGIL_ASSIGN_OR_RETURN(f.end_to_end_id, ReadIdentifier(c));
    } else if (Is(local, "TxId")) {
      VIGIL_ASSIGN_OR_RETURN(f.transaction_id, ReadIdentifier(c));
    } else if (Is(local, "UETR")) {
      VIGIL_ASSIGN_OR_RETURN(f.uetr, ReadUetr(c));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadPurpose(MessageReader& r, pugi::xml_node element, TxFields& f) {
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "Cd")) f.purpose_code = Text(c);
    if (Is(local, "Prtry")) f.purpose_proprietary = Text(c);
    return absl::OkStatus();
  });
}

// IntrmyAgt1..3 and IntrmyAgt1Acct..3Acct: the index 0..2, or -1.
int IntermediaryIndex(std::string_view local, std::string_view suffix) {
  if (local.size() != 10 + suffix.size() || local.substr(0, 9) != "IntrmyAgt" ||
      local.substr(10) != suffix || local[9] < '1' || local[9] > '3') {
    return -1;
  }
  return local[9] - '1';
}

// One pass over the children of a CdtTrfTxInf.
absl::Status ReadTransaction(MessageReader& r, pugi::xml_node element, TxFields& f) {
  f.node = element;
  return r.ForEachChild(element, [&](std::string_view local, pugi::xml_node c) -> absl::Status {
    if (Is(local, "PmtId")) return ReadPaymentId(r, c, f);
    if (Is(local, "IntrBkSttlmAmt")) {
      VIGIL_ASSIGN_OR_RETURN(f.settlement_amount, ReadAmount(c));
    } else if (Is(local, "InstdAmt")) {
      VIGIL_ASSIGN_OR_RETURN(f.instructed_amount, ReadAmount(c));
    } else if (Is(local, "IntrBkSttlmDt")) {
      VIGIL_ASSIGN_OR_RETURN(f.value_date, ReadDate(c));
    } else if (Is(local, "ChrgBr")) {
      VIGIL_ASSIGN_OR_RETURN(f.charges, ReadCharges(c));
    } else if (Is(local, "PmtTpInf")) {
      return r.ReadPriority(c, f.priority);
    } else if (Is(local, "InstgAgt")) {
      return r.ReadEntity(c, f.instructing, false);
    } else if (Is(local, "InstdAgt")) {
      return r.ReadEntity(c, f.instructed, false);
    } else if (Is(local, "Dbtr")) {
      return r.ReadEntity(c, f.debtor, true);
    } else if (Is(local, "DbtrAcct")) {
      return r.ReadAccount(c, f.debtor_account);
    } else if (Is(local, "DbtrAgt")) {
      return r.ReadEntity(c, f.debtor_agent, false);
    } else if (Is(local, "DbtrAgtAcct")) {
      return r.ReadAccount(c, f.debtor_agent_account);
    } else if (Is(local, "CdtrAgt")) {
      return r.ReadEntity(c, f.creditor_agent, false);
    } else if (Is(local, "CdtrAgtAcct")) {
      return r.ReadAccount(c, f.creditor_agent_account);
    } else if (Is(local, "Cdtr")) {
      return r.ReadEntity(c, f.creditor, true);
    } else if (Is(local, "CdtrAcct")) {
      return r.ReadAccount(c, f.creditor_account);
    } else if (Is(local, "UltmtDbtr")) {
      return r.ReadEntity(c, f.ultimate_debtor, true);
    } else if (Is(local, "UltmtCdtr")) {
      return r.ReadEntity(c, f.ultimate_creditor, true);
    } else if (Is(local, "RmtInf")) {
      return r.ReadRemittance(c, f.remittance);
    } else if (Is(local, "Purp")) {
      return ReadPurpose(r, c, f);
    } else if (Is(local, "UndrlygCstmrCdtTrf")) {
      return ReadUnderlying(r, c, f.underlying);
    } else if (const int i = IntermediaryIndex(local, ""); i >= 0) {
      return r.ReadEntity(c, f.intermediary[i], false);
    } else if (const int j = IntermediaryIndex(local, "Acct"); j >= 0) {
      return r.ReadAccount(c, f.intermediary_account[j]);
    }
    return absl::OkStatus();
  });
}

// ---------------------------------------------------------------------------------------------
// Mapping to Transaction.

std::string_view FirstNonEmpty(std::initializer_list<std::string_view> values) {
  for (std::string_view v : values) {
    if (!v.empty()) return v;
  }
  return {};
}

// The originator or beneficiary: "party" with its account and its bank ("agent").
Party MakeParty(Entity& party, const Account& account, const Entity& agent) {
  Party p;
  p.name = std::string(party.name);
  p.address = std::move(party.address);
  // A bank with a BIC is its own bank, as an MT202's 52A/58A party is (the formats agree).
  p.bank_id = std::string(FirstNonEmpty(
      {party.institution ? party.bic : std::string_view(), agent.bic, agent.member_id}));
  p.country = std::string(
      FirstNonEmpty({party.country, party.residence, BicCountry(party.bic),
                     account.iban.substr(0, account.iban.empty() ? 0 : 2), BicCountry(agent.bic)}));
  p.account_id = PartyAccountKey(account.id(), party.bic, agent.bic, party.name);
  return p;
}

Party MakeUltimateParty(Entity& party) {
  Party p;
  p.account_id = std::string(FirstNonEmpty({party.bic, party.lei}));
  p.name = std::string(party.name);
  p.address = std::move(party.address);
  p.country = std::string(FirstNonEmpty({party.country, party.residence, BicCountry(party.bic)}));
  return p;
}

void AddAgent(AgentRole role, const Entity& e, const Account* account, Transaction& tx) {
  if (!e.node) return;
  Agent& a = tx.agents.emplace_back();
  a.role = role;
  a.bic = std::string(e.bic);
  if (account != nullptr) a.account_id = std::string(account->id());
  a.name = std::string(e.name);
  a.country = std::string(FirstNonEmpty({e.country, BicCountry(e.bic)}));
}

void AddAgentBic(AgentRole role, std::string_view bic, Transaction& tx) {
  if (bic.empty()) return;
  Agent& a = tx.agents.emplace_back();
  a.role = role;
  a.bic = std::string(bic);
  a.country = std::string(BicCountry(bic));
}

std::string JoinRemittance(const Texts& texts) {
  std::string joined;
  for (std::string_view t : texts) {
    if (t.empty()) continue;
    if (!joined.empty()) joined += ' ';
    joined += t;
  }
  return joined;
}

struct MessageContext {
  std::string_view definition;  // "pacs.008.001.08"
  bool fi_transfer = false;     // pacs.009
  const AppHeader* app_header = nullptr;
  const GroupHeader* group = nullptr;
};

// GrpHdr/CreDtTm; when it is not a date and time, the AppHdr's CreDt, then the settlement date
// at 00:00 UTC (iso20022.h).
absl::StatusOr<UtcTime> EventTime(const MessageContext& m, std::string_view value_date) {
  const GroupHeader& g = *m.group;
  if (g.created) return *g.created;
  if (m.app_header != nullptr) {
    if (std::optional<UtcTime> t = ParseIsoDateTime(m.app_header->created)) return *t;
  }
  if (!value_date.empty()) {
    if (std::optional<UtcTime> t =
            ParseIsoDateTime(absl::StrCat(ToAbsl(value_date), "T00:00:00Z"))) {
      return *t;
    }
  }
  return ErrorAt(g.created_node, absl::StrCat("\"", ToAbsl(Text(g.created_node)),
                                              "\" is not a date and time, and the message has no "
                                              "settlement date to fall back on"));
}

// id, reference, UETR.
void FillIdentity(const MessageContext& m, TxFields& f, int index, Transaction& tx) {
  tx.uetr = std::move(f.uetr);
  if (!tx.uetr.empty()) {
    tx.id = tx.uetr;
  } else {
    const std::string_view e2e = f.end_to_end_id == kNotProvided ? "" : f.end_to_end_id;
    const std::string_view tail = FirstNonEmpty({f.transaction_id, f.instruction_id, e2e});
    tx.id = tail.empty() ? absl::StrCat(ToAbsl(m.group->message_id), "/", index)
                         : absl::StrCat(ToAbsl(m.group->message_id), "/", ToAbsl(tail));
  }
  tx.reference = std::string(f.end_to_end_id == kNotProvided ? f.instruction_id : f.end_to_end_id);
}

absl::Status FillParties(TxFields& f, Transaction& tx) {
  if (!f.debtor.node) return MissingChild(f.node, "Dbtr");
  if (!f.creditor.node) return MissingChild(f.node, "Cdtr");
  tx.originator = MakeParty(f.debtor, f.debtor_account, f.debtor_agent);
  if (tx.originator.account_id.empty()) {
    return ErrorAt(f.debtor.node, "names neither an account, a BIC nor a name");
  }
  tx.beneficiary = MakeParty(f.creditor, f.creditor_account, f.creditor_agent);
  if (tx.beneficiary.account_id.empty()) {
    return ErrorAt(f.creditor.node, "names neither an account, a BIC nor a name");
  }
  Underlying& u = f.underlying;
  if (f.ultimate_debtor.node) {
    tx.ultimate_originator = MakeUltimateParty(f.ultimate_debtor);
  } else if (u.debtor.node) {
    tx.ultimate_originator = MakeParty(u.debtor, u.debtor_account, u.debtor_agent);
  }
  if (f.ultimate_creditor.node) {
    tx.ultimate_beneficiary = MakeUltimateParty(f.ultimate_creditor);
  } else if (u.creditor.node) {
    tx.ultimate_beneficiary = MakeParty(u.creditor, u.creditor_account, u.creditor_agent);
  }
  return absl::OkStatus();
}

// In role order (iso20022.h); the instructing and instructed agents of the transaction, else of
// the group header, else of the application header.
void FillAgents(const MessageContext& m, const TxFields& f, Transaction& tx) {
  const GroupHeader& g = *m.group;
  tx.agents.reserve(8);
  if (f.instructing.node) {
    AddAgent(AgentRole::kInstructing, f.instructing, nullptr, tx);
  } else if (g.instructing.node) {
    AddAgent(AgentRole::kInstructing, g.instructing, nullptr, tx);
  } else if (m.app_header != nullptr) {
    AddAgentBic(AgentRole::kInstructing, m.app_header->from_bic, tx);
  }
  if (f.instructed.node) {
    AddAgent(AgentRole::kInstructed, f.instructed, nullptr, tx);
  } else if (g.instructed.node) {
    AddAgent(AgentRole::kInstructed, g.instructed, nullptr, tx);
  } else if (m.app_header != nullptr) {
    AddAgentBic(AgentRole::kInstructed, m.app_header->to_bic, tx);
  }
  AddAgent(AgentRole::kOrderingInstitution, f.debtor_agent, &f.debtor_agent_account, tx);
  for (int i = 0; i < 3; ++i) {
    AddAgent(AgentRole::kIntermediary, f.intermediary[i], &f.intermediary_account[i], tx);
  }
  AddAgent(AgentRole::kAccountWithInstitution, f.creditor_agent, &f.creditor_agent_account, tx);
  if (m.fi_transfer) {
    AddAgent(AgentRole::kBeneficiaryInstitution, f.creditor, &f.creditor_account, tx);
  }
}

// REQUIRES: "tx" is a new Transaction.
absl::Status BuildTransaction(const MessageContext& m, TxFields& f, int index, Transaction& tx) {
  tx.message_type = std::string(m.definition);
  tx.payment_format = PaymentFormat::kWire;
  FillIdentity(m, f, index, tx);
  if (!f.settlement_amount) return MissingChild(f.node, "IntrBkSttlmAmt");
  if (f.instructed_amount) {
    tx.amount = *f.instructed_amount;
    if (!(*f.instructed_amount == *f.settlement_amount)) tx.settled_amount = f.settlement_amount;
  } else {
    tx.amount = *f.settlement_amount;
  }
  tx.value_date = std::string(FirstNonEmpty({f.value_date, m.group->value_date}));
  VIGIL_ASSIGN_OR_RETURN(tx.event_time, EventTime(m, tx.value_date));
  tx.charges = std::string(f.charges);
  tx.purpose = std::string(FirstNonEmpty({f.purpose_code, f.purpose_proprietary}));
  tx.remittance = JoinRemittance(f.remittance);
  if (tx.remittance.empty()) tx.remittance = JoinRemittance(f.underlying.remittance);
  tx.priority =
      FirstNonEmpty({f.priority, m.group->priority}) == "HIGH" ? Priority::kP0 : Priority::kP1;
  VIGIL_RETURN_IF_ERROR(FillParties(f, tx));
  FillAgents(m, f, tx);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Document structure.

// The Document and the AppHdr of a message, found by a walk of the whole tree that also refuses
// DOCTYPEs, text outside the root element, more than one root element and nesting beyond
// kMaxIso20022Depth. Iterative: the depth of the input bounds no stack.
struct MessageParts {
  pugi::xml_node document;
  pugi::xml_node app_header;  // null when absent
  // Elements whose text the parser left in pieces: "<Nm>A<!-- -->B</Nm>" is the value "A" and
  // a text child "B". Read as the first piece alone, such a name would hide the rest from
  // screening, so JoinTextPieces makes each one text.
  std::vector<pugi::xml_node> split_texts;
};

absl::StatusOr<MessageParts> FindMessageParts(const pugi::xml_document& doc) {
  MessageParts parts;
  int roots = 0;
  int depth = 1;
  int inside = 0;  // depth of the Document or AppHdr the walk is in; 0 outside both
  pugi::xml_node node = doc.first_child();
  while (node) {
    switch (node.type()) {
      case pugi::node_doctype:
        return absl::InvalidArgumentError(
            "XML with a DOCTYPE: ISO 20022 messages take no DTD, entity declarations or "
            "external entities");
      case pugi::node_pcdata:
      case pugi::node_cdata: {
        if (depth == 1) return absl::InvalidArgumentError("XML with text outside the root element");
        const pugi::xml_node parent = node.parent();
        bool split = *parent.value() != '\0';
        for (pugi::xml_node s = node.previous_sibling(); s && !split; s = s.previous_sibling()) {
          split = s.type() == pugi::node_pcdata || s.type() == pugi::node_cdata;
        }
        if (split && (parts.split_texts.empty() || parts.split_texts.back() != parent)) {
          parts.split_texts.push_back(parent);
        }
        break;
      }
      case pugi::node_element: {
        if (depth > kMaxIso20022Depth) {
          return ErrorAt(
              node, absl::StrCat("elements nested deeper than ", kMaxIso20022Depth, " levels"));
        }
        if (depth == 1 && ++roots > 1) {
          return absl::InvalidArgumentError("XML with more than one root element");
        }
        if (inside != 0) break;
        const std::string_view local = LocalName(node);
        if (Is(local, "Document")) {
          if (parts.document) {
            return ErrorAt(node, "a second Document: vigil reads one message at a time");
          }
          parts.document = node;
          inside = depth;
        } else if (Is(local, "AppHdr")) {
          if (!parts.app_header) parts.app_header = node;
          inside = depth;
        }
        break;
      }
      default:
        break;
    }
    if (pugi::xml_node child = node.first_child()) {
      node = child;
      ++depth;
      continue;
    }
    while (!node.next_sibling()) {
      node = node.parent();
      if (--depth == 0) return parts;
    }
    node = node.next_sibling();
    if (depth <= inside) inside = 0;
  }
  return parts;
}

// Makes the text pieces of "element" (its value and its text and CDATA children) one value.
void JoinTextPieces(pugi::xml_node element) {
  std::string text = element.value();
  for (pugi::xml_node child = element.first_child(); child;) {
    const pugi::xml_node next = child.next_sibling();
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
      text += child.value();
      element.remove_child(child);
    }
    child = next;
  }
  element.text().set(text.c_str());
}

// "pacs.008.001.08", "pain.001.001.03.ch.02": business area (4 letters), message number,
// variant, version, then anything.
bool LooksLikeMessageDefinition(std::string_view id) {
  if (id.size() < 15) return false;
  for (size_t i = 0; i < 15; ++i) {
    const char c = id[i];
    const bool ok = i < 4 ? IsLower(c) : (i == 4 || i == 8 || i == 12) ? c == '.' : IsDigit(c);
    if (!ok) return false;
  }
  return id.size() == 15 || id[15] == '.';
}

// Whether "id" is a definition vigil reads: pacs.008 or pacs.009, version 07 or later.
bool IsSupportedDefinition(std::string_view id) {
  if (id.size() != 15 || !IsDigit(id[13]) || !IsDigit(id[14]) ||
      (id.substr(0, 13) != "pacs.008.001." && id.substr(0, 13) != "pacs.009.001.")) {
    return false;
  }
  return (id[13] - '0') * 10 + (id[14] - '0') >= 7;
}

absl::Status Unsupported(std::string_view id) {
  return absl::UnimplementedError(
      absl::StrCat("unsupported message type ", ToAbsl(id),
                   " (vigil reads pacs.008 and pacs.009, version 001.07 and later)"));
}

// The message definition the Document's namespace names; kUnimplemented for those vigil does
// not read, including market variants in namespaces of their own (SIX's
// "http://www.six-interbank-clearing.com/de/pain.001.001.03.ch.02.xsd").
absl::StatusOr<std::string_view> MessageDefinition(pugi::xml_node document, NamespaceScope& scope) {
  const QName name = SplitName(document.name());
  const std::optional<std::string_view> ns = scope.Resolve(name.prefix);
  if (!ns.has_value()) {
    return ErrorAt(document, absl::StrCat("uses the undeclared namespace prefix \"",
                                          ToAbsl(name.prefix), "\""));
  }
  if (ns->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ISO 20022 document at ", XPath(document), " has no namespace (expected ",
                     ToAbsl(kIsoNamespacePrefix), "<message definition>)"));
  }
  if (ns->substr(0, kIsoNamespacePrefix.size()) == kIsoNamespacePrefix) {
    const std::string_view id = ns->substr(kIsoNamespacePrefix.size());
    if (IsSupportedDefinition(id)) return id;
    if (LooksLikeMessageDefinition(id)) return Unsupported(id);
  } else {
    std::string_view last = ns->substr(ns->find_last_of("/:") + 1);
    if (last.size() > 4 && last.substr(last.size() - 4) == ".xsd") last.remove_suffix(4);
    if (LooksLikeMessageDefinition(last)) return Unsupported(last);
  }
  return ErrorAt(document, absl::StrCat("namespace \"", ToAbsl(*ns), "\" names no ISO 20022 ",
                                        "message definition (expected ",
                                        ToAbsl(kIsoNamespacePrefix), "<message definition>)"));
}

absl::Status CheckTransactionCount(const GroupHeader& g, size_t count) {
  if (!g.number_node) return MissingChild(g.node, "NbOfTxs");
  const std::string_view text = g.number_of_transactions;
  size_t number = 0;
  bool ok = !text.empty() && text.size() <= 15;
  for (char c : text) {
    ok = ok && IsDigit(c);
    number = number * 10 + static_cast<size_t>(c - '0');
  }
  if (!ok) return ErrorAt(g.number_node, absl::StrCat("\"", ToAbsl(text), "\" is not a number"));
  if (number != count) {
    return ErrorAt(g.number_node, absl::StrCat("says ", number, " transactions, the message has ",
                                               count, " CdtTrfTxInf"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Transaction>> ReadMessage(const MessageParts& parts) {
  MessageReader r;
  NamespaceScope& scope = r.xml().scope();
  scope.EnterPath(parts.document);
  VIGIL_ASSIGN_OR_RETURN(const std::string_view definition,
                         MessageDefinition(parts.document, scope));
  // MessageDefinition accepts only a document of a declared, ISO 20022 namespace.
  r.xml().set_namespace(*scope.Resolve(SplitName(parts.document.name()).prefix));

  MessageContext m;
  m.definition = definition;
  m.fi_transfer = definition.substr(0, 8) == "pacs.009";
  const std::string_view root_name = m.fi_transfer ? "FICdtTrf" : "FIToFICstmrCdtTrf";

  AppHeader app_header;
  if (parts.app_header) {
    VIGIL_RETURN_IF_ERROR(ReadAppHeader(parts.app_header, app_header));
    if (app_header.present) m.app_header = &app_header;
  }

  pugi::xml_node root;
  VIGIL_RETURN_IF_ERROR(
      r.ForEachChild(parts.document, [&](std::string_view local, pugi::xml_node c) {
        if (local == root_name && !root) root = c;
        return absl::OkStatus();
      }));
  if (!root) return MissingChild(parts.document, root_name);
  const size_t root_mark = r.xml().scope().Enter(root);

  pugi::xml_node group_node;
  std::vector<pugi::xml_node> transactions;
  VIGIL_RETURN_IF_ERROR(r.ForEachChild(root, [&](std::string_view local, pugi::xml_node c) {
    if (Is(local, "GrpHdr") && !group_node) group_node = c;
    if (Is(local, "CdtTrfTxInf")) transactions.push_back(c);
    return absl::OkStatus();
  }));
  if (!group_node) return MissingChild(root, "GrpHdr");
  GroupHeader group;
  {
    const size_t mark = r.xml().scope().Enter(group_node);
    VIGIL_RETURN_IF_ERROR(ReadGroupHeader(r, group_node, group));
    r.xml().scope().Leave(mark);
  }
  if (group.message_id.empty()) return MissingChild(group_node, "MsgId");
  if (!group.created_node) return MissingChild(group_node, "CreDtTm");
  if (transactions.empty()) return MissingChild(root, "CdtTrfTxInf");
  VIGIL_RETURN_IF_ERROR(CheckTransactionCount(group, transactions.size()));
  m.group = &group;

  std::vector<Transaction> result;
  result.reserve(transactions.size());
  for (size_t i = 0; i < transactions.size(); ++i) {
    TxFields fields;
    const size_t mark = r.xml().scope().Enter(transactions[i]);
    VIGIL_RETURN_IF_ERROR(ReadTransaction(r, transactions[i], fields));
    r.xml().scope().Leave(mark);
    VIGIL_RETURN_IF_ERROR(
        BuildTransaction(m, fields, static_cast<int>(i) + 1, result.emplace_back()));
  }
  r.xml().scope().Leave(root_mark);
  return result;
}

}  // namespace

bool LooksLikeXml(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  while (!text.empty() && IsXmlSpace(text.front())) text.remove_prefix(1);
  return !text.empty() && text.front() == '<';
}

absl::StatusOr<std::vector<Transaction>> ParseIso20022(std::string_view xml) {
  if (xml.empty()) return absl::InvalidArgumentError("ISO 20022 message is empty");
  if (xml.size() > kMaxIso20022Bytes) {
    return absl::InvalidArgumentError(absl::StrCat("ISO 20022 message of ", xml.size(),
                                                   " bytes: the limit is ", kMaxIso20022Bytes));
  }
  if (const size_t bad = FindBadByte(xml); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("XML is not well-formed at byte offset ", bad,
                     ": not UTF-8, or a control character XML does not allow"));
  }
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(xml.data(), xml.size(), kParseOptions, pugi::encoding_utf8);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat("XML is not well-formed at byte offset ",
                                                   parsed.offset, ": ", parsed.description()));
  }
  VIGIL_ASSIGN_OR_RETURN(const MessageParts parts, FindMessageParts(doc));
  if (!parts.document) {
    return absl::InvalidArgumentError("XML holds no ISO 20022 Document element");
  }
  for (pugi::xml_node element : parts.split_texts) JoinTextPieces(element);
  return ReadMessage(parts);
}

}  // namespace vigil
