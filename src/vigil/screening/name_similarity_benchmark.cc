// Cost of one name comparison: Jaro-Winkler of two 12-byte names, and TokenSimilarity of two
// 3-token names (pre-split, as a screening index would hold them).
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/screening/jaro_winkler.h"
#include "vigil/screening/name_similarity.h"

namespace vigil::screening {
namespace {

void BM_JaroWinkler12Bytes(benchmark::State& state) {
  std::string_view a = "mohammed ali";
  std::string_view b = "muhamad alli";
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(JaroWinklerSimilarity(a, b));
  }
}
BENCHMARK(BM_JaroWinkler12Bytes);

void BM_TokenSimilarity3x3(benchmark::State& state) {
  const std::vector<std::string_view> query = SplitTokens("nicolas maduro moros");
  const std::vector<std::string_view> candidate = SplitTokens("nicolas moros maduro");
  for (auto _ : state) {
    benchmark::DoNotOptimize(TokenSimilarity(query, candidate));
  }
}
BENCHMARK(BM_TokenSimilarity3x3);

void BM_TokenSimilarity3x3Different(benchmark::State& state) {
  const std::vector<std::string_view> query = SplitTokens("seyed mohammad hashemi");
  const std::vector<std::string_view> candidate = SplitTokens("seyyed mohamad atabak");
  for (auto _ : state) {
    benchmark::DoNotOptimize(TokenSimilarity(query, candidate));
  }
}
BENCHMARK(BM_TokenSimilarity3x3Different);

}  // namespace
}  // namespace vigil::screening

BENCHMARK_MAIN();
