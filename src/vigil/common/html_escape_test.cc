#include "vigil/common/html_escape.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(HtmlEscapeTest, EscapesTheFiveCharactersAndNothingElse) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">Smith & Sons' "Ltd"</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Smith &amp; Sons&#39; &quot;Ltd&quot;&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("Müller Logistik GmbH"), "Müller Logistik GmbH");
  EXPECT_EQ(HtmlEscape(""), "");
}

}  // namespace
}  // namespace vigil
