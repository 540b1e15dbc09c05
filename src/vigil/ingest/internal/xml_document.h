// Format-independent XML reading for the ingest readers (iso20022.cc): a hardened parse into a
// pugixml tree, the namespace bindings in scope while a reader descends it, matching of child
// elements by local name and namespace URI whatever prefix the sender chose, and locations
// ("/Envelope/Document/.../CdtTrfTxInf[2]/IntrBkSttlmAmt") for error messages.
//
// A reader calls ParseXmlDocument once, which refuses what no message may contain (below) and
// finds, through its visitor, the elements the format starts from; it then walks down from them
// with a NamespacedReader, reading texts with ElementText and naming what is wrong with ErrorAt or
// MissingChild.
//
// Lifetimes: every pugi::xml_node and every string_view returned here (names, texts, namespace
// URIs) points into the pugi::xml_document, which must outlive them and not be modified
// meanwhile.
//
// Private to the ingest module. Thread safety: the functions are pure; a NamespaceScope or
// NamespacedReader is externally synchronized (one reader, one thread).
#ifndef VIGIL_INGEST_INTERNAL_XML_DOCUMENT_H_
#define VIGIL_INGEST_INTERNAL_XML_DOCUMENT_H_

#include <cstddef>
#include <cstring>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil::ingest_internal {

// ---------------------------------------------------------------------------------------------
// Parsing.

// Called by ParseXmlDocument for each element in document order, except the descendants of an
// element it claimed. Returns true to claim "element" (a format's Document, its header), false to
// be called for its children too, or an error, which ParseXmlDocument returns as it is.
// "local_name" is the element's name without its prefix.
using XmlElementVisitor =
    absl::FunctionRef<absl::StatusOr<bool>(pugi::xml_node element, std::string_view local_name)>;

// Parses "xml" into "doc", replacing what it held, and checks the tree. Refused, kInvalidArgument:
//  - a byte that is not part of well-formed UTF-8 (overlong forms, surrogates and code points
//    above U+10FFFF included) or is a control character XML 1.0 forbids: "XML is not well-formed
//    at byte offset N: not UTF-8, ...";
//  - XML that is not well-formed: "XML is not well-formed at byte offset N: <pugixml's reason>";
//  - any DOCTYPE, so no DTD, no entity declarations and no external entities (pugixml expands
//    none; refused so that no such message is half-read);
//  - text outside the root element (pugixml alone would drop it) and more than one root element;
//  - an element deeper than "max_depth" (the root is at depth 1), named by its XPath.
// The walk is iterative: the nesting of the input bounds no stack. Errors are reported in
// document order, the visitor's among them. A leading UTF-8 BOM, an XML declaration, comments
// and processing instructions are accepted; comments, processing instructions and
// whitespace-only text are not kept. An element whose text comments or CDATA sections split
// ("<Nm>A<!-- -->B</Nm>") holds it whole afterwards ("AB"), so that no part of it escapes a
// reader. On error "doc" holds an unspecified tree.
absl::Status ParseXmlDocument(std::string_view xml, int max_depth, XmlElementVisitor visit,
                              pugi::xml_document& doc);

// ---------------------------------------------------------------------------------------------
// Names, texts and locations.

struct QName {
  std::string_view prefix;  // empty when unprefixed
  std::string_view local;
};

// "pacs:Document" -> {"pacs", "Document"}; "Document" -> {"", "Document"}. Inline, as the
// functions below: a reader calls them for every element it visits.
inline QName SplitName(const char* name) {
  size_t i = 0;
  while (name[i] != '\0' && name[i] != ':') ++i;
  if (name[i] == '\0') return {{}, std::string_view(name, i)};
  return {std::string_view(name, i), std::string_view(name + i + 1)};
}

inline std::string_view LocalName(pugi::xml_node element) {
  return SplitName(element.name()).local;
}

inline bool IsXmlSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// XML 1.0 whitespace (space, tab, CR, LF) trimmed from both ends.
inline std::string_view TrimXmlSpace(std::string_view s) {
  while (!s.empty() && IsXmlSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsXmlSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The text of "element", surrounding whitespace trimmed, inner whitespace kept.
inline std::string_view ElementText(pugi::xml_node element) {
  return TrimXmlSpace(element.child_value());
}

// "/Envelope/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]": the local names of "node" and its
// element ancestors from the root down, with the 1-based position among the siblings of the same
// local name where there are several.
std::string XPath(pugi::xml_node node);

// kInvalidArgument "<XPath of node>: <why>".
absl::Status ErrorAt(pugi::xml_node node, std::string_view why);
// kInvalidArgument "<XPath of parent>/<child>: missing (mandatory)".
absl::Status MissingChild(pugi::xml_node parent, std::string_view child);

// ---------------------------------------------------------------------------------------------
// Namespaces.

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
  // REQUIRES: "mark" was returned by an Enter() not yet left, and those entered after it are
  // left.
  void Leave(size_t mark) {
    while (bindings_.size() > mark) bindings_.pop_back();
  }

  // Binds the declarations of "element" and of all its element ancestors, outermost first: how a
  // reader starts in the middle of a tree (at a Document inside a wrapper).
  void EnterPath(pugi::xml_node element);

  // The namespace URI of "prefix" (empty: the default namespace): empty for no namespace, nullopt
  // for a prefix nothing in scope declares. "xml" is bound to its URI without a declaration.
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

  // Equality of two short texts (namespace prefixes) without a call to memcmp.
  static bool SameShortText(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  absl::InlinedVector<Binding, 8> bindings_;
};

// Visits the child elements of the one namespace a message's elements live in; those of other
// namespaces (and of undeclared prefixes) are skipped.
class NamespacedReader {
 public:
  NamespaceScope& scope() { return scope_; }
  // "ns" is the message's namespace URI, best a view of the declaration in the document (the
  // comparison is then a pointer comparison). It must outlive the reader's use.
  void set_namespace(std::string_view ns) { ns_ = ns; }

  // Calls f(local_name, child) -> absl::Status for each child element of "parent" in the reader's
  // namespace, in document order, with the child's declarations in scope; stops at the first
  // error f returns and returns it.
  // REQUIRES: the declarations of "parent" and its ancestors are in scope().
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

}  // namespace vigil::ingest_internal

#endif  // VIGIL_INGEST_INTERNAL_XML_DOCUMENT_H_
