#include "vigil/rules/internal/expression_parser.h"

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/string_view.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::rules_internal {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;
using Kind = SyntaxNode::Kind;

// The tree as an S-expression: leaves as written, "(kind text operands...)" otherwise; a kError
// is "(error operand)" or "!" when nothing was read before it.
std::string Dump(const SyntaxNode& node) {
  const auto with = [&](std::string_view head) {
    std::string out = absl::StrCat("(", ToAbsl(head));
    for (const auto& operand : node.operands) absl::StrAppend(&out, " ", Dump(*operand));
    return out + ")";
  };
  switch (node.kind) {
    case Kind::kNumber:
    case Kind::kString:
    case Kind::kOtherToken:
      return absl::StrCat(node.negated ? "-" : "", ToAbsl(node.text));
    case Kind::kBool:
    case Kind::kName:
      return std::string(node.text);
    case Kind::kNegate:
      return with("neg");
    case Kind::kNot:
      return with("not");
    case Kind::kArithmetic:
    case Kind::kComparison:
    case Kind::kCall:
      return with(node.text);
    case Kind::kAnd:
      return with("and");
    case Kind::kOr:
      return with("or");
    case Kind::kIn:
      return with(node.negated ? "not-in" : "in");
    case Kind::kList:
      return with("list");
    case Kind::kError:
      return node.operands.empty() ? "!" : with("error");
  }
  return "?";
}

class ExpressionParserTest : public ::testing::Test {
 protected:
  // Keeps the text alive: the tree views it.
  ParsedExpression Parse(std::string_view text) {
    text_ = std::string(text);
    source_ = std::make_unique<ExpressionSource>(text_, where_);
    return ParseExpression(*source_);
  }
  std::string Tree(std::string_view text) {
    ParsedExpression parsed = Parse(text);
    EXPECT_OK(parsed.error) << text;
    return Dump(*parsed.root);
  }

  const SourceLocation where_{"f"};
  std::string text_;
  std::unique_ptr<ExpressionSource> source_;
};

TEST_F(ExpressionParserTest, PrecedenceAndAssociativity) {
  EXPECT_EQ(Tree("1 + 2 * 3"), "(+ 1 (* 2 3))");
  EXPECT_EQ(Tree("10 - 4 - 3"), "(- (- 10 4) 3)");  // left to right
  EXPECT_EQ(Tree("- -a % 2"), "(% (neg (neg a)) 2)");
  EXPECT_EQ(Tree("a or b and not c or d"), "(or a (and b (not c)) d)");  // chains are flat
  EXPECT_EQ(Tree("(a or b) and c"), "(and (or a b) c)");
  EXPECT_EQ(Tree("a + 1 < b * 2"), "(< (+ a 1) (* b 2))");
  EXPECT_EQ(Tree("not a == true"), "(not (== a true))");
}

TEST_F(ExpressionParserTest, InListsAndCalls) {
  EXPECT_EQ(Tree("c in ['IR', \"KP\",]"), "(in c (list 'IR' \"KP\"))");  // a trailing ','
  EXPECT_EQ(Tree("n not in [-1, 2]"), "(not-in n (list -1 2))");
  EXPECT_EQ(Tree("c in high_risk"), "(in c high_risk)");
  // Items are read as tokens; one that is no constant is the checker's to reject.
  EXPECT_EQ(Tree("c in [x, -'a']"), "(in c (list x -'a'))");
  EXPECT_EQ(Tree("min(1, a + 1, 3,)"), "(min 1 (+ a 1) 3)");
  EXPECT_EQ(Tree("abs()"), "(abs)");
}

TEST_F(ExpressionParserTest, OffsetsOfANodeAndItsToken) {
  ParsedExpression parsed = Parse("(a) + min(b)");
  ASSERT_OK(parsed.error);
  const SyntaxNode& sum = *parsed.root;
  EXPECT_EQ(sum.at, 4u);  // the '+'
  EXPECT_EQ(sum.begin, 0u);
  const SyntaxNode& a = *sum.operands[0];
  EXPECT_EQ(a.begin, 0u);  // an operand starts at its '('
  EXPECT_EQ(a.at, 1u);     // and its token is the name
  const SyntaxNode& call = *sum.operands[1];
  EXPECT_EQ(call.begin, 6u);
  EXPECT_EQ(call.at, 11u);  // the ')'
}

// The tree holds what was read before a syntax error, ended by one kError, so that the checker
// reports whichever error comes first in reading order.
TEST_F(ExpressionParserTest, ASyntaxErrorEndsTheTreeWhereReadingStopped) {
  const struct {
    std::string_view text;
    std::string_view tree;
    std::string_view message;
  } cases[] = {
      // In the node being read: its earlier operands, then the kError.
      {"'x' + 1 +", "(+ (+ 'x' 1) !)", "f:1:10: expression ends too early"},
      {"a and (b or", "(and a (or b !))", "f:1:12: expression ends too early"},
      {"c in [1 2]", "(in c (list 1 !))", "f:1:9: expected ',' or ']'"},
      {"min(1 2)", "(min 1 !)", "f:1:7: expected ',' or ')'"},
      {"a < $", "(< a !)", "f:1:5: unexpected character '$'"},
      // After a complete node (read with the token after it), which is the kError's operand.
      {"a b", "(error a)", "f:1:3: unexpected text after the end"},
      {"1 < a < 3", "(error (< 1 a))", "f:1:7: comparisons do not chain"},
      {"(a > 1", "(error (> a 1))", "f:1:7: expected ')'"},
      {"a #", "(error a)", "f:1:3: unexpected character '#'"},
      {"x not y", "(error x)", "f:1:3: 'not' here must be followed by 'in'"},
      {"c in [1] $", "(in c (error (list 1)))", "f:1:10: unexpected character '$'"},
      {"abs(x) $", "(abs x !)", "f:1:8: unexpected character '$'"},  // arity unchecked
      // Nothing read.
      {"", "!", "f:1:1: expression ends too early"},
      {"and", "!", "f:1:1: 'and' cannot start a value"},
      {"[1]", "!", "f:1:1: a list is only allowed after 'in'"},
      {"abs 1", "!", "f:1:5: 'abs' is a function: expected '('"},
      {"c in 1", "(in c !)", "f:1:6: 'in' needs a list: [..] or the name of a list"},
  };
  for (const auto& c : cases) {
    ParsedExpression parsed = Parse(c.text);
    EXPECT_THAT(parsed.error, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.text;
    ASSERT_NE(parsed.root, nullptr);
    EXPECT_EQ(Dump(*parsed.root), c.tree) << c.text;
  }
}

}  // namespace
}  // namespace vigil::rules_internal
