#include "vigil/rules/internal/expression_compiler.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/status_macros.h"

namespace vigil::rules_internal {

namespace {

using Kind = SyntaxNode::Kind;

absl::Status Unchecked(const char* what) {
  VIGIL_BUG(what);
  return absl::InternalError(absl::StrCat("expression tree was not checked: ", what));
}

}  // namespace

absl::StatusOr<Expression> ExpressionCompiler::Compile(const CheckedExpression& checked) {
  if (checked.root == nullptr) return Unchecked("no tree");
  ExpressionCompiler compiler;
  VIGIL_RETURN_IF_ERROR(compiler.Value(*checked.root));
  compiler.out_.type_ = checked.type;
  return std::move(compiler.out_);
}

absl::Status ExpressionCompiler::Value(const SyntaxNode& node) {
  switch (node.kind) {
    case Kind::kNumber:
    case Kind::kBool:  // 1 or 0
      Constant(node.number);
      return absl::OkStatus();
    case Kind::kString:
      Emit(Op::kString, static_cast<uint32_t>(out_.strings_.size()));
      out_.strings_.push_back(node.string);
      return absl::OkStatus();
    case Kind::kName:
      if (node.entry == nullptr) return Unchecked("a name without its entry");
      Name(node);
      return absl::OkStatus();
    case Kind::kNegate:
      VIGIL_RETURN_IF_ERROR(Value(*node.operands[0]));
      Emit(Op::kNeg);
      return absl::OkStatus();
    case Kind::kNot:
      VIGIL_RETURN_IF_ERROR(Value(*node.operands[0]));
      Emit(Op::kNot);
      return absl::OkStatus();
    case Kind::kArithmetic: {
      static constexpr std::pair<std::string_view, Op> kOps[] = {
          {"+", Op::kAdd}, {"-", Op::kSub}, {"*", Op::kMul}, {"/", Op::kDiv}, {"%", Op::kMod}};
      const auto* found = std::find_if(std::begin(kOps), std::end(kOps),
                                       [&](const auto& o) { return o.first == node.text; });
      if (found == std::end(kOps)) return Unchecked("an unknown arithmetic operator");
      VIGIL_RETURN_IF_ERROR(Value(*node.operands[0]));
      VIGIL_RETURN_IF_ERROR(Value(*node.operands[1]));
      Emit(found->second);
      return absl::OkStatus();
    }
    case Kind::kComparison:
      return Comparison(node);
    case Kind::kAnd:
      return Logical(node, Op::kJumpIfFalseOrPop);
    case Kind::kOr:
      return Logical(node, Op::kJumpIfTrueOrPop);
    case Kind::kIn:
      return In(node);
    case Kind::kCall:
      return Call(node);
    case Kind::kList:
    case Kind::kOtherToken:
    case Kind::kError:
      break;
  }
  return Unchecked("a list, list item or syntax error where a value belongs");
}

// Constants are not shared between uses: the fused comparison reads its constant from the
// instruction, and sharing would save only a few bytes.
void ExpressionCompiler::Constant(double value) {
  Emit(Op::kNumber, static_cast<uint32_t>(out_.numbers_.size()));
  out_.numbers_.push_back(value);
}

void ExpressionCompiler::Name(const SyntaxNode& name) {
  const ExpressionScope::Entry& entry = *name.entry;
  if (entry.constant) {
    Constant(entry.numbers[0]);
    return;
  }
  if (std::find(out_.names_.begin(), out_.names_.end(), name.text) == out_.names_.end()) {
    out_.names_.emplace_back(name.text);
    if (entry.type == ExprType::kNumber) {
      out_.number_names_.push_back({entry.slot, std::string(name.text)});
    }
  }
  if (entry.type == ExprType::kNumber) {
    Emit(Op::kInputNumber, entry.slot);
    out_.number_slots_ = std::max(out_.number_slots_, entry.slot + 1);
  } else {
    Emit(Op::kInputString, entry.slot);
    out_.string_slots_ = std::max(out_.string_slots_, entry.slot + 1);
  }
}

absl::Status ExpressionCompiler::Comparison(const SyntaxNode& node) {
  static constexpr std::pair<std::string_view, Op> kComparisons[] = {
      {"<", Op::kLt},  {"<=", Op::kLe}, {">", Op::kGt},
      {">=", Op::kGe}, {"==", Op::kEq}, {"!=", Op::kNe}};
  const auto* found = std::find_if(std::begin(kComparisons), std::end(kComparisons),
                                   [&](const auto& c) { return c.first == node.text; });
  if (found == std::end(kComparisons)) return Unchecked("an unknown comparison");
  Op op = found->second;
  if (node.operands[0]->type == ExprType::kString) {
    if (op != Op::kEq && op != Op::kNe) return Unchecked("strings ordered");
    op = op == Op::kEq ? Op::kStrEq : Op::kStrNe;
  }
  const size_t left_code = out_.code_.size();
  VIGIL_RETURN_IF_ERROR(Value(*node.operands[0]));
  const size_t right_code = out_.code_.size();
  VIGIL_RETURN_IF_ERROR(Value(*node.operands[1]));
  Emit(op);
  FuseInputComparison(left_code, right_code);
  return absl::OkStatus();
}

// Each operand but the last is followed by a jump to the end of the chain, taken when that
// operand decides the result (which it leaves on the stack); otherwise it is popped.
absl::Status ExpressionCompiler::Logical(const SyntaxNode& node, Op jump) {
  std::vector<size_t> jumps;
  for (size_t i = 0; i < node.operands.size(); ++i) {
    if (i > 0) {
      jumps.push_back(out_.code_.size());
      Emit(jump);
    }
    VIGIL_RETURN_IF_ERROR(Value(*node.operands[i]));
  }
  for (size_t j : jumps) out_.code_[j].arg = static_cast<uint32_t>(out_.code_.size());
  return absl::OkStatus();
}

absl::Status ExpressionCompiler::In(const SyntaxNode& node) {
  const SyntaxNode& element = *node.operands[0];
  const SyntaxNode& list = *node.operands[1];
  const size_t left_code = out_.code_.size();
  VIGIL_RETURN_IF_ERROR(Value(element));
  absl::flat_hash_set<std::string> strings;
  absl::flat_hash_set<double> numbers;
  if (list.kind == Kind::kName) {
    if (list.entry == nullptr) return Unchecked("a list name without its entry");
    strings.insert(list.entry->strings.begin(), list.entry->strings.end());
    numbers.insert(list.entry->numbers.begin(), list.entry->numbers.end());
  } else if (list.kind == Kind::kList) {
    for (const std::unique_ptr<SyntaxNode>& item : list.operands) {
      if (item->kind == Kind::kNumber) {
        numbers.insert(item->negated ? -item->number : item->number);
      } else if (item->kind == Kind::kString) {
        strings.insert(item->string);
      } else {
        return Unchecked("a list item that is no constant");
      }
    }
  } else {
    return Unchecked("a value where a list belongs");
  }
  if (element.type == ExprType::kString) {
    Emit(Op::kInStrings, static_cast<uint32_t>(out_.string_sets_.size()));
    out_.string_sets_.emplace_back(std::move(strings));
  } else {
    Emit(Op::kInNumbers, static_cast<uint32_t>(out_.number_sets_.size()));
    out_.number_sets_.push_back(std::move(numbers));
  }
  FuseInputIn(left_code);
  if (node.negated) Emit(Op::kNot);
  return absl::OkStatus();
}

absl::Status ExpressionCompiler::Call(const SyntaxNode& call) {
  const std::string_view name = call.text;
  // min and max fold as they go: each argument after the first is folded into the first, so any
  // number of arguments needs one extra stack slot.
  const bool folds = name == "min" || name == "max";
  for (size_t i = 0; i < call.operands.size(); ++i) {
    VIGIL_RETURN_IF_ERROR(Value(*call.operands[i]));
    if (folds && i > 0) Emit(name == "min" ? Op::kMin : Op::kMax);
  }
  if (folds) return absl::OkStatus();
  if (name == "abs") {
    Emit(Op::kAbs);
  } else if (name == "log1p") {
    Emit(Op::kLog1p);
  } else if (name == "contains") {
    Emit(Op::kContains);
  } else if (name == "starts_with") {
    Emit(Op::kStartsWith);
  } else if (name == "between") {
    Emit(Op::kBetween);
  } else {
    return Unchecked("an unknown function");
  }
  return absl::OkStatus();
}

// Rewrites [input][constant][compare] (either order) as one instruction. Only when each operand
// is exactly that one instruction, so no jump can point inside the rewritten code.
void ExpressionCompiler::FuseInputComparison(size_t left_code, size_t right_code) {
  std::vector<Expression::Instruction>& code = out_.code_;
  if (right_code != left_code + 1 || code.size() != left_code + 3) return;
  static constexpr std::pair<Op, Op> kFused[] = {{Op::kLt, Op::kInputLt}, {Op::kLe, Op::kInputLe},
                                                 {Op::kGt, Op::kInputGt}, {Op::kGe, Op::kInputGe},
                                                 {Op::kEq, Op::kInputEq}, {Op::kNe, Op::kInputNe}};
  // constant <op> input is input <mirrored op> constant.
  static constexpr std::pair<Op, Op> kMirror[] = {{Op::kLt, Op::kGt}, {Op::kLe, Op::kGe},
                                                  {Op::kGt, Op::kLt}, {Op::kGe, Op::kLe},
                                                  {Op::kEq, Op::kEq}, {Op::kNe, Op::kNe}};
  const Expression::Instruction a = code[left_code], b = code[right_code];
  Op compare = code[left_code + 2].op;
  const Expression::Instruction* input = nullptr;
  const Expression::Instruction* constant = nullptr;
  if (a.op == Op::kInputNumber && b.op == Op::kNumber) {
    input = &a;
    constant = &b;
  } else if (a.op == Op::kNumber && b.op == Op::kInputNumber) {
    input = &b;
    constant = &a;
    for (const auto& [from, to] : kMirror) {
      if (from == compare) {
        compare = to;
        break;
      }
    }
  } else {
    return;
  }
  for (const auto& [from, to] : kFused) {
    if (from != compare) continue;
    // The constant stays in numbers_ unread: indices of later constants do not shift.
    const Expression::Instruction fused{to, input->arg, out_.numbers_[constant->arg]};
    code.resize(left_code);
    code.push_back(fused);
    return;
  }
}

// Rewrites [input string][in strings] as one instruction.
void ExpressionCompiler::FuseInputIn(size_t left_code) {
  std::vector<Expression::Instruction>& code = out_.code_;
  if (code.size() != left_code + 2 || code[left_code].op != Op::kInputString ||
      code[left_code + 1].op != Op::kInStrings) {
    return;
  }
  const Expression::Instruction fused{Op::kInputInStrings, code[left_code].arg,
                                      static_cast<double>(code[left_code + 1].arg)};
  code.resize(left_code);
  code.push_back(fused);
}

}  // namespace vigil::rules_internal
