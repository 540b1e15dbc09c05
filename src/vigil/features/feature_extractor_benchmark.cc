// Feature extraction cost per transaction and state size per account.
//
// Build with optimisation (the release preset, RelWithDebInfo) and run:
//   build/src/vigil/features/feature_extractor_benchmark
// Each benchmark first warms the state with enough transactions that every account has history
// (not timed), then times Process() on fresh transactions drawn from the same population: 80% of
// payments between uniformly drawn accounts, 20% touching a hot 1% (merchants, payroll). At 1M
// accounts the state (~hundreds of MB) is far larger than the last-level cache, so each
// transaction pays DRAM misses for both parties' states and, with the cycle check, for the
// beneficiary's receivers. BM_MemoryLatency_DependentMiss measures what one such miss costs on
// the machine at hand, so the figures can be read as "misses per transaction".
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "vigil/crypto/pseudonym.h"
#include "vigil/features/feature_extractor.h"

namespace vigil {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

bool Smoke() { return std::getenv("VIGIL_BENCH_SMOKE") != nullptr; }

const FxRates& Rates() {
  static const FxRates* fx = new FxRates(
      *FxRates::Parse("reporting_currency,USD\ncurrency,per_reporting_unit\nEUR,0.85\n", "bench"));
  return *fx;
}

struct Stream {
  std::vector<Transaction> txs;
};

// "n" transactions over "accounts" accounts starting at event time "t0", 0.5 s apart on average.
Stream MakeStream(int64_t accounts, int64_t n, uint64_t seed, int64_t* t) {
  Rng rng(seed);
  const int64_t hot = std::max<int64_t>(1, accounts / 100);
  Stream s;
  s.txs.resize(static_cast<size_t>(n));
  const Currency usd = *Currency::FromCode("USD");
  for (Transaction& tx : s.txs) {
    const auto pick = [&] {
      return rng.Uniform() < 0.2
                 ? static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(hot))
                 : static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(accounts));
    };
    *t += static_cast<int64_t>(rng.Uniform() * 1'000'000);
    tx.id = "b";
    tx.event_time = FromUnixMicros(*t);
    tx.originator.bank_id = "0012";
    tx.originator.account_id = std::to_string(0x80000000 + pick());
    tx.beneficiary.bank_id = "0012";
    tx.beneficiary.account_id = std::to_string(0x80000000 + pick());
    const double amount = std::exp(4 + 2 * (rng.Uniform() + rng.Uniform() - 1));
    tx.amount = Money(static_cast<int64_t>(amount * 100), 2, usd);
    tx.payment_format = static_cast<PaymentFormat>(1 + rng.Next() % 7);
  }
  return s;
}

// The state after ~3 payments per account (not timed), and the stream to time.
struct Warmed {
  std::unique_ptr<FeatureExtractor> fe;
  int64_t accounts = 0;
  int64_t t = 1'661'990'400'000'000;
  Stream timed;
};

Warmed Warm(benchmark::State& state) {
  Warmed w;
  w.accounts = Smoke() ? 10'000 : state.range(0);
  FeatureConfig config;
  config.cycle_max_hops = static_cast<int>(state.range(1));
  // The long memory's motif search (schema v2): its budget (histories read per payment; 0: off),
  // for the search's share of the cost.
  config.motif_budget = static_cast<int>(state.range(3));
  // Counterparty risk (schema v3): counterparties' risks read per side (0: none, for its share).
  config.counterparty_risk_max = static_cast<int>(state.range(4));
  if (state.range(2) != 0) {
    // Accounts known by HMAC-SHA-256 pseudonyms, as `vigil serve` and a data dir's replay keep
    // them: the cost of two keyed hashes per payment.
    config.account_pseudonyms = std::make_shared<const crypto::Pseudonymizer>(
        *crypto::Pseudonymizer::Create(crypto::Pseudonymizer::Hash::kHmacSha256,
                                       std::string(32, 'k')));
  }
  w.fe = std::make_unique<FeatureExtractor>(Rates(), config);
  std::vector<double> row(FeatureExtractor::Schema()->size());
  Stream warm = MakeStream(w.accounts, 3 * w.accounts, 1, &w.t);
  for (const Transaction& tx : warm.txs) {
    if (!w.fe->Process(tx, absl::MakeSpan(row)).ok()) state.SkipWithError("warm-up failed");
  }
  w.timed = MakeStream(w.accounts, Smoke() ? 10'000 : 200'000, 2, &w.t);
  return w;
}

void ReportMemory(const FeatureExtractor& fe, benchmark::State& state) {
  const FeatureMemoryStats mem = fe.Memory(false);
  state.counters["accounts"] = static_cast<double>(mem.accounts);
  state.counters["bytes_per_account"] =
      static_cast<double>(mem.state_bytes + mem.index_bytes) / static_cast<double>(mem.accounts);
}

// The populations and configurations both paths are timed at: 10k and 1M accounts, the cycle
// check off and on, pseudonymized keys, the motif search off (its default) or at a budget, and
// the counterparty risk at its default bound (8) or not read (0).
void StateSizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"accounts", "cycle_hops", "pseudonyms", "motif_budget", "counterparty_risk"});
  b->Args({10'000, 3, 0, 24, 8});
  b->Args({1'000'000, 0, 0, 0, 8});
  b->Args({1'000'000, 3, 0, 0, 8});
  b->Args({1'000'000, 3, 0, 0, 0});
  for (int budget : {1, 4, 8, 24}) b->Args({1'000'000, 3, 0, budget, 8});
  b->Args({1'000'000, 3, 1, 0, 8});
}

// One transaction at a time: the latency path (each transaction's misses in sequence).
void BM_FeatureExtractor_Process(benchmark::State& state) {
  Warmed w = Warm(state);
  std::vector<double> row(FeatureExtractor::Schema()->size());
  size_t i = 0;
  for (auto _ : state) {
    if (i == w.timed.txs.size()) {
      state.PauseTiming();
      w.timed = MakeStream(w.accounts, static_cast<int64_t>(w.timed.txs.size()), 3 + i, &w.t);
      i = 0;
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(w.fe->Process(w.timed.txs[i++], absl::MakeSpan(row)));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  ReportMemory(*w.fe, state);
}
BENCHMARK(BM_FeatureExtractor_Process)
    ->Apply(StateSizes)
    ->Unit(benchmark::kNanosecond);

// Batches of 256 through ProcessBatch (the replay and batcher path): the same work, with the
// misses of the next few transactions overlapped. Time is per batch; ns_per_tx per transaction.
void BM_FeatureExtractor_ProcessBatch(benchmark::State& state) {
  constexpr size_t kBatch = 256;
  Warmed w = Warm(state);
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> rows(kBatch * width);
  std::vector<absl::Status> statuses(kBatch);
  size_t i = 0;
  for (auto _ : state) {
    if (i + kBatch > w.timed.txs.size()) {
      state.PauseTiming();
      w.timed = MakeStream(w.accounts, static_cast<int64_t>(w.timed.txs.size()), 3 + i, &w.t);
      i = 0;
      state.ResumeTiming();
    }
    w.fe->ProcessBatch(absl::MakeConstSpan(w.timed.txs).subspan(i, kBatch), absl::MakeSpan(rows),
                       absl::MakeSpan(statuses));
    i += kBatch;
    benchmark::ClobberMemory();
  }
  for (const absl::Status& s : statuses) {
    if (!s.ok()) state.SkipWithError("a transaction was rejected");
  }
  const auto txs = static_cast<double>(state.iterations() * kBatch);
  state.SetItemsProcessed(static_cast<int64_t>(txs));
  state.counters["ns_per_tx"] =
      benchmark::Counter(txs / 1e9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  ReportMemory(*w.fe, state);
}
BENCHMARK(BM_FeatureExtractor_ProcessBatch)
    ->Apply(StateSizes)
    ->Unit(benchmark::kMicrosecond);

// Baseline for reading the figures above: one dependent load from a random cache line of a
// working set as large as the feature state (~400 MB at 1M accounts), i.e. the cost of one DRAM
// miss (with its TLB miss) on this machine. ns/transaction divided by this is the number of
// serialized misses a transaction pays.
void BM_MemoryLatency_DependentMiss(benchmark::State& state) {
  const size_t lines = (Smoke() ? size_t{8} << 20 : static_cast<size_t>(state.range(0))) / 64;
  struct alignas(64) Line {
    uint64_t next;
  };
  std::vector<Line> memory(lines);
  std::vector<uint32_t> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
  Rng rng(9);
  for (size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[rng.Next() % (i + 1)]);
  for (size_t i = 0; i < lines; ++i) memory[order[i]].next = order[(i + 1) % lines];
  uint64_t p = order[0];
  for (auto _ : state) {
    p = memory[p].next;
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MemoryLatency_DependentMiss)->ArgName("bytes")->Arg(int64_t{512} << 20);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
