// Throughput of EventTimeOrderer: Add() every record, Finish(), Next() every record; 1M records of
// 100-byte payloads with random event times (the worst case for the sort).
//
// Measure with an optimized build (`make bench`: RelWithDebInfo); Debug and sanitizer numbers mean
// nothing. ctest's .smoke run sets VIGIL_BENCH_SMOKE=1, which shrinks the input to 10k records.
// The spilled case writes to $TMPDIR (else /tmp), so it measures that disk, mostly its page cache.
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/ingest/event_time_orderer.h"

namespace vigil {
namespace {

constexpr size_t kPayloadBytes = 100;

int RecordCount() {
  const char* smoke = std::getenv("VIGIL_BENCH_SMOKE");
  return (smoke != nullptr && *smoke == '1') ? 10'000 : 1'000'000;
}

struct Input {
  std::vector<int64_t> times;
  std::string bytes;  // payload i is the 100 bytes at offset i % kWindow

  static constexpr size_t kWindow = 1 << 20;
  std::string_view Payload(size_t i) const {
    return std::string_view(bytes).substr(i % kWindow, kPayloadBytes);
  }
};

// Built once, with a fixed seed: event times uniform over one day, so about 12 records share
// each second and nearly every record is out of order.
const Input& GetInput() {
  static const Input* const input = [] {
    auto* in = new Input;
    std::mt19937_64 rng(20240901);
    std::uniform_int_distribution<int64_t> time(0, int64_t{86'400} * 1'000'000 - 1);
    const int n = RecordCount();
    in->times.reserve(n);
    for (int i = 0; i < n; ++i) in->times.push_back(time(rng) / 1'000'000 * 1'000'000);
    std::uniform_int_distribution<int> byte(0, 255);
    in->bytes.resize(Input::kWindow + kPayloadBytes);
    for (char& c : in->bytes) c = static_cast<char>(byte(rng));
    return in;
  }();
  return *input;
}

void RunOrderer(benchmark::State& state, size_t memory_budget_bytes) {
  const Input& input = GetInput();
  const int n = static_cast<int>(input.times.size());
  EventTimeOrderer::Options options;
  options.memory_budget_bytes = memory_budget_bytes;
  EventTimeOrderer::Stats stats;
  for (auto _ : state) {
    EventTimeOrderer orderer(options);
    for (int i = 0; i < n; ++i) {
      if (absl::Status s = orderer.Add(input.times[i], i, input.Payload(i)); !s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        return;
      }
    }
    if (absl::Status s = orderer.Finish(); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    EventTimeOrderer::Record record;
    int64_t checksum = 0;
    while (true) {
      absl::StatusOr<bool> more = orderer.Next(&record);
      if (!more.ok()) {
        state.SkipWithError(more.status().ToString().c_str());
        return;
      }
      if (!*more) break;
      checksum += record.sequence + record.payload.size();
    }
    benchmark::DoNotOptimize(checksum);
    stats = orderer.stats();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<int64_t>(kPayloadBytes));
  state.counters["runs_spilled"] = static_cast<double>(stats.runs_spilled);
  state.counters["MiB_spilled"] = static_cast<double>(stats.bytes_spilled) / (1 << 20);
}

// Everything fits in the default 256 MiB budget: one sort, no I/O.
void BM_EventTimeOrderer_InMemory(benchmark::State& state) {
  RunOrderer(state, EventTimeOrderer::Options().memory_budget_bytes);
}
BENCHMARK(BM_EventTimeOrderer_InMemory)->Unit(benchmark::kMillisecond)->UseRealTime();

// A budget of 16 bytes per record (16 MiB for 1M records; the data is ~130 MiB): about 9 runs
// written, then read back through a 9-way merge.
void BM_EventTimeOrderer_Spilled(benchmark::State& state) {
  RunOrderer(state, static_cast<size_t>(RecordCount()) * 16);
}
BENCHMARK(BM_EventTimeOrderer_Spilled)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: the obvious in-memory way, one std::string per record and std::stable_sort.
void BM_StableSortOfStrings_InMemory(benchmark::State& state) {
  struct Owned {
    int64_t event_time_us;
    int64_t sequence;
    std::string payload;
  };
  const Input& input = GetInput();
  const int n = static_cast<int>(input.times.size());
  for (auto _ : state) {
    std::vector<Owned> records;
    for (int i = 0; i < n; ++i) {
      records.push_back({input.times[i], i, std::string(input.Payload(i))});
    }
    std::stable_sort(records.begin(), records.end(), [](const Owned& a, const Owned& b) {
      return a.event_time_us < b.event_time_us;
    });
    std::string out;
    int64_t checksum = 0;
    for (const Owned& r : records) {
      out.assign(r.payload);
      checksum += r.sequence + out.size();
    }
    benchmark::DoNotOptimize(checksum);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<int64_t>(kPayloadBytes));
}
BENCHMARK(BM_StableSortOfStrings_InMemory)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
