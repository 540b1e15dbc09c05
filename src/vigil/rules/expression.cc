#include "vigil/rules/expression.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "vigil/common/status_macros.h"
#include "vigil/rules/internal/expression_checker.h"
#include "vigil/rules/internal/expression_compiler.h"
#include "vigil/rules/internal/expression_parser.h"
#include "vigil/rules/internal/expression_source.h"

namespace vigil {

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

}  // namespace

absl::Status ExpressionScope::Add(std::string name, Entry entry) {
  if (!IsIdentifier(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("name '", name, "' is not an identifier ([a-z_][a-z0-9_]*)"));
  }
  if (rules_internal::IsReservedName(name)) {
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

// Three stages (internal/): syntax, then names and types, then code. The checker reports the
// parser's syntax error only once it has checked what was read before it, so that the first
// error in reading order is the one reported, as a reader meets them.
absl::StatusOr<Expression> Expression::Compile(std::string_view text, const ExpressionScope& scope,
                                               const SourceLocation& where) {
  const rules_internal::ExpressionSource source(text, where);
  VIGIL_ASSIGN_OR_RETURN(
      rules_internal::CheckedExpression checked,
      rules_internal::CheckExpression(rules_internal::ParseExpression(source), scope, source));
  return rules_internal::ExpressionCompiler::Compile(checked);
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
      // find() rather than contains(): GCC inlines the one into this loop but, depending on what
      // else the file holds, leaves the other a call (about 2 ns per lookup).
      case Op::kInNumbers:
        n[top] = number_sets_[in.arg].find(n[top]) != number_sets_[in.arg].end();
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
