#include "vigil/rules/internal/expression_checker.h"

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::rules_internal {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;
using Kind = SyntaxNode::Kind;

class ExpressionCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(scope_.AddNumber("amount", 0));
    ASSERT_OK(scope_.AddNumber("count_24h", 3));
    ASSERT_OK(scope_.AddString("country", 1));
    ASSERT_OK(scope_.AddStringList("high_risk", {"IR", "KP"}));
    ASSERT_OK(scope_.AddNumberList("round", {1000, 5000}));
    ASSERT_OK(scope_.AddConstant("threshold", 10000));
  }

  absl::StatusOr<CheckedExpression> Check(std::string_view text) {
    text_ = std::string(text);
    source_ = std::make_unique<ExpressionSource>(text_, where_);
    return CheckExpression(ParseExpression(*source_), scope_, *source_);
  }
  // The first line of the error: "f:line:column: message".
  std::string FirstLine(std::string_view text) {
    auto checked = Check(text);
    if (checked.ok()) return "ok";
    const std::string message(checked.status().message());
    return message.substr(0, message.find('\n'));
  }

  ExpressionScope scope_;
  const SourceLocation where_{"f"};
  std::string text_;
  std::unique_ptr<ExpressionSource> source_;
};

TEST_F(ExpressionCheckerTest, SetsTypesAndResolvesNames) {
  auto checked = Check("amount + threshold > 5 and country in high_risk");
  ASSERT_OK(checked);
  EXPECT_EQ(checked->type, ExprType::kBool);
  const SyntaxNode& conjunction = *checked->root;
  const SyntaxNode& compare = *conjunction.operands[0];
  const SyntaxNode& sum = *compare.operands[0];
  EXPECT_EQ(sum.type, ExprType::kNumber);
  EXPECT_EQ(sum.operands[0]->entry, scope_.Find("amount"));
  EXPECT_TRUE(sum.operands[1]->entry->constant);
  const SyntaxNode& in = *conjunction.operands[1];
  EXPECT_EQ(in.type, ExprType::kBool);
  EXPECT_EQ(in.operands[0]->type, ExprType::kString);
  EXPECT_EQ(in.operands[1]->type, ExprType::kStringList);
  EXPECT_EQ(in.operands[1]->entry, scope_.Find("high_risk"));

  auto number = Check("min(amount, 3) * 2");
  ASSERT_OK(number);
  EXPECT_EQ(number->type, ExprType::kNumber);
  auto string = Check("(country)");
  ASSERT_OK(string);
  EXPECT_EQ(string->type, ExprType::kString);
}

// Each error with the position it names, and why that position.
TEST_F(ExpressionCheckerTest, TypeErrorsPointAtTheOperand) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"amount + (country)", "f:1:10: '+' needs a number, not a string"},  // at its '('
      {"not amount", "f:1:5: 'not' needs a boolean, not a number"},
      {"amount > 1 and count_24h", "f:1:16: 'and' needs a boolean, not a number"},
      {"amount == country", "f:1:11: '==' compares a number with a string"},     // the right side
      {"country < 'x'", "f:1:9: strings compare only with == and !=, not '<'"},  // the operator
      {"true >= false", "f:1:6: booleans compare only with == and !=, not '>='"},
      {"amount in high_risk", "f:1:11: 'in' looks up a number in a list of strings"},
      {"(amount > 1) in round", "f:1:1: 'in' looks up a number or a string, not a boolean"},
      {"country in amount", "f:1:12: 'in' needs a list; 'amount' is a number"},
      {"amount in [1, 'a']", "f:1:15: a list after 'in' holds constant numbers here"},
      {"country in [-'a']", "f:1:13: a list after 'in' holds constant strings here"},  // the '-'
      {"high_risk", "f:1:1: 'high_risk' is a list; use it after 'in'"},
      {"abs(1, 2)", "f:1:8: abs takes 1 argument: abs(number)"},  // the first extra argument
      {"between(amount, 1)", "f:1:18: between takes 3 arguments: between(number, low, high)"},
      {"contains(country, 1)", "f:1:19: argument 2 of contains() needs a string, not a number"},
      {"max(country, 1)", "f:1:5: max() needs a number, not a string"},
      {"min()", "f:1:5: min takes two or more numbers"},  // the ')'
      {"amount > 1 and cont_24h > 3", "f:1:16: unknown name 'cont_24h'"},
  };
  for (const auto& [text, first_line] : cases) EXPECT_EQ(FirstLine(text), first_line) << text;
  auto unknown = Check("amount > 1 and cont_24h > 3");
  EXPECT_THAT(unknown.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("hint: did you mean 'count_24h'?")));
}

// Of a name or type error and a syntax error, the one met first in reading order is reported.
TEST_F(ExpressionCheckerTest, ReportsTheFirstErrorInReadingOrder) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      // The left side of '+' is checked when the '+' is read, before what follows it.
      {"'x' + 1 +", "f:1:1: '+' needs a number, not a string"},
      {"'x' + $", "f:1:1: '+' needs a number, not a string"},
      {"1 + 'x' $", "f:1:9: unexpected character '$'"},  // the right side: once read
      {"cont $", "f:1:1: unknown name 'cont'"},          // a name: before the next token
      {"amount and (", "f:1:1: 'and' needs a boolean, not a number"},
      // A comparison is checked once both sides are read, before a chained operator.
      {"amount < 'x' < 3", "f:1:10: '<' compares a number with a string"},
      {"amount < 'x' $", "f:1:14: unexpected character '$'"},
      // `in`: its element once the list's first token is read.
      {"true in $", "f:1:9: unexpected character '$'"},
      {"true in 5", "f:1:1: 'in' looks up a number or a string, not a boolean"},
      {"country in [1 $", "f:1:13: a list after 'in' holds constant strings here"},
      // A call's arity and argument types once the token after its ')' is read.
      {"abs('x') $", "f:1:10: unexpected character '$'"},
      {"abs('x') )", "f:1:5: argument 1 of abs() needs a number, not a string"},
      // min and max check each argument as they fold it in.
      {"min('a', 1 2", "f:1:5: min() needs a number, not a string"},
      {"(amount > 1", "f:1:12: expected ')'"},
  };
  for (const auto& [text, first_line] : cases) EXPECT_EQ(FirstLine(text), first_line) << text;
}

TEST_F(ExpressionCheckerTest, BoundsTheOperandStack) {
  // Each value read takes a slot until an operator combines it: n nested "(1 + " need n + 1.
  const auto nested = [](int n) {
    std::string text;
    for (int i = 0; i < n; ++i) text += "(1 + ";
    text += "1";
    for (int i = 0; i < n; ++i) text += ")";
    return text;
  };
  EXPECT_OK(Check(nested(Expression::kMaxStack - 1)).status());
  // The 65th slot is the innermost "1", at offset 64 * 5.
  EXPECT_EQ(FirstLine(nested(Expression::kMaxStack)), "f:1:321: expression nests deeper than 64");
  // and/or leave one value at a time, whatever the chain's length.
  std::string wide = "amount > 0";
  for (int i = 0; i < 500; ++i) wide += " and amount > 0";
  EXPECT_OK(Check(wide).status());
}

}  // namespace
}  // namespace vigil::rules_internal
