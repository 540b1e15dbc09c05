#include "vigil/rules/internal/expression_source.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::rules_internal {
namespace {

using testing::StatusIs;

TEST(ExpressionSource, NamesFileLineColumnAndPutsACaretUnderTheOffset) {
  const SourceLocation where{"policy.yaml", 12, 11};
  const ExpressionSource source("amount > 10 and cont >= 3", where);
  EXPECT_EQ(source.Error(16, "unknown name 'cont'", "did you mean 'count'?").message(),
            "policy.yaml:12:27: unknown name 'cont'\n"
            "  amount > 10 and cont >= 3\n"
            "                  ^\n"
            "  hint: did you mean 'count'?");
  EXPECT_THAT(source.Error(0, "x"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ExpressionSource, LaterLinesStartAfterTheIndent) {
  // A block scalar: the text's second line starts after 4 columns of indentation.
  const SourceLocation where{"p.yaml", 3, 11, 4};
  const ExpressionSource source("a > 1 and\nb < 2", where);
  EXPECT_EQ(source.Error(12, "m").message(), "p.yaml:4:7: m\n  b < 2\n    ^");
}

TEST(ExpressionSource, AnOffsetAtOrPastTheEndPointsJustAfterTheText) {
  const SourceLocation where{"f", 1, 1};
  const ExpressionSource source("a >", where);
  EXPECT_EQ(source.Error(3, "ends").message(), "f:1:4: ends\n  a >\n     ^");
  EXPECT_EQ(source.Error(99, "ends").message(), "f:1:4: ends\n  a >\n     ^");
}

}  // namespace
}  // namespace vigil::rules_internal
