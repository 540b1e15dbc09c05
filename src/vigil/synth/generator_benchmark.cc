// Benchmarks of the synthetic stream generator. Build with optimization (RelWithDebInfo or
// Release); a Debug build measures nothing useful. Under ctest this runs once as a smoke test.
//
//   /tmp/build-synth/src/vigil/synth/synth_benchmark --benchmark_filter=Generate
//
// items_per_second is rows per second, CSV formatting included; the output goes to a discarding
// stream, so disk speed is not part of it (time a real file with `vigil gen`, docs/generator.md).
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/common/check.h"
#include "vigil/synth/generator.h"
#include "vigil/synth/internal/fx_converter.h"
#include "vigil/synth/internal/normal_traffic.h"
#include "vigil/synth/internal/population.h"

namespace vigil::synth {
namespace {

// A stream that counts and discards what is written.
class NullBuffer : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

// data/fx_rates.csv of the checkout: $VIGIL_SOURCE_DIR (set by ctest), else the configured tree.
const FxRates& Rates() {
  static const FxRates* const rates = [] {
    const char* env = std::getenv("VIGIL_SOURCE_DIR");
    const std::string dir = env != nullptr && *env != '\0' ? env : VIGIL_SYNTH_SOURCE_DIR;
    absl::StatusOr<FxRates> r = FxRates::LoadFile(dir + "/data/fx_rates.csv");
    VIGIL_CHECK(r.ok());
    return new FxRates(*std::move(r));
  }();
  return *rates;
}

// The whole generator: population, traffic, laundering at the default rate, CSV formatting.
void BM_Generator_Csv(benchmark::State& state) {
  GeneratorOptions options;
  options.accounts = state.range(0);
  options.days = static_cast<int>(state.range(1));
  options.seed = 7;
  NullBuffer null;
  std::ostream out(&null);
  int64_t rows = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<GeneratorStats> stats = GenerateTransactions(options, Rates(), out);
    VIGIL_CHECK(stats.ok());
    rows += stats->rows;
    bytes += stats->bytes;
  }
  state.SetItemsProcessed(rows);
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_Generator_Csv)
    ->Args({10000, 20})   // ~0.1M rows
    ->Args({100000, 20})  // ~1M rows
    ->Unit(benchmark::kMillisecond);

// Baseline without formatting: drawing one day of normal traffic into SynthRows.
void BM_NormalTraffic_Day(benchmark::State& state) {
  absl::StatusOr<internal::FxConverter> fx = internal::FxConverter::Create(Rates());
  VIGIL_CHECK(fx.ok());
  absl::StatusOr<internal::Population> population =
      internal::Population::Build(state.range(0), 7, *fx);
  VIGIL_CHECK(population.ok());
  internal::NormalTraffic traffic(&*population, &*fx, 7);
  std::vector<internal::SynthRow> rows;
  int64_t total = 0;
  int day = 0;
  for (auto _ : state) {
    rows.clear();
    traffic.GenerateDay(day % 28, 19236 + day % 28, &rows);
    ++day;
    total += static_cast<int64_t>(rows.size());
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(total);
}
BENCHMARK(BM_NormalTraffic_Day)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil::synth

BENCHMARK_MAIN();
