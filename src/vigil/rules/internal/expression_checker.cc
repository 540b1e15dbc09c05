#include "vigil/rules/internal/expression_checker.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"
#include "vigil/common/nearest_name.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::rules_internal {

namespace {

using Kind = SyntaxNode::Kind;

absl::string_view TypeName(ExprType type) { return ToAbsl(ExprTypeName(type)); }

absl::Status StatusOf(const absl::Status& s) { return s; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// Each node's checks run in the order its parts were read: an operand, then what can be checked
// once it is read (that the left side of '+' is a number, before the right side is read), then
// the next operand. A kError met on the way therefore comes after exactly the checks that a
// reader meets before the syntax error.
//
// The operand stack: each value read pushes one slot, each operator that leaves one value of two
// pops one (numbers and strings counted together, as the bound on both stacks).
class Checker {
 public:
  Checker(const ExpressionScope& scope, const ExpressionSource& source, absl::Status parse_error)
      : scope_(scope), source_(source), parse_error_(std::move(parse_error)) {}

  // A value: sets node.type.
  absl::StatusOr<ExprType> Value(SyntaxNode& node) {
    absl::StatusOr<ExprType> type = ValueOf(node);
    if (type.ok()) node.type = *type;
    return type;
  }

 private:
  absl::Status Error(size_t offset, std::string_view message, std::string_view hint = {}) const {
    return source_.Error(offset, message, hint);
  }

  absl::Status WantType(size_t at, ExprType got, ExprType want, std::string_view what) const {
    if (got == want) return absl::OkStatus();
    return Error(
        at, absl::StrCat(ToAbsl(what), " needs a ", TypeName(want), ", not a ", TypeName(got)));
  }

  absl::Status Push(size_t at) {
    if (++depth_ > Expression::kMaxStack) {
      return Error(at, absl::StrCat("expression nests deeper than ", Expression::kMaxStack));
    }
    return absl::OkStatus();
  }
  void Pop(int n = 1) { depth_ -= n; }

  // A kError: its one operand (read before reading stopped), if any, checked in the role of the
  // kError's place by "check_before", then the syntax error.
  template <typename Check>
  absl::Status Stopped(SyntaxNode& node, Check check_before) {
    if (!node.operands.empty()) VIGIL_RETURN_IF_ERROR(StatusOf(check_before(*node.operands[0])));
    if (parse_error_.ok()) {
      VIGIL_BUG("a kError node in a tree parsed without error");
      return absl::InternalError("expression tree stops without a syntax error");
    }
    return parse_error_;
  }

  absl::StatusOr<ExprType> ValueOf(SyntaxNode& node) {
    switch (node.kind) {
      case Kind::kError:
        return Stopped(node, [this](SyntaxNode& before) { return Value(before); });
      case Kind::kNumber:
        VIGIL_RETURN_IF_ERROR(Push(node.at));
        return ExprType::kNumber;
      case Kind::kString:
        VIGIL_RETURN_IF_ERROR(Push(node.at));
        return ExprType::kString;
      case Kind::kBool:
        VIGIL_RETURN_IF_ERROR(Push(node.at));
        return ExprType::kBool;
      case Kind::kName:
        return Name(node);
      case Kind::kNegate:
        return Unary(node, ExprType::kNumber, "'-'");
      case Kind::kNot:
        return Unary(node, ExprType::kBool, "'not'");
      case Kind::kArithmetic:
        return Arithmetic(node);
      case Kind::kComparison:
        return Comparison(node);
      case Kind::kAnd:
        return Logical(node, "'and'");
      case Kind::kOr:
        return Logical(node, "'or'");
      case Kind::kIn:
        return In(node);
      case Kind::kCall:
        return Call(node);
      case Kind::kList:
      case Kind::kOtherToken:
        break;
    }
    VIGIL_BUG("a list or list item where the parser puts values");
    return absl::InternalError("expression tree holds a list item where a value belongs");
  }

  absl::Status UnknownName(const SyntaxNode& name) const {
    std::vector<std::string> candidates = scope_.Names();
    for (std::string_view f : kFunctionNames) candidates.emplace_back(f);
    const std::string best = NearestName(name.text, candidates);
    return Error(name.at, absl::StrCat("unknown name '", ToAbsl(name.text), "'"),
                 best.empty() ? "" : absl::StrCat("did you mean '", best, "'?"));
  }

  absl::StatusOr<ExprType> Name(SyntaxNode& name) {
    const ExpressionScope::Entry* entry = scope_.Find(name.text);
    if (entry == nullptr) return UnknownName(name);
    if (entry->type == ExprType::kNumberList || entry->type == ExprType::kStringList) {
      return Error(name.at, absl::StrCat("'", ToAbsl(name.text), "' is a list; use it after 'in'"));
    }
    VIGIL_RETURN_IF_ERROR(Push(name.at));
    name.entry = entry;
    return entry->constant ? ExprType::kNumber : entry->type;
  }

  absl::StatusOr<ExprType> Unary(SyntaxNode& node, ExprType want, std::string_view what) {
    SyntaxNode& operand = *node.operands[0];
    VIGIL_ASSIGN_OR_RETURN(const ExprType type, Value(operand));
    VIGIL_RETURN_IF_ERROR(WantType(operand.begin, type, want, what));
    return want;
  }

  absl::StatusOr<ExprType> Arithmetic(SyntaxNode& node) {
    const std::string what = absl::StrCat("'", ToAbsl(node.text), "'");
    SyntaxNode& left = *node.operands[0];
    SyntaxNode& right = *node.operands[1];
    VIGIL_ASSIGN_OR_RETURN(const ExprType left_type, Value(left));
    VIGIL_RETURN_IF_ERROR(WantType(left.begin, left_type, ExprType::kNumber, what));
    VIGIL_ASSIGN_OR_RETURN(const ExprType right_type, Value(right));
    VIGIL_RETURN_IF_ERROR(WantType(right.begin, right_type, ExprType::kNumber, what));
    Pop();
    return ExprType::kNumber;
  }

  absl::StatusOr<ExprType> Comparison(SyntaxNode& node) {
    const absl::string_view symbol = ToAbsl(node.text);
    SyntaxNode& left = *node.operands[0];
    SyntaxNode& right = *node.operands[1];
    VIGIL_ASSIGN_OR_RETURN(const ExprType left_type, Value(left));
    VIGIL_ASSIGN_OR_RETURN(const ExprType right_type, Value(right));
    const bool equality = symbol == "==" || symbol == "!=";
    if (left_type != right_type) {
      return Error(right.begin, absl::StrCat("'", symbol, "' compares a ", TypeName(left_type),
                                             " with a ", TypeName(right_type)));
    }
    if (left_type == ExprType::kString) {
      if (!equality) {
        return Error(node.at,
                     absl::StrCat("strings compare only with == and !=, not '", symbol, "'"));
      }
    } else if (left_type == ExprType::kBool && !equality) {
      return Error(node.at,
                   absl::StrCat("booleans compare only with == and !=, not '", symbol, "'"));
    } else if (left_type != ExprType::kNumber && left_type != ExprType::kBool) {
      return Error(left.begin, absl::StrCat("a ", TypeName(left_type), " cannot be compared"));
    }
    Pop();
    return ExprType::kBool;
  }

  // The left operand's slot is popped when the next is read: and/or leave the left value only
  // when it decides.
  absl::StatusOr<ExprType> Logical(SyntaxNode& node, std::string_view what) {
    for (size_t i = 0; i < node.operands.size(); ++i) {
      if (i > 0) Pop();
      SyntaxNode& operand = *node.operands[i];
      VIGIL_ASSIGN_OR_RETURN(const ExprType type, Value(operand));
      VIGIL_RETURN_IF_ERROR(WantType(operand.begin, type, ExprType::kBool, what));
    }
    return ExprType::kBool;
  }

  // The element's one slot becomes the boolean's.
  absl::StatusOr<ExprType> In(SyntaxNode& node) {
    SyntaxNode& element = *node.operands[0];
    SyntaxNode& list = *node.operands[1];
    VIGIL_ASSIGN_OR_RETURN(const ExprType element_type, Value(element));
    if (element_type != ExprType::kNumber && element_type != ExprType::kString) {
      return Error(element.begin, absl::StrCat("'in' looks up a number or a string, not a ",
                                               TypeName(element_type)));
    }
    VIGIL_ASSIGN_OR_RETURN(const ExprType list_type, List(list, element_type));
    const ExprType want =
        element_type == ExprType::kNumber ? ExprType::kNumberList : ExprType::kStringList;
    if (list_type != want) {
      return Error(list.at, absl::StrCat("'in' looks up a ", TypeName(element_type), " in a ",
                                         TypeName(list_type)));
    }
    return ExprType::kBool;
  }

  // The list after `in`: sets node.type to its list type.
  absl::StatusOr<ExprType> List(SyntaxNode& node, ExprType element) {
    switch (node.kind) {
      case Kind::kError:
        return Stopped(node, [&](SyntaxNode& before) { return List(before, element); });
      case Kind::kName: {
        const ExpressionScope::Entry* entry = scope_.Find(node.text);
        if (entry == nullptr) return UnknownName(node);
        if (entry->type != ExprType::kStringList && entry->type != ExprType::kNumberList) {
          return Error(node.at, absl::StrCat("'in' needs a list; '", ToAbsl(node.text), "' is a ",
                                             TypeName(entry->type)));
        }
        node.entry = entry;
        node.type = entry->type;
        return node.type;
      }
      case Kind::kList:
        for (const std::unique_ptr<SyntaxNode>& item : node.operands) {
          VIGIL_RETURN_IF_ERROR(Item(*item, element));
        }
        node.type = element == ExprType::kNumber ? ExprType::kNumberList : ExprType::kStringList;
        return node.type;
      default:
        break;
    }
    VIGIL_BUG("a value where the parser puts the list after 'in'");
    return absl::InternalError("expression tree holds a value where a list belongs");
  }

  // An item of a [list]: a constant of the element's type.
  absl::Status Item(SyntaxNode& item, ExprType element) {
    if (item.kind == Kind::kError) {
      return Stopped(item, [&](SyntaxNode& before) { return Item(before, element); });
    }
    if ((item.kind == Kind::kNumber && element == ExprType::kNumber) ||
        (item.kind == Kind::kString && element == ExprType::kString && !item.negated)) {
      item.type = element;
      return absl::OkStatus();
    }
    return Error(item.at,
                 absl::StrCat("a list after 'in' holds constant ", TypeName(element), "s here"));
  }

  absl::StatusOr<ExprType> Call(SyntaxNode& call);

  const ExpressionScope& scope_;
  const ExpressionSource& source_;
  const absl::Status parse_error_;
  int depth_ = 0;
};

absl::StatusOr<ExprType> Checker::Call(SyntaxNode& call) {
  const absl::string_view name = ToAbsl(call.text);
  const bool folds = name == "min" || name == "max";
  std::vector<std::pair<ExprType, size_t>> args;  // type, begin
  for (const std::unique_ptr<SyntaxNode>& operand : call.operands) {
    VIGIL_ASSIGN_OR_RETURN(const ExprType type, Value(*operand));
    args.push_back({type, operand->begin});
    // min and max fold as they go, so any number of arguments needs one extra slot.
    if (folds && args.size() >= 2) {
      const std::string what = absl::StrCat(name, "()");
      VIGIL_RETURN_IF_ERROR(WantType(args[0].second, args[0].first, ExprType::kNumber, what));
      VIGIL_RETURN_IF_ERROR(WantType(operand->begin, type, ExprType::kNumber, what));
      Pop();
    }
  }
  const size_t close = call.at;
  const auto arity = [&](size_t n, absl::string_view shape) -> absl::Status {
    if (args.size() == n) return absl::OkStatus();
    return Error(args.size() < n ? close : args[n].second,
                 absl::StrCat(name, " takes ", n, " argument", n == 1 ? "" : "s", ": ", shape));
  };
  const auto want = [&](size_t i, ExprType type) {
    return WantType(args[i].second, args[i].first, type,
                    absl::StrCat("argument ", i + 1, " of ", name, "()"));
  };
  if (name == "abs" || name == "log1p") {
    VIGIL_RETURN_IF_ERROR(arity(1, absl::StrCat(name, "(number)")));
    VIGIL_RETURN_IF_ERROR(want(0, ExprType::kNumber));
    return ExprType::kNumber;
  }
  if (folds) {
    if (args.size() < 2) {
      return Error(args.empty() ? close : args[0].second,
                   absl::StrCat(name, " takes two or more numbers"));
    }
    return ExprType::kNumber;
  }
  if (name == "contains" || name == "starts_with") {
    VIGIL_RETURN_IF_ERROR(arity(2, absl::StrCat(name, "(string, string)")));
    VIGIL_RETURN_IF_ERROR(want(0, ExprType::kString));
    VIGIL_RETURN_IF_ERROR(want(1, ExprType::kString));
    Pop();
    return ExprType::kBool;
  }
  // between(x, low, high): low <= x <= high.
  VIGIL_RETURN_IF_ERROR(arity(3, "between(number, low, high)"));
  for (size_t i = 0; i < 3; ++i) VIGIL_RETURN_IF_ERROR(want(i, ExprType::kNumber));
  Pop(2);
  return ExprType::kBool;
}

}  // namespace

absl::StatusOr<CheckedExpression> CheckExpression(ParsedExpression parsed,
                                                  const ExpressionScope& scope,
                                                  const ExpressionSource& source) {
  Checker checker(scope, source, parsed.error);
  VIGIL_ASSIGN_OR_RETURN(const ExprType type, checker.Value(*parsed.root));
  // The walk returns the syntax error where it meets the kError; this is for a tree without one.
  if (!parsed.error.ok()) return parsed.error;
  if (type == ExprType::kNumberList || type == ExprType::kStringList) {
    return source.Error(0, "a list on its own is not a value; use it after 'in'");
  }
  CheckedExpression checked;
  checked.root = std::move(parsed.root);
  checked.type = type;
  return checked;
}

}  // namespace vigil::rules_internal
