#include "vigil/rules/expression.h"

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class ExpressionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(scope_.AddNumber("amount", 0));
    ASSERT_OK(scope_.AddNumber("count_24h", 1));
    ASSERT_OK(scope_.AddNumber("score", 2));
    ASSERT_OK(scope_.AddNumber("missing_feature", 3));
    ASSERT_OK(scope_.AddString("country", 0));
    ASSERT_OK(scope_.AddString("remittance", 1));
    ASSERT_OK(scope_.AddStringList("high_risk_countries", {"IR", "KP", "MM"}));
    ASSERT_OK(scope_.AddNumberList("round_amounts", {1000, 5000, 10000}));
  }

  absl::StatusOr<Expression> Compile(std::string_view text) {
    return Expression::Compile(text, scope_, {"policy.yaml", 12, 11});
  }

  // Inputs: amount 9500, count_24h 4, score 0.82, missing_feature NaN; country "IR",
  // remittance "Invoice 77 consulting".
  bool Eval(std::string_view text) {
    auto e = Compile(text);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return false;
    EXPECT_EQ(e->type(), ExprType::kBool) << text;
    return e->EvaluateBool(Inputs());
  }
  double Number(std::string_view text) {
    auto e = Compile(text);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return kNaN;
    EXPECT_EQ(e->type(), ExprType::kNumber) << text;
    return e->EvaluateNumber(Inputs());
  }
  EvalInputs Inputs() const { return {numbers_, strings_}; }

  ExpressionScope scope_;
  std::vector<double> numbers_ = {9500, 4, 0.82, kNaN};
  std::vector<std::string_view> strings_ = {"IR", "Invoice 77 consulting"};
};

TEST_F(ExpressionTest, ArithmeticFollowsPrecedenceAndAssociativity) {
  EXPECT_EQ(Number("1 + 2 * 3"), 7);
  EXPECT_EQ(Number("(1 + 2) * 3"), 9);
  EXPECT_EQ(Number("10 - 4 - 3"), 3);  // left to right
  EXPECT_EQ(Number("2 * 3 % 4"), 2);
  EXPECT_EQ(Number("-amount + 500"), -9000);
  EXPECT_EQ(Number("- -2"), 2);
  EXPECT_EQ(Number("amount / count_24h"), 2375);
  EXPECT_DOUBLE_EQ(Number("1.5e3 + .5"), 1500.5);
  EXPECT_EQ(Number("abs(-3) + min(4, 2, 9) + max(1, 7)"), 12);
  EXPECT_DOUBLE_EQ(Number("log1p(count_24h)"), std::log1p(4.0));
}

TEST_F(ExpressionTest, ComparisonsLogicAndShortCircuit) {
  EXPECT_TRUE(Eval("amount > 9000 and amount < 10000 and count_24h >= 3"));
  EXPECT_FALSE(Eval("amount > 9000 and count_24h > 4"));
  EXPECT_TRUE(Eval("amount > 1e6 or score >= 0.8"));
  EXPECT_TRUE(Eval("not amount > 1e6"));
  EXPECT_TRUE(Eval("not (amount > 1e6 or count_24h == 0)"));
  EXPECT_TRUE(Eval("amount > 1 or amount > 2 and false"));  // and binds tighter than or
  EXPECT_FALSE(Eval("(amount > 1 or amount > 2) and false"));
  EXPECT_TRUE(Eval("true == (count_24h != 5)"));
  EXPECT_TRUE(Eval("between(amount, 9000, 9999.99)"));
  EXPECT_TRUE(Eval("between(amount, 9500, 9500)"));  // inclusive
  EXPECT_FALSE(Eval("between(amount, 9501, 10000)"));
}

TEST_F(ExpressionTest, StringsListsAndFunctions) {
  EXPECT_TRUE(Eval("country == 'IR'"));
  EXPECT_TRUE(Eval("country != \"DE\""));
  EXPECT_TRUE(Eval("country in high_risk_countries"));
  EXPECT_FALSE(Eval("country not in high_risk_countries"));
  EXPECT_TRUE(Eval("country in ['DE', 'IR']"));
  EXPECT_TRUE(Eval("amount not in round_amounts"));
  EXPECT_TRUE(Eval("count_24h in [1, 4, -2]"));
  EXPECT_TRUE(Eval("contains(remittance, 'consult')"));
  EXPECT_FALSE(Eval("contains(remittance, 'Consult')"));  // case-sensitive
  EXPECT_TRUE(Eval("starts_with(remittance, 'Invoice')"));
  EXPECT_TRUE(Eval("'it\\'s' == \"it's\""));
}

TEST_F(ExpressionTest, MissingNumbersMakeComparisonsFalse) {
  EXPECT_FALSE(Eval("missing_feature > 0"));
  EXPECT_FALSE(Eval("missing_feature <= 0"));
  EXPECT_TRUE(Eval("not missing_feature > 0"));
  EXPECT_TRUE(std::isnan(Number("missing_feature + 1")));
  EXPECT_TRUE(std::isnan(Number("min(missing_feature, 1)")));
  EXPECT_TRUE(std::isnan(Number("max(1, missing_feature)")));
  EXPECT_FALSE(Eval("between(missing_feature, 0, 1)"));
}

TEST_F(ExpressionTest, ReportsNamesAndSlotsRead) {
  auto e = Compile("country in high_risk_countries and amount > 10 and amount < 20");
  ASSERT_OK(e);
  EXPECT_THAT(e->names(), ::testing::ElementsAre("country", "amount"));
  EXPECT_EQ(e->number_slots(), 1u);
  EXPECT_EQ(e->string_slots(), 1u);
}

// A policy is input: nesting that would exhaust the stack of the thread reading it is refused
// with an error, whatever the construct.
TEST_F(ExpressionTest, NestingIsBoundedWithAnError) {
  auto nested = [](int levels) {
    return std::string(levels, '(') + "amount > 1" + std::string(levels, ')');
  };
  EXPECT_TRUE(Compile(nested(99)).ok());  // the whole expression is the 100th level
  const absl::Status deep = Compile(nested(100)).status();
  EXPECT_THAT(std::string(deep.message()),
              ::testing::HasSubstr("nested more than 100 deep (parentheses, calls, 'not' and "
                                   "unary '-' each count)"));
  for (const std::string& prefix : {std::string("not "), std::string("-"),
                                    std::string("abs(")}) {
    std::string text;
    for (int i = 0; i < 200'000; ++i) text += prefix;
    text += "amount > 1";
    const absl::Status refused = Compile(text).status();
    EXPECT_TRUE(absl::IsInvalidArgument(refused)) << prefix << ": " << refused;
    EXPECT_THAT(std::string(refused.message()), ::testing::HasSubstr("nested more than 100"))
        << prefix;
  }
}

TEST_F(ExpressionTest, UnknownNameErrorHasLocationCaretAndHint) {
  auto e = Compile("amount > 10 and cont_24h >= 3");
  EXPECT_THAT(e.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  // The expression starts at line 12, column 11; "cont_24h" is 16 characters in.
  EXPECT_EQ(e.status().message(),
            "policy.yaml:12:27: unknown name 'cont_24h'\n"
            "  amount > 10 and cont_24h >= 3\n"
            "                  ^\n"
            "  hint: did you mean 'count_24h'?");
}

TEST_F(ExpressionTest, ErrorsOnLaterLinesCountLinesAndColumns) {
  auto e = Compile("amount > 10 and\n  country > 'A'");
  EXPECT_THAT(e.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("policy.yaml:13:11: strings compare only with == "
                                             "and !=, not '>'\n  "
                                             "  country > 'A'\n            ^")));
}

TEST_F(ExpressionTest, TypeAndSyntaxErrorsNameTheProblem) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"amount + country", "'+' needs a number, not a string"},
      {"amount and true", "'and' needs a boolean, not a number"},
      {"not amount", "'not' needs a boolean, not a number"},
      {"amount == 'x'", "'==' compares a number with a string"},
      {"amount", ""},  // a number is a valid expression; type checked by the caller
      {"1 < amount < 3", "comparisons do not chain"},
      {"amount in high_risk_countries", "'in' looks up a number in a list of strings"},
      {"country in amount", "'in' needs a list; 'amount' is a number"},
      {"country in [1, 2]", "a list after 'in' holds constant strings here"},
      {"high_risk_countries", "'high_risk_countries' is a list; use it after 'in'"},
      {"amount = 3", "'=' is not an operator"},
      {"amount > 3 && true", "'&' is not an operator"},
      {"abs(1, 2)", "abs takes 1 argument: abs(number)"},
      {"contains(amount, 'x')", "argument 1 of contains() needs a string, not a number"},
      {"between(amount, 1)", "between takes 3 arguments"},
      {"min(1)", "min takes two or more numbers"},
      {"amount > ", "expression ends too early"},
      {"(amount > 3", "expected ')'"},
      {"amount > 3 )", "unexpected text after the end"},
      {"'open", "string is not closed"},
      {"12abc", "a number runs into a name"},
      {"amount # 3", "unexpected character '#'"},
      {"['a']", "a list is only allowed after 'in'"},
  };
  for (const auto& [text, message] : cases) {
    auto e = Compile(text);
    if (message.empty()) {
      EXPECT_TRUE(e.ok()) << text << ": " << e.status();
      continue;
    }
    EXPECT_THAT(e.status(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << text;
  }
}

TEST_F(ExpressionTest, NestingBeyondTheStackIsACompileError) {
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "(1 + ";
  deep += "1";
  for (int i = 0; i < 70; ++i) deep += ")";
  EXPECT_THAT(Compile(deep).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nests deeper than 64")));
  // Long flat chains need no depth.
  std::string wide = "amount > 0";
  for (int i = 0; i < 200; ++i) wide += " and amount > 0";
  EXPECT_TRUE(Eval(wide));
}

// Lists of short strings are packed and scanned, others hashed: both answer the same.
TEST_F(ExpressionTest, SmallAndLargeStringListsAgree) {
  std::vector<std::string> large;
  for (int i = 0; i < 40; ++i) large.push_back(absl::StrCat("C", i));
  large.push_back("IR");
  ASSERT_OK(scope_.AddStringList("large", large));
  ASSERT_OK(scope_.AddStringList("small", {"IRL", "I", "IR"}));
  ASSERT_OK(scope_.AddStringList("long", {"IR", "a string longer than seven bytes"}));
  EXPECT_TRUE(Eval("country in large"));
  EXPECT_TRUE(Eval("country in small"));
  EXPECT_TRUE(Eval("country in long"));
  strings_[1] = "a string longer than seven bytes";
  EXPECT_TRUE(Eval("remittance in long"));
  EXPECT_FALSE(Eval("remittance in small"));
  strings_[0] = "IRX";
  EXPECT_FALSE(Eval("country in large"));
  EXPECT_FALSE(Eval("country in small"));
  strings_[0] = "";
  EXPECT_FALSE(Eval("country in small"));
  EXPECT_TRUE(Eval("country in ['', 'X']"));
}

TEST_F(ExpressionTest, ConstantsCompileIn) {
  ASSERT_OK(scope_.AddConstant("reporting_threshold", 10000));
  EXPECT_TRUE(Eval("amount < reporting_threshold and amount >= 0.9 * reporting_threshold"));
  auto e = Compile("amount < reporting_threshold");
  ASSERT_OK(e);
  EXPECT_THAT(e->names(), ::testing::ElementsAre("amount"));  // constants are not inputs
}

TEST_F(ExpressionTest, NeverTrueFindsContradictionsInConjunctions) {
  const auto never = [&](std::string_view text) {
    auto e = Compile(text);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->NeverTrue() : std::string("compile error");
  };
  EXPECT_THAT(never("amount > 100 and count_24h > 1 and amount < 50"),
              HasSubstr("no value of amount satisfies its comparisons (> 100 and < 50)"));
  EXPECT_THAT(never("amount >= 10 and amount < 10"), HasSubstr("no value of amount"));
  EXPECT_THAT(never("100 < amount and amount <= 100"), HasSubstr("no value of amount"));
  EXPECT_THAT(never("amount == 5 and amount > 5"), HasSubstr("no value of amount"));
  EXPECT_THAT(never("between(amount, 10, 20) and amount > 20"), HasSubstr("no value of amount"));
  EXPECT_THAT(never("amount > 1 and false"), HasSubstr("constant false"));
  // Satisfiable, or beyond the analysis: nothing claimed.
  EXPECT_EQ(never("amount >= 10 and amount <= 10"), "");
  EXPECT_EQ(never("amount > 100 or amount < 50"), "");
  EXPECT_EQ(never("(amount > 100 or count_24h > 1) and amount < 50"), "");
  EXPECT_EQ(never("amount > 100 and count_24h < 50"), "");
}

TEST(Expression, DefaultConstructedIsFalse) {
  EXPECT_EQ(Expression().type(), ExprType::kBool);
  EXPECT_FALSE(Expression().EvaluateBool({}));
}

TEST(ExpressionScope, RejectsBadAndDuplicateNames) {
  ExpressionScope scope;
  EXPECT_OK(scope.AddNumber("amount", 0));
  EXPECT_THAT(scope.AddNumber("amount", 1), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(scope.AddNumber("Amount", 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(scope.AddNumber("and", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
  EXPECT_THAT(scope.AddString("contains", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
}

}  // namespace
}  // namespace vigil
