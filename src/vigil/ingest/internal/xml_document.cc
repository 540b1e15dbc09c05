#include "vigil/ingest/internal/xml_document.h"

#include <bit>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/ingest/internal/string_view.h"

namespace vigil::ingest_internal {
namespace {

// pugixml's defaults without attribute whitespace conversion (no attribute an ingest reader reads
// needs it), plus: DOCTYPE nodes and text outside the root element kept (parse_fragment; pugixml
// drops such text otherwise) so that the walk can refuse them, and element text stored in the
// element node (one node fewer per leaf: a faster parse and walk). Comments, processing
// instructions and whitespace-only text are dropped.
constexpr unsigned kParseOptions = pugi::parse_cdata | pugi::parse_escapes | pugi::parse_eol |
                                   pugi::parse_doctype | pugi::parse_fragment |
                                   pugi::parse_embed_pcdata;

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

// Walks the whole tree, refusing DOCTYPEs, text outside the root element, more than one root
// element and nesting beyond "max_depth", and calling "visit" for the elements outside the ones
// it claimed. Iterative: the depth of the input bounds no stack. Appends to "split_texts" the
// elements whose text the parser left in pieces: "<Nm>A<!-- -->B</Nm>" is the value "A" and a
// text child "B".
absl::Status CheckTree(const pugi::xml_document& doc, int max_depth, XmlElementVisitor visit,
                       std::vector<pugi::xml_node>& split_texts) {
  int roots = 0;
  int depth = 1;
  int inside = 0;  // depth of the claimed element the walk is in; 0 outside all
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
        if (split && (split_texts.empty() || split_texts.back() != parent)) {
          split_texts.push_back(parent);
        }
        break;
      }
      case pugi::node_element: {
        if (depth > max_depth) {
          return ErrorAt(node, absl::StrCat("elements nested deeper than ", max_depth, " levels"));
        }
        if (depth == 1 && ++roots > 1) {
          return absl::InvalidArgumentError("XML with more than one root element");
        }
        if (inside != 0) break;
        VIGIL_ASSIGN_OR_RETURN(const bool claimed, visit(node, LocalName(node)));
        if (claimed) inside = depth;
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
      if (--depth == 0) return absl::OkStatus();
    }
    node = node.next_sibling();
    if (depth <= inside) inside = 0;
  }
  return absl::OkStatus();
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

}  // namespace

absl::Status ParseXmlDocument(std::string_view xml, int max_depth, XmlElementVisitor visit,
                              pugi::xml_document& doc) {
  if (const size_t bad = FindBadByte(xml); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("XML is not well-formed at byte offset ", bad,
                     ": not UTF-8, or a control character XML does not allow"));
  }
  const pugi::xml_parse_result parsed =
      doc.load_buffer(xml.data(), xml.size(), kParseOptions, pugi::encoding_utf8);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat("XML is not well-formed at byte offset ",
                                                   parsed.offset, ": ", parsed.description()));
  }
  std::vector<pugi::xml_node> split_texts;
  VIGIL_RETURN_IF_ERROR(CheckTree(doc, max_depth, visit, split_texts));
  // Read as the first piece alone, such a text would hide the rest from screening.
  for (pugi::xml_node element : split_texts) JoinTextPieces(element);
  return absl::OkStatus();
}

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

void NamespaceScope::EnterPath(pugi::xml_node element) {
  // Outermost first: collected innermost first, then entered backwards. A message's Document
  // lies a few levels deep; the parse's depth limit bounds the path.
  absl::InlinedVector<pugi::xml_node, 16> path;
  for (pugi::xml_node n = element; n && n.type() == pugi::node_element; n = n.parent()) {
    path.push_back(n);
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) Enter(*it);
}

}  // namespace vigil::ingest_internal
