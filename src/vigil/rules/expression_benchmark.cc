// Cost of evaluating compiled policy expressions: ns per typical rule (target ≤ 50 ns), next to
// the floor of the same rule written in C++ (BM_NativeRule).
//
// Build with optimisation (make build) and run:
//   build/src/vigil/rules/expression_benchmark
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/rules/expression.h"

namespace vigil {
namespace {

struct Setup {
  ExpressionScope scope;
  std::vector<double> numbers = {9500, 4, 0.82, 3, 120};
  std::vector<std::string_view> strings = {"IR", "Invoice 77 consulting"};
  Setup() {
    (void)scope.AddNumber("amount", 0);
    (void)scope.AddNumber("count_24h", 1);
    (void)scope.AddNumber("score", 2);
    (void)scope.AddNumber("fan_out_1h", 3);
    (void)scope.AddNumber("dormant_days", 4);
    (void)scope.AddString("country", 0);
    (void)scope.AddString("remittance", 1);
    (void)scope.AddStringList("high_risk_countries",
                              {"IR", "KP", "MM", "AF", "SY", "YE", "VE", "RU", "BY", "CU"});
    (void)scope.AddNumberList("watched_counts", {1, 2, 3, 5, 8, 13, 21, 34, 55, 89});
  }
};

// Typical rule shapes from a policy: a structuring band, a jurisdiction test, a burst, a text
// search, and membership in a number list (named and literal).
constexpr std::string_view kRules[] = {
    "amount >= 9000 and amount < 10000 and count_24h >= 3",
    "country in high_risk_countries and amount > 5000",
    "fan_out_1h >= 10 or (dormant_days > 90 and amount > 2000)",
    "contains(remittance, 'consult') and score > 0.5",
    "count_24h in watched_counts and amount > 5000",
    "fan_out_1h in [3, 7, 11, 19] and score > 0.5",
};

void BM_TypicalRule(benchmark::State& state) {
  Setup s;
  const auto rule = Expression::Compile(kRules[state.range(0)], s.scope, {"bench", 1, 1});
  if (!rule.ok()) {
    state.SkipWithError(std::string(rule.status().message()).c_str());
    return;
  }
  const EvalInputs inputs{s.numbers, s.strings};
  for (auto _ : state) benchmark::DoNotOptimize(rule->EvaluateBool(inputs));
  state.SetLabel(std::string(kRules[state.range(0)]));
}
BENCHMARK(BM_TypicalRule)->DenseRange(0, 5);

// The floor: rule 0 written in C++ against the same inputs (what a compiled rule would cost).
void BM_NativeRule(benchmark::State& state) {
  Setup s;
  const EvalInputs inputs{s.numbers, s.strings};
  for (auto _ : state) {
    benchmark::DoNotOptimize(inputs.numbers.data());
    const double amount = inputs.numbers[0], count = inputs.numbers[1];
    benchmark::DoNotOptimize(amount >= 9000 && amount < 10000 && count >= 3);
  }
}
BENCHMARK(BM_NativeRule);

// A policy of 50 rules (the four shapes, with varied constants), all evaluated per decision.
void BM_PolicyOf50Rules(benchmark::State& state) {
  Setup s;
  std::vector<Expression> rules;
  for (int i = 0; i < 50; ++i) {
    std::string text(kRules[i % 4]);
    text += " and amount != " + std::to_string(i);
    auto rule = Expression::Compile(text, s.scope, {"bench", 1, 1});
    if (!rule.ok()) {
      state.SkipWithError(std::string(rule.status().message()).c_str());
      return;
    }
    rules.push_back(*std::move(rule));
  }
  const EvalInputs inputs{s.numbers, s.strings};
  for (auto _ : state) {
    int fired = 0;
    for (const Expression& rule : rules) fired += rule.EvaluateBool(inputs);
    benchmark::DoNotOptimize(fired);
  }
  state.counters["ns_per_rule"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 50 / 1e9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PolicyOf50Rules);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
