// CheckExpression: a parsed policy expression → the same tree with every name resolved against an
// ExpressionScope and every node's type set, or the first error in reading order.
//
//   ExpressionSource source(text, where);
//   VIGIL_ASSIGN_OR_RETURN(CheckedExpression checked,
//                          CheckExpression(ParseExpression(source), scope, source));
//
// It checks names (an unknown one gets a "did you mean" hint), operand types (arithmetic on
// numbers, and/or/not on booleans, strings compared only for equality, `in` against a list of
// the element's type, each function's arity and argument types) and the operand stack the
// compiled form needs (Expression::kMaxStack). What it accepts compiles with no error
// (expression_compiler.h).
//
// The walk follows reading order, so that of a name or type error and the parser's syntax
// error, the one a reader meets first is reported: the checker reports the syntax error when
// it reaches the parsed tree's kError node.
//
// Private to the rules module. Thread safety: CheckExpression is reentrant.
#ifndef VIGIL_RULES_INTERNAL_EXPRESSION_CHECKER_H_
#define VIGIL_RULES_INTERNAL_EXPRESSION_CHECKER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "vigil/rules/expression.h"
#include "vigil/rules/internal/expression_parser.h"
#include "vigil/rules/internal/expression_source.h"

namespace vigil::rules_internal {

// A tree that passed the checker: no kError or kOtherToken node, every kName's entry set, every
// value's type set (a kList's and a list kName's to the list type).
struct CheckedExpression {
  std::unique_ptr<const SyntaxNode> root;
  ExprType type = ExprType::kBool;  // root->type: a number, boolean or string
};

// The errors are kInvalidArgument, in ExpressionSource's form ("source" must be the one the
// tree was parsed from). "scope" must outlive the result (the tree points at its entries).
absl::StatusOr<CheckedExpression> CheckExpression(ParsedExpression parsed,
                                                  const ExpressionScope& scope,
                                                  const ExpressionSource& source);

}  // namespace vigil::rules_internal

#endif  // VIGIL_RULES_INTERNAL_EXPRESSION_CHECKER_H_
