// Cost of recording latencies (every transaction, every stage) and of reading them back.
//
// Measure with an optimized build (RelWithDebInfo or Release); under ctest this is a smoke run.
// BM_LatencyHistogram_Record is the candidate; BM_PlainBucketArray_Record, a non-atomic
// increment of the same bucket index, is the floor it is compared with. The threaded variants
// show what sharing one histogram across cores costs (the reason to keep one per worker).
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/metrics/latency_histogram.h"
#include "vigil/metrics/metrics_registry.h"

namespace vigil {
namespace {

// Latency-shaped inputs (log-normal around 40 us), built once with a fixed seed.
const std::vector<std::chrono::nanoseconds>& Samples() {
  static const auto* samples = [] {
    auto* v = new std::vector<std::chrono::nanoseconds>(4096);
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> dist(std::log(40'000.0), 0.8);
    for (auto& s : *v) s = std::chrono::nanoseconds(static_cast<int64_t>(dist(rng)));
    return v;
  }();
  return *samples;
}

void BM_LatencyHistogram_Record(benchmark::State& state) {
  // One histogram for all threads of a run. The benchmark loop starts and ends with a barrier
  // across threads, so thread 0 creates it before any thread records and deletes it after.
  static LatencyHistogram* shared = nullptr;
  if (state.thread_index() == 0) shared = new LatencyHistogram();
  const auto& samples = Samples();
  size_t i = static_cast<size_t>(state.thread_index()) * 997;
  for (auto _ : state) {
    shared->Record(samples[i++ & 4095]);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    benchmark::DoNotOptimize(shared->count());
    delete shared;
    shared = nullptr;
  }
}
BENCHMARK(BM_LatencyHistogram_Record)->Threads(1)->Threads(2);

// One histogram per thread, the recommended layout for hot multi-core paths.
void BM_LatencyHistogram_RecordPerThread(benchmark::State& state) {
  LatencyHistogram h;
  const auto& samples = Samples();
  size_t i = 0;
  for (auto _ : state) h.Record(samples[i++ & 4095]);
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LatencyHistogram_RecordPerThread)->Threads(1)->Threads(2);

// Baseline: the same bucket index and a plain (single-threaded, non-atomic) increment.
void BM_PlainBucketArray_Record(benchmark::State& state) {
  std::vector<uint64_t> buckets(LatencyHistogram::kNumBuckets);
  uint64_t sum = 0;
  const auto& samples = Samples();
  size_t i = 0;
  for (auto _ : state) {
    const uint64_t v = static_cast<uint64_t>(samples[i++ & 4095].count());
    ++buckets[LatencyHistogram::BucketIndex(v)];
    sum += v;
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlainBucketArray_Record);

void BM_LatencyHistogram_Percentile(benchmark::State& state) {
  LatencyHistogram h;
  for (int r = 0; r < 100; ++r) {
    for (auto s : Samples()) h.Record(s);
  }
  for (auto _ : state) benchmark::DoNotOptimize(h.Percentile(99));
}
BENCHMARK(BM_LatencyHistogram_Percentile);

// A /metrics scrape: 8 stage histograms and 3 counters.
void BM_MetricsRegistry_Render(benchmark::State& state) {
  MetricsRegistry registry;
  for (const char* stage :
       {"ingest", "features", "rules", "model", "screening", "decide", "audit", "total"}) {
    LatencyHistogram* h =
        *registry.AddHistogram("vigil_stage_latency_seconds", "Stage latency.", {{"stage", stage}});
    for (auto s : Samples()) h->Record(s);
  }
  for (const char* action : {"ALLOW", "REVIEW", "BLOCK"}) {
    (*registry.AddCounter("vigil_decisions_total", "Decisions.", {{"action", action}}))
        ->Increment(1000);
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = registry.RenderPrometheusText();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_MetricsRegistry_Render);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
