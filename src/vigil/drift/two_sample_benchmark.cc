// A window of 1,000 values against a reference of 100,000 (sorted once, outside the timing):
// the KS statistic and p-value (asymptotic at these sizes, as scipy's auto rule) and
// Wasserstein-1. The peer is scipy's ks_2samp + wasserstein_distance on the same sizes (about
// 24 ms on the development machine; docs/benchmarks.md).
#include <algorithm>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/drift/two_sample.h"

namespace vigil::drift {
namespace {

void BM_WindowAgainstReference(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0)), m = static_cast<size_t>(state.range(1));
  std::mt19937_64 rng(1);
  std::normal_distribution<double> base(0, 1), moved(0.1, 1.1);
  std::vector<double> ref(n), window(m);
  for (double& v : ref) v = base(rng);
  for (double& v : window) v = moved(rng);
  const ReferenceSample reference(ref);
  for (auto _ : state) {
    std::vector<double> live = window;  // a window arrives unsorted
    std::sort(live.begin(), live.end());
    const double ks = KsStatistic(reference, live);
    benchmark::DoNotOptimize(KsPValue(reference.size(), live.size(), ks));
    benchmark::DoNotOptimize(Wasserstein1(reference, live));
  }
}
BENCHMARK(BM_WindowAgainstReference)->Args({100'000, 1'000})->Args({100'000, 100})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vigil::drift

BENCHMARK_MAIN();
