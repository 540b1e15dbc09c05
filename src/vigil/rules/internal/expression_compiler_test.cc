#include "vigil/rules/internal/expression_compiler.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/status_macros.h"
#include "vigil/rules/internal/expression_checker.h"
#include "vigil/rules/internal/expression_parser.h"
#include "vigil/rules/internal/expression_source.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::rules_internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class ExpressionCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(scope_.AddNumber("amount", 0));
    ASSERT_OK(scope_.AddNumber("count", 2));
    ASSERT_OK(scope_.AddNumber("missing", 1));
    ASSERT_OK(scope_.AddString("country", 0));
    ASSERT_OK(scope_.AddString("memo", 3));
    ASSERT_OK(scope_.AddStringList("high_risk", {"IR", "KP"}));
    ASSERT_OK(scope_.AddNumberList("round", {1000, 5000}));
    ASSERT_OK(scope_.AddConstant("threshold", 10000));
  }

  // Every stage, as Expression::Compile runs them.
  absl::StatusOr<Expression> Compile(std::string_view text) {
    const SourceLocation where{"f"};
    const ExpressionSource source(text, where);
    VIGIL_ASSIGN_OR_RETURN(CheckedExpression checked,
                           CheckExpression(ParseExpression(source), scope_, source));
    return ExpressionCompiler::Compile(checked);
  }
  double Run(std::string_view text) {
    auto e = Compile(text);
    EXPECT_OK(e.status()) << text;
    if (!e.ok()) return kNaN;
    const EvalInputs inputs{numbers_, strings_};
    return e->type() == ExprType::kBool ? e->EvaluateBool(inputs) : e->EvaluateNumber(inputs);
  }

  ExpressionScope scope_;
  std::vector<double> numbers_ = {9500, kNaN, 4};
  std::vector<std::string_view> strings_ = {"IR", "", "", "Invoice 77"};
};

TEST_F(ExpressionCompilerTest, ComparisonsWithAConstantOnEitherSide) {
  // Fused into one instruction with the operator mirrored when the constant comes first.
  for (double amount : {9499.0, 9500.0, 9501.0}) {
    numbers_[0] = amount;
    EXPECT_EQ(Run("amount < 9500"), amount < 9500) << amount;
    EXPECT_EQ(Run("9500 < amount"), 9500 < amount) << amount;
    EXPECT_EQ(Run("9500 <= amount"), 9500 <= amount) << amount;
    EXPECT_EQ(Run("9500 > amount"), 9500 > amount) << amount;
    EXPECT_EQ(Run("9500 >= amount"), 9500 >= amount) << amount;
    EXPECT_EQ(Run("9500 == amount"), 9500 == amount) << amount;
    EXPECT_EQ(Run("amount != 9500"), amount != 9500) << amount;
    EXPECT_EQ(Run("amount < threshold - 500"), amount < 9500) << amount;  // not fused
  }
  EXPECT_EQ(Run("missing < 1"), 0);  // NaN compares false
  EXPECT_EQ(Run("missing != 1"), 1);
}

// The jumps of and/or: every combination of three operands, nested both ways.
TEST_F(ExpressionCompilerTest, AndOrChainsShortCircuitToTheRightValue) {
  const std::string_view values[] = {"false", "true"};
  for (int bits = 0; bits < 8; ++bits) {
    const bool a = bits & 1, b = bits & 2, c = bits & 4;
    const std::string va(values[a]), vb(values[b]), vc(values[c]);
    EXPECT_EQ(Run(va + " and " + vb + " and " + vc), a && b && c) << bits;
    EXPECT_EQ(Run(va + " or " + vb + " or " + vc), a || b || c) << bits;
    EXPECT_EQ(Run(va + " or " + vb + " and " + vc), a || (b && c)) << bits;
    EXPECT_EQ(Run("(" + va + " or " + vb + ") and " + vc), (a || b) && c) << bits;
    EXPECT_EQ(Run("not (" + va + " and " + vb + ") or " + vc), !(a && b) || c) << bits;
    EXPECT_EQ(Run(va + " == (" + vb + " or " + vc + ")"), a == (b || c)) << bits;
  }
}

TEST_F(ExpressionCompilerTest, InSets) {
  EXPECT_EQ(Run("country in high_risk"), 1);  // fused: an input in a list
  EXPECT_EQ(Run("country not in high_risk"), 0);
  EXPECT_EQ(Run("'KP' in high_risk"), 1);  // a constant element
  EXPECT_EQ(Run("memo in ['IR', 'Invoice 77', 'IR']"), 1);
  EXPECT_EQ(Run("count in [-4, 4]"), 1);
  EXPECT_EQ(Run("-count in [-4]"), 1);
  EXPECT_EQ(Run("count in [-4]"), 0);  // the '-' belongs to the item
  EXPECT_EQ(Run("amount + 500 not in round"), 1);
  numbers_[0] = 4500;
  EXPECT_EQ(Run("amount + 500 in round"), 1);
  EXPECT_EQ(Run("missing in [1]"), 0);
}

TEST_F(ExpressionCompilerTest, ArithmeticAndFunctions) {
  EXPECT_EQ(Run("amount - 500 - 1000 * 2"), 7000);
  EXPECT_EQ(Run("-amount % 1000"), -500);
  EXPECT_EQ(Run("min(amount, 3, count, 7)"), 3);
  EXPECT_EQ(Run("max(1, count, 2)"), 4);
  EXPECT_TRUE(std::isnan(Run("max(1, missing, 2)")));  // missing stays missing
  EXPECT_DOUBLE_EQ(Run("log1p(abs(-count))"), std::log1p(4.0));
  EXPECT_EQ(Run("between(count, 4, threshold)"), 1);
  EXPECT_EQ(Run("contains(memo, '77') and starts_with(memo, 'Inv')"), 1);
  EXPECT_EQ(Run("memo != 'Invoice 77'"), 0);
}

TEST_F(ExpressionCompilerTest, NamesAndSlotsRead) {
  auto e = Compile("memo == 'x' or count > threshold and amount > count and country in high_risk");
  ASSERT_OK(e);
  // In order of first use; constants and lists are no inputs.
  EXPECT_THAT(e->names(), ElementsAre("memo", "count", "amount", "country"));
  EXPECT_EQ(e->number_slots(), 3u);
  EXPECT_EQ(e->string_slots(), 4u);
}

// NeverTrue reads the compiled code: fused comparisons, between, and the conjunction's jumps.
TEST_F(ExpressionCompilerTest, CodeShapesThatNeverTrueReads) {
  auto e = Compile("100 < amount and count > 1 and amount <= 100");
  ASSERT_OK(e);
  EXPECT_THAT(e->NeverTrue(), HasSubstr("no value of amount satisfies its comparisons"));
  auto between = Compile("between(amount, 10, 20) and amount > 20");
  ASSERT_OK(between);
  EXPECT_THAT(between->NeverTrue(), HasSubstr("no value of amount"));
  auto disjunction = Compile("amount > 100 or amount < 50");
  ASSERT_OK(disjunction);
  EXPECT_EQ(disjunction->NeverTrue(), "");
}

}  // namespace
}  // namespace vigil::rules_internal
