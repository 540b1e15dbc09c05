// KvStore throughput: batched writes with and without fsync, and point reads.
//
// Measure with an optimized build (RelWithDebInfo or Release) on the disk that will hold the
// store: a synced write costs one fdatasync of the log, so BM_KvStore_WriteBatch/N/1 shows how
// group commit amortizes it (items/s grows with N, batches/s stays near 1 / fdatasync latency).
// Under ctest this runs once as a smoke test, not as a measurement.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "vigil/store/kv_store.h"

namespace vigil {
namespace {

constexpr size_t kValueBytes = 200;  // about one audit record or one account's feature state

// A store in a fresh temporary directory, removed on destruction.
class TempStore {
 public:
  explicit TempStore(bool sync_writes) {
    static std::atomic<int> counter{0};
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("vigil_kv_store_benchmark_", getpid(), "_", counter++);
    std::filesystem::remove_all(dir_);
    KvStoreOptions options;
    options.path = dir_.string();
    options.column_families = {"state"};
    options.sync_writes = sync_writes;
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      std::abort();
    }
    store_ = *std::move(store);
  }
  ~TempStore() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  KvStore& store() { return *store_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<KvStore> store_;
};

std::string Key(uint64_t i) { return absl::StrFormat("acct/%016x", i); }

// Args: operations per batch, sync (0/1).
void BM_KvStore_WriteBatch(benchmark::State& state) {
  const int64_t ops = state.range(0);
  const bool sync = state.range(1) != 0;
  TempStore temp(sync);
  const std::string value(kValueBytes, 'v');
  KvWriteBatch batch;
  uint64_t next = 0;
  for (auto _ : state) {
    batch.Clear();
    for (int64_t i = 0; i < ops; ++i) batch.Put("state", Key(next++), value);
    const absl::Status s = temp.store().Write(batch);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * ops);
  state.SetBytesProcessed(state.iterations() * ops * static_cast<int64_t>(kValueBytes + 21));
  state.counters["batches_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_KvStore_WriteBatch)
    ->ArgNames({"ops", "sync"})
    ->Args({1, 0})
    ->Args({64, 0})
    ->Args({1024, 0})
    ->Args({1, 1})
    ->Args({64, 1})
    ->Args({1024, 1})
    ->UseRealTime();

// Baseline for the batch: the same operations as single unbatched Puts (sync off).
void BM_KvStore_Put(benchmark::State& state) {
  TempStore temp(/*sync_writes=*/false);
  const std::string value(kValueBytes, 'v');
  uint64_t next = 0;
  for (auto _ : state) {
    const absl::Status s = temp.store().Put("state", Key(next++), value);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KvStore_Put)->UseRealTime();

// Point reads of random keys among "keys" loaded and flushed to table files. Arg 1: hits only;
// 0: misses only (keys that were never written).
void BM_KvStore_Get(benchmark::State& state) {
  constexpr uint64_t kKeys = 20000;
  const bool hit = state.range(0) != 0;
  TempStore temp(/*sync_writes=*/false);
  const std::string value(kValueBytes, 'v');
  KvWriteBatch batch;
  for (uint64_t i = 0; i < kKeys; ++i) {
    batch.Put("state", Key(2 * i), value);  // even keys exist, odd keys are misses
    if (batch.Count() == 1000) {
      if (!temp.store().Write(batch).ok()) std::abort();
      batch.Clear();
    }
  }
  if (!temp.store().Flush().ok()) std::abort();
  std::mt19937_64 rng(42);
  std::vector<std::string> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(Key(2 * (rng() % kKeys) + (hit ? 0 : 1)));
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<std::optional<std::string>> v = temp.store().Get("state", keys[i++ & 4095]);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KvStore_Get)->ArgName("hit")->Arg(1)->Arg(0);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
