// ParseExpression: a policy expression's tokens → its syntax tree, by recursive descent over the
// grammar in docs/policy.md. Syntax only: names are not looked up and types not checked (the
// checker does both, expression_checker.h).
//
//   ExpressionSource source(text, where);
//   ParsedExpression parsed = ParseExpression(source);
//
// A syntax error does not discard what was read before it. The tree then ends where reading
// stopped, in a kError node, so that the checker can report a name or type error that a reader
// meets first (in "'x' + 1 +", the string before the expression ends too early): an error is
// reported where it is met in reading order, whichever stage finds it.
//
// Private to the rules module. Thread safety: ParseExpression is reentrant; a tree is a plain
// value, read by one thread at a time.
#ifndef VIGIL_RULES_INTERNAL_EXPRESSION_PARSER_H_
#define VIGIL_RULES_INTERNAL_EXPRESSION_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "vigil/rules/expression.h"
#include "vigil/rules/internal/expression_source.h"

namespace vigil::rules_internal {

// Words with a meaning of their own; neither may name an input, constant or list.
inline constexpr std::string_view kKeywords[] = {"and", "or", "not", "in", "true", "false"};
inline constexpr std::string_view kFunctionNames[] = {"abs",      "log1p",       "min",    "max",
                                                      "contains", "starts_with", "between"};
bool IsFunctionName(std::string_view name);

// The deepest nesting an expression may have: each parenthesis or call (the whole expression
// counts as one), 'not' and unary '-' is a level. Every stage walks the tree recursively, and a
// policy is input (POST /v1/policy/ingest): deeper text would exhaust a thread's stack. Real
// policies nest a few levels.
inline constexpr int kMaxExpressionNesting = 100;
bool IsReservedName(std::string_view name);  // a keyword or a function name

// One node of the tree. Offsets are into the source's text.
struct SyntaxNode {
  enum class Kind : uint8_t {
    kNumber,      // a number: number (list item: negated when written with a '-')
    kString,      // a string: string (list item: as kNumber)
    kBool,        // true or false: number is 1 or 0
    kName,        // an input, constant or list, as the scope says: text
    kNegate,      // - operands[0]
    kNot,         // not operands[0]
    kArithmetic,  // operands[0] text operands[1]; text is + - * / or %
    kComparison,  // operands[0] text operands[1]; text is < <= > >= == or !=
    kAnd,         // operands[0] and operands[1] and ...: two or more
    kOr,          // as kAnd, with or
    kIn,          // operands[0] in operands[1] (a kList or a list's kName); negated: `not in`
    kList,        // [operands]: the items written after `in`
    kOtherToken,  // a list item that is no number or string: text, which the checker rejects
    kCall,        // text(operands): a function call; at: the ')'
    kError,       // where reading stopped; see ParsedExpression
  };

  Kind kind = Kind::kError;
  // Where the node starts as written, parentheses included: what an error about the node as an
  // operand points at.
  size_t begin = 0;
  // The node's own token: a leaf's token (its '-' for a negative list item), an operator, the
  // list's '[' or name, the ')' closing a call.
  size_t at = 0;
  std::string_view text;  // views the source's text (or the lexer's symbols)
  double number = 0;
  std::string string;
  bool negated = false;
  std::vector<std::unique_ptr<SyntaxNode>> operands;

  // Set by the checker (CheckExpression) and read by the compiler.
  ExprType type = ExprType::kBool;
  // A kName's entry in the scope it was checked against, which must outlive the tree.
  const ExpressionScope::Entry* entry = nullptr;
};

struct ParsedExpression {
  // Never null.
  std::unique_ptr<SyntaxNode> root;
  // The first syntax error (lexical ones included), in ExpressionSource's form, or OK.
  //
  // When not OK the tree holds what was read before the error, and exactly one kError node:
  //  - as the last operand of the node being read when reading stopped (its earlier operands
  //    were read; for a kCall, the error may also follow its ')');
  //  - or, with the node read just before as its one operand, when reading stopped after a
  //    complete node (the token after it), or a kError with no operand where nothing was read.
  // Every node on the way from the root to the kError is incomplete in the same way.
  absl::Status error;
};

// "source" must outlive the tree (its nodes view the text).
ParsedExpression ParseExpression(const ExpressionSource& source);

}  // namespace vigil::rules_internal

#endif  // VIGIL_RULES_INTERNAL_EXPRESSION_PARSER_H_
