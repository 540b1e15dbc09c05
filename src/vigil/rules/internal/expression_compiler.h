// ExpressionCompiler: a checked policy expression tree → the postfix code Expression::Run
// executes, and the instruction set that code is written in.
//
//   ExpressionSource source(text, where);
//   VIGIL_ASSIGN_OR_RETURN(CheckedExpression checked,
//                          CheckExpression(ParseExpression(source), scope, source));
//   VIGIL_ASSIGN_OR_RETURN(Expression expression, ExpressionCompiler::Compile(checked));
//
// The code is a flat array over two operand stacks (numbers and booleans on one, strings on the
// other), walked once per evaluation with no allocation. To keep that walk short the compiler
// fuses the commonest shapes, "input <op> constant" and "input in list", into one instruction
// each, and turns and/or into jumps past the rest of the chain once its value is decided.
//
// Private to the rules module. Thread safety: Compile is reentrant.
#ifndef VIGIL_RULES_INTERNAL_EXPRESSION_COMPILER_H_
#define VIGIL_RULES_INTERNAL_EXPRESSION_COMPILER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "vigil/rules/expression.h"
#include "vigil/rules/internal/expression_checker.h"
#include "vigil/rules/internal/expression_parser.h"

namespace vigil {

// Declared in Expression, defined here for the compiler that writes it and Run that reads it.
// A binary operator pops two operands and pushes its result; so does a comparison of strings,
// from the string stack onto the number stack.
enum class Expression::Op : uint8_t {
  kNumber,       // push numbers_[arg]
  kInputNumber,  // push inputs.numbers[arg]
  kString,       // push strings_[arg]
  kInputString,  // push inputs.strings[arg]
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,  // numbers and booleans
  kNe,
  kStrEq,
  kStrNe,
  kNot,
  kJumpIfFalseOrPop,  // and: a false left side is the result
  kJumpIfTrueOrPop,   // or: a true left side is the result
  kInStrings,         // string in string_sets_[arg]
  kInNumbers,         // number in number_sets_[arg]
  kAbs,
  kLog1p,
  kMin,
  kMax,
  kContains,
  kStartsWith,
  kBetween,
  // Fused forms of the commonest shapes: "input <op> constant" and "input in list".
  kInputLt,
  kInputLe,
  kInputGt,
  kInputGe,
  kInputEq,
  kInputNe,
  kInputInStrings,  // inputs.strings[arg] in string_sets_[constant]
};

namespace rules_internal {

class ExpressionCompiler {
 public:
  // The compiled expression; its operand stacks stay within Expression::kMaxStack because the
  // checker bounded them. kInternal only for a tree the checker did not pass (a bug).
  static absl::StatusOr<Expression> Compile(const CheckedExpression& checked);

 private:
  using Op = Expression::Op;

  ExpressionCompiler() = default;

  // Each appends the code that leaves the node's value on top of its stack.
  absl::Status Value(const SyntaxNode& node);
  void Constant(double value);
  void Name(const SyntaxNode& name);
  absl::Status Comparison(const SyntaxNode& node);
  absl::Status Logical(const SyntaxNode& node, Op jump);
  absl::Status In(const SyntaxNode& node);
  absl::Status Call(const SyntaxNode& call);

  void Emit(Op op, uint32_t arg = 0) { out_.code_.push_back({op, arg}); }
  void FuseInputComparison(size_t left_code, size_t right_code);
  void FuseInputIn(size_t left_code);

  Expression out_;
};

}  // namespace rules_internal
}  // namespace vigil

#endif  // VIGIL_RULES_INTERNAL_EXPRESSION_COMPILER_H_
