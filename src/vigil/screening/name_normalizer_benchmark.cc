// Cost of normalizing one name (run with CMAKE_BUILD_TYPE=Release): the ASCII fast path, with
// the output reused (NormalizeInto) and with a fresh NormalizedName per call (Normalize), next
// to Cyrillic, Arabic, Han and Hangul names that go through ICU.
#include <memory>
#include <string_view>

#include "benchmark/benchmark.h"
#include "vigil/common/check.h"
#include "vigil/screening/name_normalizer.h"

namespace vigil::screening {
namespace {

const NameNormalizer& Normalizer() {
  static const auto* const kNormalizer = [] {
    auto n = NameNormalizer::Create(NormalizerOptions::Defaults());
    VIGIL_CHECK(n.ok());
    return new std::shared_ptr<const NameNormalizer>(*std::move(n));
  }();
  return **kNormalizer;
}

void RunNormalizeInto(benchmark::State& state, std::string_view name) {
  const NameNormalizer& normalizer = Normalizer();
  NormalizedName out;
  normalizer.NormalizeInto(name, out);  // Warms the output's capacity and ICU's clones.
  for (auto _ : state) {
    normalizer.NormalizeInto(name, out);
    benchmark::DoNotOptimize(out.sorted_key.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_NameNormalizer_Ascii3Tokens(benchmark::State& state) {
  RunNormalizeInto(state, "ZAWAHIRI, Ayman al-");
}
BENCHMARK(BM_NameNormalizer_Ascii3Tokens);

// The same with a stopword, a variant and a dotted legal form to resolve.
void BM_NameNormalizer_AsciiStopwordsAndVariants(benchmark::State& state) {
  RunNormalizeInto(state, "Dr. Mohammed Ali Trading Co. S.A.");
}
BENCHMARK(BM_NameNormalizer_AsciiStopwordsAndVariants);

// Baseline for the reuse: a new NormalizedName, its vector and strings, every call.
void BM_NameNormalizer_Ascii3TokensFreshOutput(benchmark::State& state) {
  const NameNormalizer& normalizer = Normalizer();
  for (auto _ : state) {
    NormalizedName out = normalizer.Normalize("ZAWAHIRI, Ayman al-");
    benchmark::DoNotOptimize(out.sorted_key.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NameNormalizer_Ascii3TokensFreshOutput);

void BM_NameNormalizer_LatinDiacritics(benchmark::State& state) {
  RunNormalizeInto(state, "Türkiye İş Bankası A.Ş.");
}
BENCHMARK(BM_NameNormalizer_LatinDiacritics);

void BM_NameNormalizer_Cyrillic(benchmark::State& state) {
  RunNormalizeInto(state, "Шойгу Сергей Кужугетович");
}
BENCHMARK(BM_NameNormalizer_Cyrillic);

void BM_NameNormalizer_Arabic(benchmark::State& state) {
  RunNormalizeInto(state, "محمد بن سلمان آل سعود");
}
BENCHMARK(BM_NameNormalizer_Arabic);

void BM_NameNormalizer_Han(benchmark::State& state) { RunNormalizeInto(state, "习近平"); }
BENCHMARK(BM_NameNormalizer_Han);

void BM_NameNormalizer_Hangul(benchmark::State& state) { RunNormalizeInto(state, "김정은"); }
BENCHMARK(BM_NameNormalizer_Hangul);

}  // namespace
}  // namespace vigil::screening

BENCHMARK_MAIN();
