#include "vigil/ingest/internal/xml_document.h"

#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/ingest/internal/string_view.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::ingest_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::vigil::testing::StatusIs;

// Parses "xml" with a visitor that claims nothing (every element is visited).
absl::Status Parse(std::string_view xml, pugi::xml_document& doc, int max_depth = 64) {
  return ParseXmlDocument(
      xml, max_depth,
      [](pugi::xml_node, std::string_view) -> absl::StatusOr<bool> { return false; }, doc);
}

// The element at "path" of child names from the document node, e.g. {"a", "b", "p:c"}.
pugi::xml_node At(const pugi::xml_document& doc, std::vector<const char*> path) {
  pugi::xml_node n = doc;
  for (const char* name : path) n = n.child(name);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Refusals.

TEST(ParseXmlDocument, RefusesEveryDoctype) {
  for (const char* xml : {
           "<!DOCTYPE a><a/>",
           R"(<!DOCTYPE a SYSTEM "http://example.com/a.dtd"><a/>)",
           R"(<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>)",
       }) {
    pugi::xml_document doc;
    EXPECT_THAT(Parse(xml, doc),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("XML with a DOCTYPE")))
        << xml;
  }
}

// The offset of the first bad byte, in the first 16-byte block of the scan, in a later one (the
// text after it is long enough for whole blocks), and in the tail the scan takes byte by byte.
TEST(ParseXmlDocument, RefusesBytesThatAreNotUtf8OrAllowedControls) {
  const struct {
    std::string text;  // element content after <a> and the padding
    const char* why;
  } cases[] = {
      {"\xC0\x80", "overlong form of U+0000"},
      {"\xE0\x80\xAF", "overlong 3-byte form"},
      {"\xF0\x80\x80\xAF", "overlong 4-byte form"},
      {"\xED\xA0\x80", "surrogate U+D800"},
      {"\xF4\x90\x80\x80", "above U+10FFFF"},
      {"\xF5\x80\x80\x80", "lead byte never valid"},
      {"\x80", "continuation byte without a lead"},
      {"\xC3(", "lead byte followed by ASCII"},
      {std::string(1, '\0'), "NUL"},
      {"\x01", "control character"},
      {"\x1F", "control character"},
      {"\x0B", "vertical tab: not XML whitespace"},
  };
  for (const auto& c : cases) {
    for (const size_t before : {0, 5, 20, 40}) {
      for (const size_t after : {0, 40}) {
        const std::string xml =
            absl::StrCat("<a>", std::string(before, 'x'), c.text, std::string(after, 'y'), "</a>");
        pugi::xml_document doc;
        EXPECT_THAT(Parse(xml, doc),
                    StatusIs(absl::StatusCode::kInvalidArgument,
                             absl::StrCat("XML is not well-formed at byte offset ", 3 + before,
                                          ": not UTF-8, or a control character XML does not "
                                          "allow")))
            << c.why << ", after " << before << " bytes, before " << after;
      }
    }
  }
  // A sequence cut short by the end of the input.
  pugi::xml_document doc;
  EXPECT_THAT(Parse("<a/>\xE2\x82", doc), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("at byte offset 4: not UTF-8")));
  // In the first bytes, before any whole block.
  EXPECT_THAT(Parse("\x02<a/>", doc), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("at byte offset 0: not UTF-8")));
}

TEST(ParseXmlDocument, AcceptsUtf8AndXmlWhitespace) {
  pugi::xml_document doc;
  // 2, 3 and 4 bytes (U+00E9, U+20AC, U+1F600), the last code point, DEL, tab, CR and LF.
  const std::string text = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\x7F\t\r\n";
  ASSERT_OK(Parse(absl::StrCat("\xEF\xBB\xBF<a>", text, text, "</a>"), doc));
  // CR LF and lone CR are read as LF (XML end-of-line handling).
  EXPECT_EQ(std::string(At(doc, {"a"}).child_value()),
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\x7F\t\n"
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\x7F\t\n");
}

TEST(ParseXmlDocument, RefusesWhatIsNotWellFormed) {
  pugi::xml_document doc;
  EXPECT_THAT(Parse("<a><b></a>", doc),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("XML is not well-formed at byte offset")));
  EXPECT_THAT(Parse("<a/><b/>", doc),
              StatusIs(absl::StatusCode::kInvalidArgument, "XML with more than one root element"));
  for (const char* xml : {"text<a/>", "<a/>text", "<a/><!-- c -->text", "only text"}) {
    EXPECT_THAT(Parse(xml, doc), StatusIs(absl::StatusCode::kInvalidArgument,
                                          "XML with text outside the root element"))
        << xml;
  }
  // Whitespace, comments and processing instructions outside the root are not text.
  EXPECT_OK(Parse("\n<?pi x?><!-- c -->\n<a/>\n<!-- d -->\n", doc));
}

// The root is at depth 1; the element past the limit is named.
TEST(ParseXmlDocument, DepthLimit) {
  const auto nested = [](int levels) {
    std::string xml;
    for (int i = 0; i < levels; ++i) xml += i % 2 == 0 ? "<e>" : "<o>";
    for (int i = levels - 1; i >= 0; --i) xml += i % 2 == 0 ? "</e>" : "</o>";
    return xml;
  };
  pugi::xml_document doc;
  EXPECT_OK(Parse(nested(4), doc, 4));
  EXPECT_THAT(Parse(nested(5), doc, 4),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "/e/o/e/o/e: elements nested deeper than 4 levels"));
  // Far deeper than any stack would take, were the walk recursive.
  EXPECT_THAT(Parse(nested(200000), doc, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper than 64")));
}

// ---------------------------------------------------------------------------------------------
// The visitor.

TEST(ParseXmlDocument, VisitorSkipsWhatItClaimsAndStopsTheParse) {
  pugi::xml_document doc;
  std::vector<std::string> visited;
  const auto claim_b = [&visited](pugi::xml_node, std::string_view local) -> absl::StatusOr<bool> {
    visited.emplace_back(local);
    if (local == "stop") return absl::InvalidArgumentError("stopped");
    return local == "b";
  };
  ASSERT_OK(ParseXmlDocument("<w:a xmlns:w='urn:w'><w:b><c/><b/></w:b><d><b><e/></b></d></w:a>", 64,
                             claim_b, doc));
  EXPECT_THAT(visited, ElementsAre("a", "b", "d", "b"));
  // The visitor's error, in document order among the walk's own refusals: before a later second
  // root, after an earlier element that is too deep.
  EXPECT_THAT(ParseXmlDocument("<a><stop/></a><b/>", 64, claim_b, doc),
              StatusIs(absl::StatusCode::kInvalidArgument, "stopped"));
  EXPECT_THAT(ParseXmlDocument("<a><x><y/></x><stop/></a>", 2, claim_b, doc),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("/a/x/y: elements nested")));
}

// A comment or CDATA section inside a text splits it in pugixml's tree; the parse joins it.
TEST(ParseXmlDocument, JoinsTextThatCommentsAndCdataSplit) {
  pugi::xml_document doc;
  ASSERT_OK(
      Parse("<a><n>A<!-- c --> B<![CDATA[ & <C>]]></n><m><![CDATA[x]]><!-- c -->y</m>"
            "<k>&amp;&#x41;</k></a>",
            doc));
  EXPECT_EQ(ElementText(At(doc, {"a", "n"})), "A B & <C>");
  EXPECT_EQ(ElementText(At(doc, {"a", "m"})), "xy");
  EXPECT_EQ(ElementText(At(doc, {"a", "k"})), "&A");
  EXPECT_FALSE(At(doc, {"a", "n"}).first_child());  // no pieces left behind
}

// ---------------------------------------------------------------------------------------------
// Names, texts, locations.

TEST(XmlNames, SplitNameAndTrim) {
  EXPECT_EQ(SplitName("pacs:Document").prefix, "pacs");
  EXPECT_EQ(SplitName("pacs:Document").local, "Document");
  EXPECT_EQ(SplitName("Document").prefix, "");
  EXPECT_EQ(SplitName("Document").local, "Document");
  EXPECT_EQ(TrimXmlSpace(" \t\r\n a  b \n"), "a  b");
  EXPECT_EQ(TrimXmlSpace(" \v a"), "\v a");  // vertical tab is not XML whitespace
  EXPECT_EQ(TrimXmlSpace("  "), "");
}

TEST(XPath, PositionsOnlyWhereALocalNameRepeats) {
  pugi::xml_document doc;
  ASSERT_OK(
      Parse("<p:Env xmlns:p='urn:p' xmlns:q='urn:q'><p:Doc><Tx/><Other/>text<q:Tx/><Tx>"
            "<Amt/></Tx></p:Doc></p:Env>",
            doc));
  const pugi::xml_node document = At(doc, {"p:Env", "p:Doc"});
  EXPECT_EQ(XPath(document), "/Env/Doc");
  // Siblings are counted by local name, whatever their prefix; text nodes are not counted.
  std::vector<std::string> paths;
  for (pugi::xml_node c = document.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element) paths.push_back(XPath(c));
  }
  EXPECT_THAT(paths,
              ElementsAre("/Env/Doc/Tx[1]", "/Env/Doc/Other", "/Env/Doc/Tx[2]", "/Env/Doc/Tx[3]"));
  const pugi::xml_node amount = document.last_child().child("Amt");
  EXPECT_EQ(XPath(amount), "/Env/Doc/Tx[3]/Amt");
  EXPECT_THAT(ErrorAt(amount, "is wrong"),
              StatusIs(absl::StatusCode::kInvalidArgument, "/Env/Doc/Tx[3]/Amt: is wrong"));
  EXPECT_THAT(
      MissingChild(document.first_child(), "Ccy"),
      StatusIs(absl::StatusCode::kInvalidArgument, "/Env/Doc/Tx[1]/Ccy: missing (mandatory)"));
}

// ---------------------------------------------------------------------------------------------
// Namespaces.

TEST(NamespaceScope, EnterPathBindsTheDeclarationsOfEveryAncestor) {
  pugi::xml_document doc;
  ASSERT_OK(
      Parse("<w xmlns='urn:default' xmlns:p='urn:outer'><x xmlns:q='urn:q'>"
            "<p:y xmlns:p='urn:inner'><z/></p:y></x></w>",
            doc));
  const pugi::xml_node z = At(doc, {"w", "x", "p:y", "z"});
  NamespaceScope scope;
  scope.EnterPath(z);
  EXPECT_THAT(scope.Resolve(""), Optional(std::string_view("urn:default")));  // from <w>
  EXPECT_THAT(scope.Resolve("q"), Optional(std::string_view("urn:q")));       // from <x>
  EXPECT_THAT(scope.Resolve("p"), Optional(std::string_view("urn:inner")));   // innermost wins
  EXPECT_THAT(scope.Resolve("xml"),
              Optional(std::string_view("http://www.w3.org/XML/1998/namespace")));
  EXPECT_EQ(scope.Resolve("r"), std::nullopt);  // declared nowhere

  // Outside the inner element the outer binding is back.
  NamespaceScope outer;
  outer.EnterPath(At(doc, {"w", "x"}));
  EXPECT_THAT(outer.Resolve("p"), Optional(std::string_view("urn:outer")));
  const size_t mark = outer.Enter(At(doc, {"w", "x", "p:y"}));
  EXPECT_THAT(outer.Resolve("p"), Optional(std::string_view("urn:inner")));
  outer.Leave(mark);
  EXPECT_THAT(outer.Resolve("p"), Optional(std::string_view("urn:outer")));

  // Without any declaration the default namespace is no namespace (empty), not undeclared.
  NamespaceScope none;
  EXPECT_THAT(none.Resolve(""), Optional(std::string_view()));
  EXPECT_EQ(none.Resolve("p"), std::nullopt);
}

TEST(NamespacedReader, VisitsTheChildrenOfItsNamespaceWhateverTheirPrefix) {
  pugi::xml_document doc;
  ASSERT_OK(
      Parse("<w:W xmlns:w='urn:w' xmlns:m='urn:msg'><m:Doc>"
            "<m:A/><B xmlns='urn:msg'/><x:A xmlns:x='urn:other'/><A/><u:A/>"
            "<n:C xmlns:n='urn:msg'/></m:Doc></w:W>",
            doc));
  const pugi::xml_node document = At(doc, {"w:W", "m:Doc"});
  NamespacedReader reader;
  reader.scope().EnterPath(document);
  reader.set_namespace(*reader.scope().Resolve("m"));
  std::vector<std::string> seen;
  ASSERT_OK(reader.ForEachChild(document, [&](std::string_view local, pugi::xml_node child) {
    seen.push_back(absl::StrCat(ToAbsl(local), "=", XPath(child)));
    return absl::OkStatus();
  }));
  // <A/> is in no namespace, <u:A/>'s prefix is undeclared, <x:A/> is another namespace's.
  EXPECT_THAT(seen, ElementsAre("A=/W/Doc/A[1]", "B=/W/Doc/B", "C=/W/Doc/C"));
  // A namespace equal in text, declared elsewhere, matches as well; the first error stops.
  const std::string msg = "urn:msg";
  reader.set_namespace(msg);
  int calls = 0;
  EXPECT_THAT(reader.ForEachChild(document,
                                  [&](std::string_view, pugi::xml_node c) {
                                    ++calls;
                                    return ErrorAt(c, "stop");
                                  }),
              StatusIs(absl::StatusCode::kInvalidArgument, "/W/Doc/A[1]: stop"));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace vigil::ingest_internal
