// The dynamic batcher under open-loop load with mixed priority classes, in process: client
// threads send one-row Score calls on a fixed schedule to a BatchingScorer around a
// BackendRouter, on two models: the demo model (testdata/models/demo_model.json) and a random
// 1000-tree model of complete depth-8 trees over 32 float features ("random1000").
//
//   batcher/M/S/R       model M, stack S, R calls/s offered for the run's duration
//
// Stacks (S):
//   cpu                 the CPU-only deployment: BatchPolicyConfig::Fast (P1 batches of up to 64
//                       rows, P2 of 256), a router without a GPU
//   cpu_large           the gpu stack's batch policy (P1 batches of up to 1024 rows, P2 of 4096)
//                       with a router without a GPU: what large batches alone do on the CPU
//   gpu                 the same policy, the router sending P1 batches of >= 256 rows and P2 of
//                       >= 64 to the GPU (BackendRouterConfig's defaults; VIGIL_GPU_MIN_ROWS=
//                       "p1,p2" overrides them), P0 always on the CPU. Only with a device.
//
// The load: call i is due at start + i / R, whatever became of the calls before it (open loop).
// A pool of client threads takes the calls in turn, each sleeping until its call is due; the pool
// grows while calls fall due with every client busy (up to the batcher's queue limits in all, past
// which more calls would be shed at once), so that the batcher, not the generator, decides how
// many calls wait. The class mix and deadlines are kClassShare and kClassDeadline below; deadlines
// and latencies count from the time a call was due, not from when it was sent, so a late send is
// charged to the result (no coordinated omission). The first part of each run (warm-up) is sent
// but not counted.
//
// Counters (per run, over the calls due in the measured window):
//   offered             calls/s offered (R)
//   achieved            calls/s scored (status OK)
//   calls               calls due in the window
//   pN_p50_us, pN_p99_us  class N's latency, due time to answer, over its scored calls, in
//                       microseconds (-1: none scored)
//   pN_ok               share of class N's calls that were scored
//   shed, shed_frac     calls refused by a full queue (kResourceExhausted: the server's 503)
//   expired, expired_frac  calls whose deadline passed unscored (kDeadlineExceeded: decided on
//                       rules alone)
//   errors              calls that failed otherwise
//   share_cpu, share_gpu, share_fallback  share of the scored calls that each backend scored
//                       (the ScoreBackend the call reported: cpu, gpu, cpu-fallback)
//   cpu_batches, gpu_batches, gpu_rows  BackendRouter::stats() over the window (a call scored
//                       inline on its caller's thread counts as a CPU batch of one)
//   fallback_timeout, fallback_error, fallback_busy  GPU batches scored on the CPU instead, by
//                       cause; breaker_skips: batches kept off the GPU by an open breaker
//   batches             batches the batcher's thread formed (BatchingScorer::stats())
//   inline_calls        calls scored at once on the caller's thread (idle P0)
//   mean_batch          rows per batch the batcher's thread formed
//   clients             client threads at the end of the run (the load's peak concurrency bound)
//   send_lag_p99_us     P99 of (sent - due): the generator's own lateness
//   late_frac           share of calls sent more than 1 ms after they were due (high: the host,
//                       not the batcher, limited the load)
//   client_refused      present (1) when the system refused a client thread before the limit
// The router's and batcher's counters are read when the window starts and after the last call
// is answered (the window's calls, plus warm-up calls still queued at its start).
//
// Run by scripts/gpu-check on a GPU host; without a device only the cpu stacks run (the probe's
// reason is in the context). Under VIGIL_BENCH_SMOKE (ctest) each stack runs once at 2,000 calls/s
// for 0.2 s. Environment for manual runs:
//   VIGIL_BATCHER_RATES="r1,r2,..."   offered rates (calls/s) for every model and stack
//   VIGIL_BATCHER_SECONDS=s           measured window per run (default 2; warm-up 0.25 s)
//   VIGIL_GPU_MIN_ROWS="p1,p2"        the gpu stack's routing thresholds
//   VIGIL_BATCHER_MAX_CLIENTS=n       the client pool's limit
#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batch_policy.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/core/feature_schema.h"
#include "vigil/metrics/value_histogram.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/cuda/cuda_scorer.h"
#include "vigil/model/cuda/random_forest.h"
#include "vigil/model/model_file.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

// The offered load's classes: share of calls and deadline (from the due time), after
// ComplianceGrade's per-class budgets. P0: urgent single payments (instant rails); P1: the normal
// flow; P2: bulk (batch files, re-screening).
constexpr std::array<double, 3> kClassShare = {0.10, 0.60, 0.30};
constexpr std::array<std::chrono::milliseconds, 3> kClassDeadline = {
    std::chrono::milliseconds(5), std::chrono::milliseconds(50), std::chrono::milliseconds(200)};

// Calls sent later than this after they were due count as late (late_frac).
constexpr std::chrono::milliseconds kLate(1);
// A client thread's stack: a Score call needs little (one row, scored inline at most).
constexpr size_t kClientStack = size_t{512} << 10;

bool Smoke() { return std::getenv("VIGIL_BENCH_SMOKE") != nullptr; }

std::string SourceDir() {
  const char* dir = std::getenv("VIGIL_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

unsigned Cores() { return std::max(1u, std::thread::hardware_concurrency()); }

void Fail(const std::string& what) {
  std::fprintf(stderr, "batching_benchmark: %s\n", what.c_str());
  std::exit(1);
}

// "a,b,c" as positive numbers, or Fail naming the variable.
std::vector<double> ParseList(const char* var, const std::string& text) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v = 0;
    if (!absl::SimpleAtod(part, &v) || !(v > 0)) {
      Fail(absl::StrCat(var, "=\"", text, "\": '", part, "' is not a positive number"));
    }
    out.push_back(v);
  }
  if (out.empty()) Fail(absl::StrCat(var, " is empty"));
  return out;
}

double WindowSeconds() {
  if (const char* s = std::getenv("VIGIL_BATCHER_SECONDS")) {
    return ParseList("VIGIL_BATCHER_SECONDS", s).front();
  }
  return Smoke() ? 0.2 : 2.0;
}

double WarmupSeconds() { return Smoke() ? 0.02 : 0.25; }

size_t PoolRows() { return Smoke() ? 4096 : 65536; }

struct BenchModel {
  std::string name;
  std::shared_ptr<const TreeEnsemble> model;
  size_t width = 0;
  std::vector<double> rows;  // PoolRows() rows
  std::shared_ptr<const Scorer> cpu;
  std::shared_ptr<const Scorer> gpu;  // null without a device
  std::vector<double> rates;
};

struct StackSpec {
  std::string name;
  bool use_gpu = false;
  BatchPolicyConfig policy;
  BackendRouterConfig router;
  std::string label;
};

std::vector<std::unique_ptr<BenchModel>>& Models() {
  static auto* models = new std::vector<std::unique_ptr<BenchModel>>();
  return *models;
}

std::vector<std::unique_ptr<StackSpec>>& Stacks() {
  static auto* stacks = new std::vector<std::unique_ptr<StackSpec>>();
  return *stacks;
}

std::vector<double> Rates(const std::string& model) {
  if (const char* env = std::getenv("VIGIL_BATCHER_RATES")) {
    return ParseList("VIGIL_BATCHER_RATES", env);
  }
  if (Smoke()) return {2000};
  // Ladders that cross the CPU stack's capacity for each model (the demo model scores a row
  // several times faster than random1000).
  if (model == "demo") return {50000, 100000, 200000, 400000};
  return {20000, 50000, 100000, 200000};
}

void AddCpuScorer(BenchModel& b) {
  auto schema = FeatureSchema::Create("bench.v1", b.model->feature_names);
  if (!schema.ok()) Fail(absl::StrCat(b.name, ": ", schema.status().message()));
  auto cpu = CpuScorer::Create(b.model, **schema, b.name);
  if (!cpu.ok()) Fail(absl::StrCat(b.name, ": ", cpu.status().message()));
  b.cpu = std::move(*cpu);
}

void LoadModels() {
  auto demo = LoadModelFile(SourceDir() + "/testdata/models/demo_model.json");
  if (!demo.ok()) Fail(std::string(demo.status().message()));
  auto m = std::make_unique<BenchModel>();
  m->name = "demo";
  m->model = *demo;
  m->width = m->model->feature_names.size();
  m->rows = testing::ThresholdRows(*m->model, PoolRows(), m->width, 0.05, 1);
  Models().push_back(std::move(m));

  testing::RandomForestSpec spec;
  spec.trees = 1000;
  spec.depth = 8;
  spec.features = 32;
  spec.seed = 8;
  m = std::make_unique<BenchModel>();
  m->name = "random1000";
  m->model = std::make_shared<const TreeEnsemble>(testing::RandomForest(spec));
  m->width = 32;
  m->rows = testing::RandomRows(*m->model, PoolRows(), 32, 0.05, 0.0, 2);
  Models().push_back(std::move(m));

  for (auto& b : Models()) {
    AddCpuScorer(*b);
    b->rates = Rates(b->name);
  }
}

// The GPU stack's routing thresholds: BackendRouterConfig's, or VIGIL_GPU_MIN_ROWS="p1,p2".
BackendRouterConfig GpuRouterConfig() {
  BackendRouterConfig c;
  if (const char* env = std::getenv("VIGIL_GPU_MIN_ROWS")) {
    const std::vector<double> v = ParseList("VIGIL_GPU_MIN_ROWS", env);
    if (v.size() != 2) Fail("VIGIL_GPU_MIN_ROWS takes two numbers: \"p1,p2\"");
    c.gpu_min_rows[1] = static_cast<size_t>(v[0]);
    c.gpu_min_rows[2] = static_cast<size_t>(v[1]);
    if (c.gpu_min_rows[1] == 0 || c.gpu_min_rows[2] == 0) Fail("VIGIL_GPU_MIN_ROWS must be >= 1");
  }
  return c;
}

// Fast's waits and queue limits, with P1 and P2 batches free to grow past the router's GPU
// thresholds, where a GPU batch of a thousand rows costs little more than one.
BatchPolicyConfig LargeBatchPolicy() {
  BatchPolicyConfig c = BatchPolicyConfig::Fast();
  c.classes[1].max_batch = 1024;
  c.classes[2].max_batch = 4096;
  return c;
}

std::string PolicyLabel(const BatchPolicyConfig& c) {
  return absl::StrCat("P1<=", c.classes[1].max_batch, " P2<=", c.classes[2].max_batch);
}

void MakeStacks(bool gpu) {
  auto cpu = std::make_unique<StackSpec>();
  cpu->name = "cpu";
  cpu->policy = BatchPolicyConfig::Fast();
  cpu->label = PolicyLabel(cpu->policy);
  Stacks().push_back(std::move(cpu));

  auto large = std::make_unique<StackSpec>();
  large->name = "cpu_large";
  large->policy = LargeBatchPolicy();
  large->label = PolicyLabel(large->policy);
  Stacks().push_back(std::move(large));

  if (!gpu) return;
  auto g = std::make_unique<StackSpec>();
  g->name = "gpu";
  g->use_gpu = true;
  g->policy = LargeBatchPolicy();
  g->router = GpuRouterConfig();
  g->label = absl::StrCat(PolicyLabel(g->policy), " gpu>=", g->router.gpu_min_rows[1], "/",
                          g->router.gpu_min_rows[2]);
  Stacks().push_back(std::move(g));
}

// "P0 10% 5ms, P1 60% 50ms, P2 30% 200ms", for the context.
std::string ClassMix() {
  std::string out;
  for (size_t c = 0; c < kClassShare.size(); ++c) {
    absl::StrAppend(&out, c == 0 ? "" : ", ", "P", c, " ", std::lround(100 * kClassShare[c]), "% ",
                    kClassDeadline[c].count(), "ms");
  }
  return out;
}

// ---- The load generator.

enum class Outcome : uint8_t { kOk, kExpired, kShed, kOther };

struct CallRecord {
  int64_t latency_ns = 0;  // due -> answered
  int64_t lag_ns = 0;      // due -> sent
  Outcome outcome = Outcome::kOk;
  ScoreBackend backend = ScoreBackend::kNone;
};

// Shared by the client threads of one run. Call i is due at start + i / rate.
struct Load {
  const Scorer* scorer = nullptr;
  const BenchModel* model = nullptr;
  double rate = 0;
  uint64_t total = 0;
  Steady::time_point start;
  std::vector<Priority> classes;  // per call
  std::vector<CallRecord> records;  // per call, written by the client that sent it
  std::atomic<uint64_t> next{0};    // the next call no client has taken

  Steady::time_point Due(uint64_t i) const {
    return start + std::chrono::nanoseconds(
                       std::llround(static_cast<double>(i) * 1e9 / rate));
  }
};

void Client(Load* load) {
  // Wake at the due time, not up to the default 50 µs timer slack after it.
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const size_t width = load->model->width;
  const size_t pool = load->model->rows.size() / width;
  const absl::Span<const double> rows = load->model->rows;
  for (;;) {
    const uint64_t i = load->next.fetch_add(1, std::memory_order_relaxed);
    if (i >= load->total) return;
    const Steady::time_point due = load->Due(i);
    std::this_thread::sleep_until(due);
    const Steady::time_point sent = Steady::now();
    const Priority priority = load->classes[i];
    ScoreBackend backend = ScoreBackend::kNone;
    ScoreContext context;
    context.priority = priority;
    context.deadline = due + kClassDeadline[static_cast<size_t>(priority)];
    context.backend = &backend;
    double score = 0;
    const size_t row = static_cast<size_t>(i % pool);
    const absl::Status status = load->scorer->Score(rows.subspan(row * width, width), 1,
                                                    absl::MakeSpan(&score, 1), context);
    const Steady::time_point answered = Steady::now();
    benchmark::DoNotOptimize(score);
    CallRecord& r = load->records[i];
    r.latency_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(answered - due).count();
    r.lag_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(sent - due).count();
    r.backend = backend;
    if (status.ok()) {
      r.outcome = Outcome::kOk;
    } else if (absl::IsDeadlineExceeded(status)) {
      r.outcome = Outcome::kExpired;
    } else if (absl::IsResourceExhausted(status)) {
      r.outcome = Outcome::kShed;
    } else {
      r.outcome = Outcome::kOther;
    }
  }
}

// The client threads of one run (pthreads, for a small stack each: a pool may hold thousands).
class ClientPool {
 public:
  explicit ClientPool(Load* load) : load_(load) {}
  ~ClientPool() { Join(); }
  ClientPool(const ClientPool&) = delete;
  ClientPool& operator=(const ClientPool&) = delete;

  // Starts n more clients; false when the system refuses a thread (the pool keeps those it has).
  bool Grow(size_t n) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kClientStack);
    bool ok = true;
    for (size_t k = 0; k < n; ++k) {
      pthread_t t;
      if (pthread_create(&t, &attr, &ClientPool::Run, load_) != 0) {
        ok = false;
        break;
      }
      threads_.push_back(t);
    }
    pthread_attr_destroy(&attr);
    started_ = std::max(started_, threads_.size());
    return ok;
  }
  void Join() {
    for (pthread_t t : threads_) pthread_join(t, nullptr);
    threads_.clear();
  }
  size_t started() const { return started_; }

 private:
  static void* Run(void* load) {
    Client(static_cast<Load*>(load));
    return nullptr;
  }
  Load* load_;
  std::vector<pthread_t> threads_;
  size_t started_ = 0;
};

// The client pool's limit: past the batcher's queue limits (and a batch in flight), more
// concurrent calls would only be shed at once.
size_t MaxClients(const BatchPolicyConfig& policy) {
  if (const char* env = std::getenv("VIGIL_BATCHER_MAX_CLIENTS")) {
    return static_cast<size_t>(ParseList("VIGIL_BATCHER_MAX_CLIENTS", env).front());
  }
  size_t n = 256;
  for (const ClassPolicy& c : policy.classes) n += c.max_queue;
  return n;
}

// ---- Results.

struct Snapshot {
  BackendRouter::Stats router;
  BatchingScorer::Stats batcher;
  uint64_t batch_records = 0;  // batch-size histogram: one record per batch or inline call
  double batch_rows = 0;
};

Snapshot Snap(const BackendRouter& router, const BatchingScorer& batcher,
              const ValueHistogram& sizes) {
  Snapshot s;
  s.router = router.stats();
  s.batcher = batcher.stats();
  s.batch_records = sizes.count();
  s.batch_rows = sizes.sum();
  return s;
}

// Nearest-rank percentile of sorted nanoseconds, in microseconds; -1 when empty.
double PercentileUs(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return -1;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1]) / 1e3;
}

void Report(benchmark::State& state, const Load& load, uint64_t first, double window_s,
            const Snapshot& before, const Snapshot& after, size_t clients) {
  std::array<std::vector<int64_t>, 3> latency;
  std::array<uint64_t, 3> class_calls{}, class_ok{};
  std::vector<int64_t> lag;
  uint64_t ok = 0, shed = 0, expired = 0, other = 0, late = 0;
  uint64_t on_cpu = 0, on_gpu = 0, on_fallback = 0;
  const auto late_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kLate).count();
  for (uint64_t i = first; i < load.total; ++i) {
    const CallRecord& r = load.records[i];
    const auto c = static_cast<size_t>(load.classes[i]);
    ++class_calls[c];
    lag.push_back(r.lag_ns);
    if (r.lag_ns > late_ns) ++late;
    switch (r.outcome) {
      case Outcome::kOk:
        ++ok;
        ++class_ok[c];
        latency[c].push_back(r.latency_ns);
        if (r.backend == ScoreBackend::kGpu) {
          ++on_gpu;
        } else if (r.backend == ScoreBackend::kCpuFallback) {
          ++on_fallback;
        } else {
          ++on_cpu;
        }
        break;
      case Outcome::kExpired:
        ++expired;
        break;
      case Outcome::kShed:
        ++shed;
        break;
      case Outcome::kOther:
        ++other;
        break;
    }
  }
  const uint64_t calls = load.total - first;
  const auto frac = [](uint64_t part, uint64_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
  };
  const auto d = [](uint64_t a, uint64_t b) { return static_cast<double>(a - b); };

  auto& k = state.counters;
  k["offered"] = load.rate;
  k["achieved"] = static_cast<double>(ok) / window_s;
  k["calls"] = static_cast<double>(calls);
  for (size_t c = 0; c < 3; ++c) {
    std::sort(latency[c].begin(), latency[c].end());
    const std::string p = absl::StrCat("p", c);
    k[p + "_p50_us"] = PercentileUs(latency[c], 0.50);
    k[p + "_p99_us"] = PercentileUs(latency[c], 0.99);
    k[p + "_ok"] = frac(class_ok[c], class_calls[c]);
  }
  k["shed"] = static_cast<double>(shed);
  k["shed_frac"] = frac(shed, calls);
  k["expired"] = static_cast<double>(expired);
  k["expired_frac"] = frac(expired, calls);
  k["errors"] = static_cast<double>(other);
  k["share_cpu"] = frac(on_cpu, ok);
  k["share_gpu"] = frac(on_gpu, ok);
  k["share_fallback"] = frac(on_fallback, ok);

  const BackendRouter::Stats& r1 = after.router;
  const BackendRouter::Stats& r0 = before.router;
  k["cpu_batches"] = d(r1.cpu_batches, r0.cpu_batches);
  k["gpu_batches"] = d(r1.gpu_batches, r0.gpu_batches);
  k["gpu_rows"] = d(r1.gpu_rows, r0.gpu_rows);
  k["fallback_timeout"] = d(r1.fallback_timeout, r0.fallback_timeout);
  k["fallback_error"] = d(r1.fallback_error, r0.fallback_error);
  k["fallback_busy"] = d(r1.fallback_busy, r0.fallback_busy);
  k["breaker_skips"] = d(r1.breaker_skips, r0.breaker_skips);

  const uint64_t batches = after.batcher.batches - before.batcher.batches;
  const uint64_t inline_calls = after.batcher.inline_calls - before.batcher.inline_calls;
  // The histogram holds each batch's rows and each inline call as one row.
  const double batch_rows =
      after.batch_rows - before.batch_rows - static_cast<double>(inline_calls);
  k["batches"] = static_cast<double>(batches);
  k["inline_calls"] = static_cast<double>(inline_calls);
  k["mean_batch"] = batches == 0 ? 0.0 : batch_rows / static_cast<double>(batches);

  std::sort(lag.begin(), lag.end());
  k["clients"] = static_cast<double>(clients);
  k["send_lag_p99_us"] = PercentileUs(lag, 0.99);
  k["late_frac"] = frac(late, calls);
}

void BM_Batcher(benchmark::State& state, const BenchModel* m, const StackSpec* spec,
                double rate) {
  auto router_or = BackendRouter::Create(m->cpu, spec->use_gpu ? m->gpu : nullptr, spec->router);
  if (!router_or.ok()) {
    state.SkipWithError(std::string(router_or.status().message()).c_str());
    return;
  }
  std::shared_ptr<const BackendRouter> router = std::move(*router_or);
  std::vector<double> bounds;
  for (double b = 1; b <= 8192; b *= 2) bounds.push_back(b);
  auto sizes = ValueHistogram::Create(bounds);
  if (!sizes.ok()) Fail(std::string(sizes.status().message()));
  auto batcher_or = BatchingScorer::Create(router, spec->policy, sizes->get());
  if (!batcher_or.ok()) {
    state.SkipWithError(std::string(batcher_or.status().message()).c_str());
    return;
  }
  const std::unique_ptr<BatchingScorer> batcher = std::move(*batcher_or);

  const double window_s = WindowSeconds();
  const auto first = static_cast<uint64_t>(std::llround(rate * WarmupSeconds()));
  Load load;
  load.scorer = batcher.get();
  load.model = m;
  load.rate = rate;
  load.total = first + static_cast<uint64_t>(std::llround(rate * window_s));
  load.classes.resize(load.total);
  std::mt19937_64 rng(7);
  std::discrete_distribution<int> mix(kClassShare.begin(), kClassShare.end());
  for (Priority& p : load.classes) p = static_cast<Priority>(mix(rng));
  load.records.resize(load.total);

  // Enough clients to start with for a few milliseconds of calls in flight; more join while
  // calls fall due with every client busy.
  const size_t max_clients = MaxClients(spec->policy);
  const size_t initial =
      std::min(max_clients, std::clamp<size_t>(static_cast<size_t>(rate / 500), 64, 1024));
  constexpr size_t kGrowBy = 64;
  constexpr auto kPoll = std::chrono::microseconds(200);

  Snapshot before, after;
  size_t clients = 0;
  for (auto _ : state) {
    load.next.store(0);
    load.start = Steady::now() + std::chrono::milliseconds(50);  // the clients' start-up
    ClientPool pool(&load);
    bool refused = !pool.Grow(initial);
    if (pool.started() == 0) {
      state.SkipWithError("the system refused every client thread");
      return;
    }
    bool snapped = false;
    const Steady::time_point window = load.Due(first);
    for (;;) {
      std::this_thread::sleep_for(kPoll);
      const Steady::time_point now = Steady::now();
      if (!snapped && now >= window) {
        before = Snap(*router, *batcher, **sizes);
        snapped = true;
      }
      const uint64_t i = load.next.load(std::memory_order_relaxed);
      if (i >= load.total) break;
      if (!refused && now - load.Due(i) > kPoll && pool.started() < max_clients) {
        refused = !pool.Grow(std::min(kGrowBy, max_clients - pool.started()));
      }
    }
    pool.Join();
    if (!snapped) before = Snap(*router, *batcher, **sizes);
    after = Snap(*router, *batcher, **sizes);
    clients = pool.started();
    if (refused) state.counters["client_refused"] = 1;
    state.SetIterationTime(window_s);
  }
  Report(state, load, first, window_s, before, after, clients);
  state.SetLabel(spec->label);
}

void Register() {
  for (const auto& m : Models()) {
    for (const auto& s : Stacks()) {
      if (s->use_gpu && m->gpu == nullptr) continue;
      for (double rate : m->rates) {
        benchmark::RegisterBenchmark(
            absl::StrFormat("batcher/%s/%s/%.0f", m->name, s->name, rate).c_str(), BM_Batcher,
            m.get(), s.get(), rate)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  vigil::LoadModels();
  bool gpu = false;
  auto device = vigil::ProbeCudaDevice();
  if (device.ok()) {
    benchmark::AddCustomContext("gpu", device->name);
    for (auto& m : vigil::Models()) {
      auto scorer = vigil::CudaScorer::Create(m->model, m->model->feature_names, m->name);
      if (scorer.ok()) {
        m->gpu = std::move(*scorer);
        gpu = true;
      } else {
        benchmark::AddCustomContext(absl::StrCat("gpu_", m->name),
                                    std::string(scorer.status().message()));
      }
    }
  } else {
    benchmark::AddCustomContext("gpu", std::string(device.status().message()));
  }
  vigil::MakeStacks(gpu);
  benchmark::AddCustomContext("host_cores", std::to_string(vigil::Cores()));
  benchmark::AddCustomContext("class_mix", vigil::ClassMix());
  benchmark::AddCustomContext("window_s", absl::StrFormat("%g", vigil::WindowSeconds()));
  benchmark::AddCustomContext("warmup_s", absl::StrFormat("%g", vigil::WarmupSeconds()));
  vigil::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
