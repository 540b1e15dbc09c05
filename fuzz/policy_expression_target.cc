// Fuzz target: Expression::Compile, the policy language's compiler (rules' "when" clauses
// written by analysts, loaded from YAML), and Evaluate on what it compiles.

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_targets.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/rules/expression.h"
#include "vigil/rules/policy_inputs.h"

namespace vigil::fuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The scope a policy's rules compile against (policy.cc): the input layout, the list library,
// and policies/default.yaml's constants, plus lists of each representation (packed short
// strings, hashed ones, numbers).
struct PolicyScope {
  PolicyInputLayout layout{FeatureExtractor::Schema()};
  ExpressionScope scope;

  PolicyScope() {
    FUZZ_CHECK(layout.AddTo(scope).ok());
    FUZZ_CHECK(scope.AddConstant("reporting_threshold", 10000).ok());
    FUZZ_CHECK(scope.AddConstant("one_day", 86400).ok());
    FUZZ_CHECK(scope.AddConstant("dormant_seconds", 15552000).ok());
    FUZZ_CHECK(scope.AddStringList("fatf_call_for_action", {"KP", "IR", "MM"}).ok());
    const std::vector<std::string> grey = {"DZ", "AO", "BG", "BF", "CM", "CI", "HR", "CD", "HT"};
    FUZZ_CHECK(scope.AddStringList("fatf_increased_monitoring", grey).ok());
    std::vector<std::string> large;
    for (int i = 0; i < 40; ++i) large.push_back(absl::StrCat("C", i));
    large.push_back("IR");
    FUZZ_CHECK(scope.AddStringList("large_list", std::move(large)).ok());
    FUZZ_CHECK(scope.AddStringList("long_list", {"IR", "a string longer than seven bytes"}).ok());
    FUZZ_CHECK(scope.AddNumberList("round_amounts", {1000, 5000, 10000}).ok());
  }
};

// Numbers written in the text: rows at and around them reach the edges of its comparisons.
std::vector<double> Literals(std::string_view text) {
  std::vector<double> values;
  const std::string copy(text);  // strtod needs a terminator
  for (size_t i = 0; i < copy.size() && values.size() < 8; ++i) {
    const char c = copy[i];
    const bool starts_number = (c >= '0' && c <= '9') || (c == '.' && i + 1 < copy.size() &&
                                                          copy[i + 1] >= '0' && copy[i + 1] <= '9');
    if (!starts_number) continue;
    char* end = nullptr;
    values.push_back(std::strtod(copy.c_str() + i, &end));
    i = static_cast<size_t>(end - copy.c_str());
  }
  return values;
}

// Evaluates "e" with every number input set to each of "values" and a few string rows.
// Expression::NeverTrue() claims no input makes the expression true: every row must agree.
void EvaluateRows(const Expression& e, const PolicyInputLayout& layout,
                  const std::vector<double>& values) {
  const std::string never_true = e.NeverTrue();
  const std::string_view string_rows[][kNumPolicyStrings] = {
      {"", "", "", "", "", "", "", "", ""},
      {"USD", "EUR", "IR", "KP", "DEUTDEFF", "COBADEFFXXX", "wire", "online", "Invoice 77"},
      {"a string longer than seven bytes", "C7", "C39", "IR", "IRL", "I", "credit_card", "api",
       "consulting"}};
  std::vector<double> numbers(layout.number_count());
  for (size_t v = 0; v < values.size(); ++v) {
    for (size_t s = 0; s < numbers.size(); ++s) numbers[s] = values[v];
    const auto& strings = string_rows[v % std::size(string_rows)];
    const EvalInputs inputs{numbers, strings};
    if (e.type() == ExprType::kBool) {
      const bool result = e.EvaluateBool(inputs);
      FUZZ_CHECK(!(result && !never_true.empty()));
    } else if (e.type() == ExprType::kNumber) {
      (void)e.EvaluateNumber(inputs);
    }
  }
}

}  // namespace

int FuzzPolicyExpression(const uint8_t* data, size_t size) {
  static const PolicyScope& policy = *new PolicyScope();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A YAML block scalar's position: line 30, column 11, later lines indented by 6.
  const absl::StatusOr<Expression> e =
      Expression::Compile(text, policy.scope, {"policies/fuzz.yaml", 30, 11, 6});
  if (!e.ok()) {
    FUZZ_CHECK(e.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StrContains(e.status().message(), "policies/fuzz.yaml:"));
    return 0;
  }
  FUZZ_CHECK(e->number_slots() <= policy.layout.number_count());
  FUZZ_CHECK(e->string_slots() <= PolicyInputLayout::string_count());
  for (const std::string& name : e->names()) {
    const ExpressionScope::Entry* entry = policy.scope.Find(name);
    FUZZ_CHECK(entry != nullptr);
    FUZZ_CHECK(entry->type == ExprType::kNumber || entry->type == ExprType::kString);
    FUZZ_CHECK(!entry->constant);
  }
  std::vector<double> values = {0, -0.0, 1, -1, 0.5, 9500, 1e308, -1e308, kInf, -kInf, kNaN};
  for (double v : Literals(text)) {
    for (double w : {v, -v, std::nextafter(v, kInf), std::nextafter(v, -kInf)}) {
      values.push_back(w);
    }
  }
  EvaluateRows(*e, policy.layout, values);
  return 0;
}

}  // namespace vigil::fuzz
