#include "vigil/rules/expression.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "vigil/common/nearest_name.h"

namespace vigil {

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

std::string_view ExprTypeName(ExprType type) {
  switch (type) {
    case ExprType::kNumber:
      return "number";
    case ExprType::kBool:
      return "boolean";
    case ExprType::kString:
      return "string";
    case ExprType::kNumberList:
      return "list of numbers";
    case ExprType::kStringList:
      return "list of strings";
  }
  return "?";
}

namespace {

constexpr absl::string_view kKeywords[] = {"and", "or", "not", "in", "true", "false"};
constexpr absl::string_view kFunctions[] = {"abs",      "log1p",       "min",    "max",
                                            "contains", "starts_with", "between"};

absl::string_view TypeName(ExprType type) {
  const std::string_view name = ExprTypeName(type);
  return absl::string_view(name.data(), name.size());
}

// Lower-case words of letters, digits and '_', joined by single dots ("screening.max_score"):
// the dot groups the inputs of one stage without a namespace mechanism.
bool IsIdentifier(absl::string_view name) {
  if (name.empty() || !(absl::ascii_islower(name[0]) || name[0] == '_')) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '.') {
      if (i + 1 >= name.size() || !(absl::ascii_islower(name[i + 1]) || name[i + 1] == '_')) {
        return false;
      }
      continue;
    }
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_')) return false;
  }
  return true;
}

bool IsReserved(absl::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords) ||
         std::find(std::begin(kFunctions), std::end(kFunctions), name) != std::end(kFunctions);
}

}  // namespace

absl::Status ExpressionScope::Add(std::string name, Entry entry) {
  if (!IsIdentifier(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("name '", name, "' is not an identifier ([a-z_][a-z0-9_]*)"));
  }
  if (IsReserved(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("name '", name, "' is reserved (a keyword or function)"));
  }
  if (!entries_.emplace(name, std::move(entry)).second) {
    return absl::AlreadyExistsError(absl::StrCat("name '", name, "' is defined twice"));
  }
  return absl::OkStatus();
}

absl::Status ExpressionScope::AddNumber(std::string name, uint32_t slot) {
  return Add(std::move(name), {ExprType::kNumber, slot, false, {}, {}});
}
absl::Status ExpressionScope::AddString(std::string name, uint32_t slot) {
  return Add(std::move(name), {ExprType::kString, slot, false, {}, {}});
}
absl::Status ExpressionScope::AddStringList(std::string name, std::vector<std::string> values) {
  return Add(std::move(name), {ExprType::kStringList, 0, false, std::move(values), {}});
}
absl::Status ExpressionScope::AddNumberList(std::string name, std::vector<double> values) {
  return Add(std::move(name), {ExprType::kNumberList, 0, false, {}, std::move(values)});
}
absl::Status ExpressionScope::AddConstant(std::string name, double value) {
  return Add(std::move(name), {ExprType::kNumber, 0, true, {}, {value}});
}

const ExpressionScope::Entry* ExpressionScope::Find(std::string_view name) const {
  auto it = entries_.find(absl::string_view(name.data(), name.size()));
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> ExpressionScope::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

// Recursive descent over the grammar in docs/policy.md, emitting postfix code as it goes and
// tracking each subexpression's type and the operand stack depth.
class ExpressionCompiler {
 public:
  ExpressionCompiler(absl::string_view text, const ExpressionScope& scope,
                     const SourceLocation& where)
      : text_(text), scope_(scope), where_(where) {}

  absl::StatusOr<Expression> Compile() {
    if (absl::Status s = Next(); !s.ok()) return s;
    auto type = ParseOr();
    if (!type.ok()) return type.status();
    if (token_.kind != Kind::kEnd) return Error(token_.begin, "unexpected text after the end");
    if (*type == ExprType::kNumberList || *type == ExprType::kStringList) {
      return Error(0, "a list on its own is not a value; use it after 'in'");
    }
    out_.type_ = *type;
    return std::move(out_);
  }

 private:
  enum class Kind { kEnd, kNumber, kString, kName, kSymbol };
  struct Token {
    Kind kind = Kind::kEnd;
    size_t begin = 0;
    absl::string_view text;  // a name or symbol as written
    double number = 0;
    std::string string;  // a string literal's value
  };
  using Op = Expression::Op;

  // --- errors

  absl::Status Error(size_t pos, absl::string_view message, absl::string_view hint = {}) const {
    int line = where_.line, column = where_.column;
    size_t line_start = 0;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = where_.indent + 1;
        line_start = i + 1;
      } else {
        ++column;
      }
    }
    size_t line_end = text_.find('\n', line_start);
    if (line_end == absl::string_view::npos) line_end = text_.size();
    std::string out = absl::StrCat(where_.file, ":", line, ":", column, ": ", message, "\n  ",
                                   text_.substr(line_start, line_end - line_start), "\n  ",
                                   std::string(std::min(pos, text_.size()) - line_start, ' '), "^");
    if (!hint.empty()) absl::StrAppend(&out, "\n  hint: ", hint);
    return absl::InvalidArgumentError(out);
  }

  // --- lexer

  absl::Status Next() {
    size_t i = position_;
    while (i < text_.size() && absl::ascii_isspace(text_[i])) ++i;
    token_ = Token{};
    token_.begin = i;
    if (i == text_.size()) {
      token_.kind = Kind::kEnd;
      position_ = i;
      return absl::OkStatus();
    }
    const char c = text_[i];
    if (absl::ascii_isdigit(c) ||
        (c == '.' && i + 1 < text_.size() && absl::ascii_isdigit(text_[i + 1]))) {
      size_t j = i;
      while (j < text_.size() && (absl::ascii_isdigit(text_[j]) || text_[j] == '.')) ++j;
      if (j < text_.size() && (text_[j] == 'e' || text_[j] == 'E')) {
        size_t k = j + 1;
        if (k < text_.size() && (text_[k] == '+' || text_[k] == '-')) ++k;
        if (k < text_.size() && absl::ascii_isdigit(text_[k])) {
          while (k < text_.size() && absl::ascii_isdigit(text_[k])) ++k;
          j = k;
        }
      }
      const absl::string_view digits = text_.substr(i, j - i);
      if (!absl::SimpleAtod(absl::string_view(digits.data(), digits.size()), &token_.number) ||
          !std::isfinite(token_.number)) {
        return Error(i, absl::StrCat("'", digits, "' is not a number"));
      }
      if (j < text_.size() && (absl::ascii_isalpha(text_[j]) || text_[j] == '_')) {
        return Error(j, "a number runs into a name; put a space or an operator between them");
      }
      token_.kind = Kind::kNumber;
      token_.text = digits;
      position_ = j;
      return absl::OkStatus();
    }
    if (absl::ascii_isalpha(c) || c == '_') {
      size_t j = i;
      while (j < text_.size() &&
             (absl::ascii_isalnum(text_[j]) || text_[j] == '_' ||
              (text_[j] == '.' && j + 1 < text_.size() &&
               (absl::ascii_isalpha(text_[j + 1]) || text_[j + 1] == '_')))) {
        ++j;
      }
      token_.kind = Kind::kName;
      token_.text = text_.substr(i, j - i);
      position_ = j;
      return absl::OkStatus();
    }
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < text_.size() && text_[j] != c) {
        if (text_[j] == '\n') break;
        if (text_[j] == '\\' && j + 1 < text_.size()) {
          const char e = text_[j + 1];
          if (e != '\\' && e != '\'' && e != '"') {
            return Error(j, "unknown escape; only \\\\, \\' and \\\" are known");
          }
          token_.string.push_back(e);
          j += 2;
          continue;
        }
        token_.string.push_back(text_[j++]);
      }
      if (j >= text_.size() || text_[j] != c) return Error(i, "string is not closed");
      token_.kind = Kind::kString;
      token_.text = text_.substr(i, j + 1 - i);
      position_ = j + 1;
      return absl::OkStatus();
    }
    for (absl::string_view symbol :
         {"<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", ","}) {
      if (text_.substr(i, symbol.size()) == symbol) {
        token_.kind = Kind::kSymbol;
        token_.text = symbol;
        position_ = i + symbol.size();
        return absl::OkStatus();
      }
    }
    if (c == '=') return Error(i, "'=' is not an operator", "compare with '=='");
    if (c == '&' || c == '|' || c == '!') {
      return Error(i, absl::StrCat("'", absl::string_view(&c, 1), "' is not an operator"),
                   "write 'and', 'or', 'not'");
    }
    return Error(i, absl::StrCat("unexpected character '", absl::string_view(&c, 1), "'"));
  }

  bool IsSymbol(absl::string_view s) const {
    return token_.kind == Kind::kSymbol && token_.text == s;
  }
  bool IsWord(absl::string_view s) const { return token_.kind == Kind::kName && token_.text == s; }

  absl::Status Expect(absl::string_view symbol) {
    if (!IsSymbol(symbol)) {
      return Error(token_.begin, absl::StrCat("expected '", symbol, "'"));
    }
    return Next();
  }

  // --- code

  void Emit(Op op, uint32_t arg = 0) { out_.code_.push_back({op, arg}); }

  absl::Status Push(size_t pos) {
    if (++depth_ > Expression::kMaxStack) {
      return Error(pos, absl::StrCat("expression nests deeper than ", Expression::kMaxStack));
    }
    return absl::OkStatus();
  }
  void Pop(int n = 1) { depth_ -= n; }

  absl::Status WantType(size_t pos, ExprType got, ExprType want, absl::string_view what) const {
    if (got == want) return absl::OkStatus();
    return Error(pos, absl::StrCat(what, " needs a ", TypeName(want), ", not a ", TypeName(got)));
  }

  // Rewrites [input][constant][compare] (either order) as one instruction. Only when each
  // operand is exactly that one instruction, so no jump can point inside the rewritten code.
  void FuseInputComparison(size_t left_code, size_t right_code) {
    std::vector<Expression::Instruction>& code = out_.code_;
    if (right_code != left_code + 1 || code.size() != left_code + 3) return;
    static constexpr std::pair<Op, Op> kFused[] = {
        {Op::kLt, Op::kInputLt}, {Op::kLe, Op::kInputLe}, {Op::kGt, Op::kInputGt},
        {Op::kGe, Op::kInputGe}, {Op::kEq, Op::kInputEq}, {Op::kNe, Op::kInputNe}};
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
      const Expression::Instruction fused{to, input->arg, out_.numbers_[constant->arg]};
      code.resize(left_code);
      code.push_back(fused);
      return;
    }
  }

  // Rewrites [input string][in strings] as one instruction.
  void FuseInputIn(size_t left_code) {
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

  // --- grammar

  absl::StatusOr<ExprType> ParseOr() {
    return ParseLogical("or", &ExpressionCompiler::ParseAnd, Op::kJumpIfTrueOrPop);
  }
  absl::StatusOr<ExprType> ParseAnd() {
    return ParseLogical("and", &ExpressionCompiler::ParseNot, Op::kJumpIfFalseOrPop);
  }

  absl::StatusOr<ExprType> ParseLogical(absl::string_view word,
                                        absl::StatusOr<ExprType> (ExpressionCompiler::*operand)(),
                                        Op jump) {
    const size_t left_pos = token_.begin;
    auto left = (this->*operand)();
    if (!left.ok()) return left;
    if (!IsWord(word)) return left;
    if (absl::Status s = WantType(left_pos, *left, ExprType::kBool, absl::StrCat("'", word, "'"));
        !s.ok()) {
      return s;
    }
    std::vector<size_t> jumps;
    while (IsWord(word)) {
      if (absl::Status s = Next(); !s.ok()) return s;
      jumps.push_back(out_.code_.size());
      Emit(jump);
      Pop();
      const size_t pos = token_.begin;
      auto right = (this->*operand)();
      if (!right.ok()) return right;
      if (absl::Status s = WantType(pos, *right, ExprType::kBool, absl::StrCat("'", word, "'"));
          !s.ok()) {
        return s;
      }
    }
    for (size_t j : jumps) out_.code_[j].arg = static_cast<uint32_t>(out_.code_.size());
    return ExprType::kBool;
  }

  absl::StatusOr<ExprType> ParseNot() {
    if (!IsWord("not")) return ParseComparison();
    if (absl::Status s = Next(); !s.ok()) return s;
    const size_t pos = token_.begin;
    auto operand = ParseNot();
    if (!operand.ok()) return operand;
    if (absl::Status s = WantType(pos, *operand, ExprType::kBool, "'not'"); !s.ok()) return s;
    Emit(Op::kNot);
    return ExprType::kBool;
  }

  absl::StatusOr<ExprType> ParseComparison() {
    const size_t left_pos = token_.begin;
    const size_t left_code = out_.code_.size();
    auto left = ParseSum();
    if (!left.ok()) return left;
    // `in` / `not in`
    if (IsWord("in") || IsWord("not")) {
      const bool negate = IsWord("not");
      const size_t op_pos = token_.begin;
      if (absl::Status s = Next(); !s.ok()) return s;
      if (negate) {
        if (!IsWord("in")) return Error(op_pos, "'not' here must be followed by 'in'");
        if (absl::Status s = Next(); !s.ok()) return s;
      }
      if (absl::Status s = ParseListOperand(*left, left_pos); !s.ok()) return s;
      FuseInputIn(left_code);
      if (negate) Emit(Op::kNot);
      return ExprType::kBool;
    }
    if (token_.kind != Kind::kSymbol) return left;
    static constexpr std::pair<absl::string_view, Op> kComparisons[] = {
        {"<", Op::kLt},  {"<=", Op::kLe}, {">", Op::kGt},
        {">=", Op::kGe}, {"==", Op::kEq}, {"!=", Op::kNe}};
    const auto* found = std::find_if(std::begin(kComparisons), std::end(kComparisons),
                                     [&](const auto& c) { return c.first == token_.text; });
    if (found == std::end(kComparisons)) return left;
    const absl::string_view symbol = token_.text;
    const size_t op_pos = token_.begin;
    if (absl::Status s = Next(); !s.ok()) return s;
    const size_t right_pos = token_.begin;
    const size_t right_code = out_.code_.size();
    auto right = ParseSum();
    if (!right.ok()) return right;
    const bool equality = found->second == Op::kEq || found->second == Op::kNe;
    if (*left != *right) {
      return Error(right_pos, absl::StrCat("'", symbol, "' compares a ", TypeName(*left),
                                           " with a ", TypeName(*right)));
    }
    Op op = found->second;
    if (*left == ExprType::kString) {
      if (!equality) {
        return Error(op_pos,
                     absl::StrCat("strings compare only with == and !=, not '", symbol, "'"));
      }
      op = op == Op::kEq ? Op::kStrEq : Op::kStrNe;
    } else if (*left == ExprType::kBool && !equality) {
      return Error(op_pos,
                   absl::StrCat("booleans compare only with == and !=, not '", symbol, "'"));
    } else if (*left != ExprType::kNumber && *left != ExprType::kBool) {
      return Error(left_pos, absl::StrCat("a ", TypeName(*left), " cannot be compared"));
    }
    Emit(op);
    Pop();
    FuseInputComparison(left_code, right_code);
    if (IsSymbol("<") || IsSymbol("<=") || IsSymbol(">") || IsSymbol(">=") || IsSymbol("==") ||
        IsSymbol("!=")) {
      return Error(token_.begin, "comparisons do not chain",
                   "write 'a < b and b < c', or between(b, a, c)");
    }
    return ExprType::kBool;
  }

  // The right side of `in`: a literal list of constants or a named list.
  absl::Status ParseListOperand(ExprType element, size_t element_pos) {
    if (element != ExprType::kNumber && element != ExprType::kString) {
      return Error(element_pos,
                   absl::StrCat("'in' looks up a number or a string, not a ", TypeName(element)));
    }
    const size_t pos = token_.begin;
    absl::flat_hash_set<std::string> strings;
    absl::flat_hash_set<double> numbers;
    ExprType list_type;
    if (IsSymbol("[")) {
      if (absl::Status s = Next(); !s.ok()) return s;
      list_type = element == ExprType::kNumber ? ExprType::kNumberList : ExprType::kStringList;
      while (!IsSymbol("]")) {
        const size_t item_pos = token_.begin;
        bool negative = false;
        if (IsSymbol("-")) {
          negative = true;
          if (absl::Status s = Next(); !s.ok()) return s;
        }
        if (token_.kind == Kind::kNumber && element == ExprType::kNumber) {
          numbers.insert(negative ? -token_.number : token_.number);
        } else if (token_.kind == Kind::kString && element == ExprType::kString && !negative) {
          strings.insert(token_.string);
        } else {
          return Error(item_pos, absl::StrCat("a list after 'in' holds constant ",
                                              TypeName(element), "s here"));
        }
        if (absl::Status s = Next(); !s.ok()) return s;
        if (IsSymbol(",")) {
          if (absl::Status s = Next(); !s.ok()) return s;
        } else if (!IsSymbol("]")) {
          return Error(token_.begin, "expected ',' or ']'");
        }
      }
      if (absl::Status s = Next(); !s.ok()) return s;
    } else if (token_.kind == Kind::kName) {
      const ExpressionScope::Entry* entry =
          scope_.Find(std::string_view(token_.text.data(), token_.text.size()));
      if (entry == nullptr) return UnknownName();
      list_type = entry->type;
      if (list_type == ExprType::kStringList) {
        strings.insert(entry->strings.begin(), entry->strings.end());
      } else if (list_type == ExprType::kNumberList) {
        numbers.insert(entry->numbers.begin(), entry->numbers.end());
      } else {
        return Error(
            pos, absl::StrCat("'in' needs a list; '", token_.text, "' is a ", TypeName(list_type)));
      }
      if (absl::Status s = Next(); !s.ok()) return s;
    } else {
      return Error(pos, "'in' needs a list: [..] or the name of a list");
    }
    const ExprType want =
        element == ExprType::kNumber ? ExprType::kNumberList : ExprType::kStringList;
    if (list_type != want) {
      return Error(
          pos, absl::StrCat("'in' looks up a ", TypeName(element), " in a ", TypeName(list_type)));
    }
    if (element == ExprType::kString) {
      Emit(Op::kInStrings, static_cast<uint32_t>(out_.string_sets_.size()));
      out_.string_sets_.emplace_back(std::move(strings));
    } else {
      Emit(Op::kInNumbers, static_cast<uint32_t>(out_.number_sets_.size()));
      out_.number_sets_.push_back(std::move(numbers));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ExprType> ParseSum() {
    return ParseArithmetic({{"+", Op::kAdd}, {"-", Op::kSub}}, &ExpressionCompiler::ParseProduct);
  }
  absl::StatusOr<ExprType> ParseProduct() {
    return ParseArithmetic({{"*", Op::kMul}, {"/", Op::kDiv}, {"%", Op::kMod}},
                           &ExpressionCompiler::ParseUnary);
  }

  absl::StatusOr<ExprType> ParseArithmetic(
      std::initializer_list<std::pair<absl::string_view, Op>> ops,
      absl::StatusOr<ExprType> (ExpressionCompiler::*operand)()) {
    const size_t left_pos = token_.begin;
    auto left = (this->*operand)();
    if (!left.ok()) return left;
    for (;;) {
      const auto* found = std::find_if(ops.begin(), ops.end(), [&](const auto& o) {
        return token_.kind == Kind::kSymbol && o.first == token_.text;
      });
      if (found == ops.end()) return left;
      const absl::string_view symbol = token_.text;
      if (absl::Status s =
              WantType(left_pos, *left, ExprType::kNumber, absl::StrCat("'", symbol, "'"));
          !s.ok()) {
        return s;
      }
      if (absl::Status s = Next(); !s.ok()) return s;
      const size_t right_pos = token_.begin;
      auto right = (this->*operand)();
      if (!right.ok()) return right;
      if (absl::Status s =
              WantType(right_pos, *right, ExprType::kNumber, absl::StrCat("'", symbol, "'"));
          !s.ok()) {
        return s;
      }
      Emit(found->second);
      Pop();
    }
  }

  absl::StatusOr<ExprType> ParseUnary() {
    if (!IsSymbol("-")) return ParsePrimary();
    if (absl::Status s = Next(); !s.ok()) return s;
    const size_t pos = token_.begin;
    auto operand = ParseUnary();
    if (!operand.ok()) return operand;
    if (absl::Status s = WantType(pos, *operand, ExprType::kNumber, "'-'"); !s.ok()) return s;
    Emit(Op::kNeg);
    return ExprType::kNumber;
  }

  absl::Status UnknownName() const {
    const absl::string_view name = token_.text;
    std::vector<std::string> candidates = scope_.Names();
    for (absl::string_view f : kFunctions) candidates.emplace_back(f);
    const std::string best = NearestName(std::string_view(name.data(), name.size()), candidates);
    return Error(token_.begin, absl::StrCat("unknown name '", name, "'"),
                 best.empty() ? "" : absl::StrCat("did you mean '", best, "'?"));
  }

  absl::StatusOr<ExprType> ParsePrimary() {
    const size_t pos = token_.begin;
    switch (token_.kind) {
      case Kind::kEnd:
        return Error(pos, "expression ends too early");
      case Kind::kNumber: {
        if (absl::Status s = Push(pos); !s.ok()) return s;
        Emit(Op::kNumber, static_cast<uint32_t>(out_.numbers_.size()));
        out_.numbers_.push_back(token_.number);
        if (absl::Status s = Next(); !s.ok()) return s;
        return ExprType::kNumber;
      }
      case Kind::kString: {
        if (absl::Status s = Push(pos); !s.ok()) return s;
        Emit(Op::kString, static_cast<uint32_t>(out_.strings_.size()));
        out_.strings_.push_back(token_.string);
        if (absl::Status s = Next(); !s.ok()) return s;
        return ExprType::kString;
      }
      case Kind::kSymbol: {
        if (IsSymbol("(")) {
          if (absl::Status s = Next(); !s.ok()) return s;
          auto inner = ParseOr();
          if (!inner.ok()) return inner;
          if (absl::Status s = Expect(")"); !s.ok()) return s;
          return inner;
        }
        if (IsSymbol("[")) return Error(pos, "a list is only allowed after 'in'");
        return Error(pos, absl::StrCat("unexpected '", token_.text, "'"));
      }
      case Kind::kName:
        break;
    }
    const absl::string_view name = token_.text;
    if (name == "true" || name == "false") {
      if (absl::Status s = Push(pos); !s.ok()) return s;
      Emit(Op::kNumber, static_cast<uint32_t>(out_.numbers_.size()));
      out_.numbers_.push_back(name == "true" ? 1.0 : 0.0);
      if (absl::Status s = Next(); !s.ok()) return s;
      return ExprType::kBool;
    }
    if (std::find(std::begin(kFunctions), std::end(kFunctions), name) != std::end(kFunctions)) {
      return ParseCall(name);
    }
    if (IsReserved(name)) return Error(pos, absl::StrCat("'", name, "' cannot start a value"));
    const ExpressionScope::Entry* entry = scope_.Find(std::string_view(name.data(), name.size()));
    if (entry == nullptr) return UnknownName();
    if (entry->type == ExprType::kNumberList || entry->type == ExprType::kStringList) {
      return Error(pos, absl::StrCat("'", name, "' is a list; use it after 'in'"));
    }
    if (absl::Status s = Push(pos); !s.ok()) return s;
    if (entry->constant) {
      Emit(Op::kNumber, static_cast<uint32_t>(out_.numbers_.size()));
      out_.numbers_.push_back(entry->numbers[0]);
      if (absl::Status s = Next(); !s.ok()) return s;
      return ExprType::kNumber;
    }
    if (std::find(out_.names_.begin(), out_.names_.end(), name) == out_.names_.end()) {
      out_.names_.emplace_back(name);
      if (entry->type == ExprType::kNumber)
        out_.number_names_.push_back({entry->slot, std::string(name)});
    }
    if (entry->type == ExprType::kNumber) {
      Emit(Op::kInputNumber, entry->slot);
      out_.number_slots_ = std::max(out_.number_slots_, entry->slot + 1);
    } else {
      Emit(Op::kInputString, entry->slot);
      out_.string_slots_ = std::max(out_.string_slots_, entry->slot + 1);
    }
    if (absl::Status s = Next(); !s.ok()) return s;
    return entry->type;
  }

  absl::StatusOr<ExprType> ParseCall(absl::string_view name) {
    if (absl::Status s = Next(); !s.ok()) return s;
    if (!IsSymbol("("))
      return Error(token_.begin, absl::StrCat("'", name, "' is a function: expected '('"));
    if (absl::Status s = Next(); !s.ok()) return s;
    std::vector<std::pair<ExprType, size_t>> args;
    while (!IsSymbol(")")) {
      const size_t arg_pos = token_.begin;
      auto arg = ParseOr();
      if (!arg.ok()) return arg;
      args.push_back({*arg, arg_pos});
      // min and max fold as they go, so any number of arguments needs one extra slot.
      if ((name == "min" || name == "max") && args.size() >= 2) {
        if (absl::Status s = WantType(args[0].second, args[0].first, ExprType::kNumber,
                                      absl::StrCat(name, "()"));
            !s.ok()) {
          return s;
        }
        if (absl::Status s = WantType(arg_pos, *arg, ExprType::kNumber, absl::StrCat(name, "()"));
            !s.ok()) {
          return s;
        }
        Emit(name == "min" ? Op::kMin : Op::kMax);
        Pop();
      }
      if (IsSymbol(",")) {
        if (absl::Status s = Next(); !s.ok()) return s;
      } else if (!IsSymbol(")")) {
        return Error(token_.begin, "expected ',' or ')'");
      }
    }
    const size_t close = token_.begin;
    if (absl::Status s = Next(); !s.ok()) return s;
    const auto arity = [&](size_t n, absl::string_view shape) -> absl::Status {
      if (args.size() == n) return absl::OkStatus();
      return Error(args.size() < n ? close : args[n].second,
                   absl::StrCat(name, " takes ", n, " argument", n == 1 ? "" : "s", ": ", shape));
    };
    const auto want = [&](size_t i, ExprType type) {
      return WantType(args[i].second, args[i].first, type,
                      absl::StrCat("argument ", i + 1, " of ", name, "()"));
    };
    absl::Status s;
    if (name == "abs" || name == "log1p") {
      if (s = arity(1, absl::StrCat(name, "(number)")); !s.ok()) return s;
      if (s = want(0, ExprType::kNumber); !s.ok()) return s;
      Emit(name == "abs" ? Op::kAbs : Op::kLog1p);
      return ExprType::kNumber;
    }
    if (name == "min" || name == "max") {
      if (args.size() < 2) {
        return Error(args.empty() ? close : args[0].second,
                     absl::StrCat(name, " takes two or more numbers"));
      }
      return ExprType::kNumber;
    }
    if (name == "contains" || name == "starts_with") {
      if (s = arity(2, absl::StrCat(name, "(string, string)")); !s.ok()) return s;
      if (s = want(0, ExprType::kString); !s.ok()) return s;
      if (s = want(1, ExprType::kString); !s.ok()) return s;
      Emit(name == "contains" ? Op::kContains : Op::kStartsWith);
      Pop();
      return ExprType::kBool;
    }
    // between(x, low, high): low <= x <= high.
    if (s = arity(3, "between(number, low, high)"); !s.ok()) return s;
    for (size_t i = 0; i < 3; ++i) {
      if (s = want(i, ExprType::kNumber); !s.ok()) return s;
    }
    Emit(Op::kBetween);
    Pop(2);
    return ExprType::kBool;
  }

  absl::string_view text_;
  const ExpressionScope& scope_;
  const SourceLocation& where_;
  size_t position_ = 0;
  Token token_;
  int depth_ = 0;
  Expression out_;
};

absl::StatusOr<Expression> Expression::Compile(std::string_view text, const ExpressionScope& scope,
                                               const SourceLocation& where) {
  return ExpressionCompiler(absl::string_view(text.data(), text.size()), scope, where).Compile();
}

Expression::StringSet::StringSet(absl::flat_hash_set<std::string> values) {
  use_packed_ = values.size() <= 64 && std::all_of(values.begin(), values.end(), [](const auto& v) {
                  return v.size() <= kPackedUpTo;
                });
  if (use_packed_) {
    for (const std::string& v : values) packed_.push_back(Pack(v));
  } else {
    hashed_ = std::move(values);
  }
}

uint64_t Expression::StringSet::Pack(std::string_view v) {
  uint64_t word = static_cast<uint64_t>(v.size()) << 56;
  for (size_t i = 0; i < v.size(); ++i)
    word |= static_cast<uint64_t>(static_cast<uint8_t>(v[i])) << (8 * i);
  return word;
}

bool Expression::StringSet::contains(std::string_view v) const {
  if (use_packed_) {
    if (v.size() > kPackedUpTo) return false;
    const uint64_t key = Pack(v);
    bool found = false;
    for (uint64_t w : packed_) found |= w == key;
    return found;
  }
  return hashed_.contains(absl::string_view(v.data(), v.size()));
}

std::string Expression::NeverTrue() const {
  if (type_ != ExprType::kBool) return "";
  // The top-level conjunction: segments between jumps-if-false that leave the expression.
  const auto end = static_cast<uint32_t>(code_.size());
  struct Bound {
    double low = -INFINITY, high = INFINITY;
    bool low_open = false, high_open = false;
  };
  absl::flat_hash_map<uint32_t, Bound> bounds;
  size_t begin = 0;
  for (size_t i = 0; i <= code_.size(); ++i) {
    if (i < code_.size() && !(code_[i].op == Op::kJumpIfFalseOrPop && code_[i].arg == end)) {
      if (code_[i].op == Op::kJumpIfTrueOrPop && code_[i].arg == end) return "";  // an "or"
      continue;
    }
    const absl::Span<const Instruction> part(code_.data() + begin, i - begin);
    begin = i + 1;
    if (part.size() == 1 && part[0].op == Op::kNumber && numbers_[part[0].arg] == 0) {
      return "it contains the constant false";
    }
    std::optional<uint32_t> slot;
    double low = -INFINITY, high = INFINITY;
    bool low_open = false, high_open = false;
    if (part.size() == 1) {
      const double c = part[0].constant;
      switch (part[0].op) {
        case Op::kInputLt:
          high = c, high_open = true;
          break;
        case Op::kInputLe:
          high = c;
          break;
        case Op::kInputGt:
          low = c, low_open = true;
          break;
        case Op::kInputGe:
          low = c;
          break;
        case Op::kInputEq:
          low = high = c;
          break;
        default:
          continue;
      }
      slot = part[0].arg;
    } else if (part.size() == 4 && part[0].op == Op::kInputNumber && part[1].op == Op::kNumber &&
               part[2].op == Op::kNumber && part[3].op == Op::kBetween) {
      slot = part[0].arg;
      low = numbers_[part[1].arg];
      high = numbers_[part[2].arg];
    } else {
      continue;
    }
    Bound& b = bounds[*slot];
    if (low > b.low || (low == b.low && low_open)) b.low = low, b.low_open = low_open;
    if (high < b.high || (high == b.high && high_open)) b.high = high, b.high_open = high_open;
    if (b.low > b.high || (b.low == b.high && (b.low_open || b.high_open))) {
      std::string name = "an input";
      for (const auto& [s, n] : number_names_) {
        if (s == *slot) name = n;
      }
      return absl::StrCat("no value of ", name, " satisfies its comparisons (",
                          b.low_open ? "> " : ">= ", b.low, " and ",
                          b.high_open ? "< " : "<= ", b.high, ")");
    }
  }
  return "";
}

double Expression::Run(const EvalInputs& inputs) const {
  // Numbers and booleans (0 or 1) share one stack, strings have their own; the compiler bounds
  // both by kMaxStack.
  // Left uninitialized: std::string_view's constructor would clear the whole stack per call.
  struct Text {
    const char* data;
    size_t size;
    Text& operator=(std::string_view v) {
      data = v.data();
      size = v.size();
      return *this;
    }
    operator std::string_view() const { return {data, size}; }
  };
  double n[kMaxStack];
  Text s[kMaxStack];
  if (code_.empty()) return 0;  // default-constructed: false
  int top = -1, stop = -1;
  const size_t size = code_.size();
  for (size_t pc = 0; pc < size; ++pc) {
    const Instruction& in = code_[pc];
    switch (in.op) {
      case Op::kNumber:
        n[++top] = numbers_[in.arg];
        break;
      case Op::kInputNumber:
        n[++top] = inputs.numbers[in.arg];
        break;
      case Op::kString:
        s[++stop] = strings_[in.arg];
        break;
      case Op::kInputString:
        s[++stop] = inputs.strings[in.arg];
        break;
      case Op::kNeg:
        n[top] = -n[top];
        break;
      case Op::kAdd:
        --top;
        n[top] += n[top + 1];
        break;
      case Op::kSub:
        --top;
        n[top] -= n[top + 1];
        break;
      case Op::kMul:
        --top;
        n[top] *= n[top + 1];
        break;
      case Op::kDiv:
        --top;
        n[top] /= n[top + 1];
        break;
      case Op::kMod:
        --top;
        n[top] = std::fmod(n[top], n[top + 1]);
        break;
      case Op::kLt:
        --top;
        n[top] = n[top] < n[top + 1];
        break;
      case Op::kLe:
        --top;
        n[top] = n[top] <= n[top + 1];
        break;
      case Op::kGt:
        --top;
        n[top] = n[top] > n[top + 1];
        break;
      case Op::kGe:
        --top;
        n[top] = n[top] >= n[top + 1];
        break;
      case Op::kEq:
        --top;
        n[top] = n[top] == n[top + 1];
        break;
      case Op::kNe:
        --top;
        n[top] = n[top] != n[top + 1];
        break;
      case Op::kStrEq:
        stop -= 2;
        n[++top] = std::string_view(s[stop + 1]) == std::string_view(s[stop + 2]);
        break;
      case Op::kStrNe:
        stop -= 2;
        n[++top] = std::string_view(s[stop + 1]) != std::string_view(s[stop + 2]);
        break;
      case Op::kNot:
        n[top] = n[top] == 0;
        break;
      case Op::kJumpIfFalseOrPop:
        if (n[top] == 0) {
          pc = in.arg - 1;
        } else {
          --top;
        }
        break;
      case Op::kJumpIfTrueOrPop:
        if (n[top] != 0) {
          pc = in.arg - 1;
        } else {
          --top;
        }
        break;
      case Op::kInStrings: {
        const std::string_view v = s[stop--];
        n[++top] = string_sets_[in.arg].contains(v);
        break;
      }
      case Op::kInNumbers:
        n[top] = number_sets_[in.arg].contains(n[top]);
        break;
      case Op::kAbs:
        n[top] = std::abs(n[top]);
        break;
      case Op::kLog1p:
        n[top] = std::log1p(n[top]);
        break;
      // A missing (NaN) argument makes the result missing, as in arithmetic.
      case Op::kMin:
        --top;
        if (n[top + 1] < n[top] || std::isnan(n[top + 1])) n[top] = n[top + 1];
        break;
      case Op::kMax:
        --top;
        if (n[top + 1] > n[top] || std::isnan(n[top + 1])) n[top] = n[top + 1];
        break;
      case Op::kContains:
        stop -= 2;
        n[++top] = std::string_view(s[stop + 1]).find(std::string_view(s[stop + 2])) !=
                   std::string_view::npos;
        break;
      case Op::kStartsWith:
        stop -= 2;
        n[++top] = std::string_view(s[stop + 1]).starts_with(std::string_view(s[stop + 2]));
        break;
      case Op::kBetween:
        top -= 2;
        n[top] = n[top + 1] <= n[top] && n[top] <= n[top + 2];
        break;
      case Op::kInputLt:
        n[++top] = inputs.numbers[in.arg] < in.constant;
        break;
      case Op::kInputLe:
        n[++top] = inputs.numbers[in.arg] <= in.constant;
        break;
      case Op::kInputGt:
        n[++top] = inputs.numbers[in.arg] > in.constant;
        break;
      case Op::kInputGe:
        n[++top] = inputs.numbers[in.arg] >= in.constant;
        break;
      case Op::kInputEq:
        n[++top] = inputs.numbers[in.arg] == in.constant;
        break;
      case Op::kInputNe:
        n[++top] = inputs.numbers[in.arg] != in.constant;
        break;
      case Op::kInputInStrings: {
        const std::string_view v = inputs.strings[in.arg];
        n[++top] = string_sets_[static_cast<size_t>(in.constant)].contains(v);
        break;
      }
    }
  }
  return n[0];
}

}  // namespace vigil
