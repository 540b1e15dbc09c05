// Expression: one compiled policy expression (a rule's "when", a value a reason cites).
//
// The language (grammar in docs/policy.md): numbers, 'strings', true/false, names from an
// ExpressionScope, [lists], arithmetic (+ - * / %), comparisons (< <= > >= == !=), `in` and
// `not in` against a list, and/or/not, and the functions abs, min, max, log1p, contains,
// starts_with and between. Names and types are checked when the expression is compiled; an error
// names file:line:column, shows the line with a caret under the spot and, for an unknown name,
// the nearest known one. A compiled expression evaluates with no allocation and no error path.
//
// Missing values: a number input that is NaN (a feature that could not be computed) makes every
// comparison with it false, as IEEE 754 has it, and arithmetic with it NaN; a rule therefore
// does not fire on a missing value unless it says `not`.
//
// Thread safety: ExpressionScope and Expression are immutable once built; Evaluate may run
// concurrently.
#ifndef VIGIL_RULES_EXPRESSION_H_
#define VIGIL_RULES_EXPRESSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace vigil {

namespace rules_internal {
class ExpressionCompiler;
}  // namespace rules_internal

enum class ExprType : uint8_t { kNumber, kBool, kString, kNumberList, kStringList };
std::string_view ExprTypeName(ExprType type);  // "number", "boolean", "string", ...

// Where an expression's text starts, for error messages.
struct SourceLocation {
  std::string file;  // e.g. "policies/default.yaml"
  int line = 1;      // 1-based
  int column = 1;    // 1-based
  // Columns before the text on its later lines (a YAML block scalar's indentation).
  int indent = 0;
};

// The names an expression may use. Inputs are read at evaluation from EvalInputs by slot;
// lists are constants of the policy (named lists).
class ExpressionScope {
 public:
  // Each fails if the name is taken, is a keyword or function name, or is not [a-z_][a-z0-9_]*.
  absl::Status AddNumber(std::string name, uint32_t slot);
  absl::Status AddString(std::string name, uint32_t slot);
  absl::Status AddStringList(std::string name, std::vector<std::string> values);
  absl::Status AddNumberList(std::string name, std::vector<double> values);
  // A named number fixed by the policy (e.g. reporting_threshold): compiled in as a constant.
  absl::Status AddConstant(std::string name, double value);

  struct Entry {
    ExprType type;
    uint32_t slot = 0;                 // inputs
    bool constant = false;             // a number constant: its value is numbers[0]
    std::vector<std::string> strings;  // string lists
    std::vector<double> numbers;       // number lists
  };
  const Entry* Find(std::string_view name) const;
  // Every name, for "did you mean" hints.
  std::vector<std::string> Names() const;

 private:
  absl::Status Add(std::string name, Entry entry);
  absl::flat_hash_map<std::string, Entry> entries_;
};

// What an expression reads when evaluated: numbers[slot] and strings[slot] for the slots its
// scope declared. The caller keeps them alive for the call.
struct EvalInputs {
  absl::Span<const double> numbers;
  absl::Span<const std::string_view> strings;
};

class Expression {
 public:
  // Evaluates to false: the value of a PolicyRule before its compiled condition is assigned.
  Expression() = default;

  // Parses and type-checks "text" against "scope". "where" is the position of text's first
  // character in its file. The error (kInvalidArgument) is the formatted message described in
  // the file comment.
  static absl::StatusOr<Expression> Compile(std::string_view text, const ExpressionScope& scope,
                                            const SourceLocation& where);

  ExprType type() const { return type_; }
  // The highest number and string slots read, plus one (0 when none): the sizes EvalInputs
  // must have at least.
  uint32_t number_slots() const { return number_slots_; }
  uint32_t string_slots() const { return string_slots_; }
  // Input names the expression reads, in order of first use.
  const std::vector<std::string>& names() const { return names_; }

  // A reason the expression can never be true, when a simple analysis finds one: a constant
  // false, or a conjunction whose comparisons of one input with constants leave no value
  // (e.g. "amount > 10 and amount < 5"). Empty when none is found (which proves nothing).
  std::string NeverTrue() const;

  // REQUIRES: type() == kBool, and inputs as large as the slots above.
  bool EvaluateBool(const EvalInputs& inputs) const { return Run(inputs) != 0; }
  // REQUIRES: type() == kNumber.
  double EvaluateNumber(const EvalInputs& inputs) const { return Run(inputs); }

  // Deepest operand stack any expression may need; deeper nesting is a compile error.
  static constexpr int kMaxStack = 64;

  enum class Op : uint8_t;
  struct Instruction {
    Op op;
    uint32_t arg = 0;     // slot, constant index, set index or jump target
    double constant = 0;  // the constant of a fused "input <op> constant" comparison
  };

 private:
  friend class rules_internal::ExpressionCompiler;
  double Run(const EvalInputs& inputs) const;

  ExprType type_ = ExprType::kBool;
  std::vector<Instruction> code_;
  std::vector<double> numbers_;  // constants
  std::vector<std::string> strings_;
  // A list after `in`. Lists of short strings (country, currency codes: at most 7 bytes) are
  // packed into 64-bit words (the bytes and the length) and scanned; others are hashed.
  class StringSet {
   public:
    explicit StringSet(absl::flat_hash_set<std::string> values);
    bool contains(std::string_view v) const;

   private:
    static constexpr size_t kPackedUpTo = 7;
    static uint64_t Pack(std::string_view v);  // REQUIRES: v.size() <= kPackedUpTo
    std::vector<uint64_t> packed_;
    absl::flat_hash_set<std::string> hashed_;
    bool use_packed_ = true;
  };
  std::vector<StringSet> string_sets_;
  std::vector<absl::flat_hash_set<double>> number_sets_;
  std::vector<std::string> names_;
  std::vector<std::pair<uint32_t, std::string>> number_names_;  // slot → name, as read
  uint32_t number_slots_ = 0;
  uint32_t string_slots_ = 0;
};

}  // namespace vigil

#endif  // VIGIL_RULES_EXPRESSION_H_
