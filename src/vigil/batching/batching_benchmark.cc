// The dynamic batcher under a mixed open-loop load, in process: single-payment calls (P0, P1)
// at a fixed rate and bulk calls (P2, many rows each) at a rising row rate, both sent to one
// BatchingScorer around a BackendRouter, on two models: the demo model
// (testdata/models/demo_model.json) and a random 1000-tree model of complete depth-8 trees over
// 32 float features ("d8x1000").
//
//   batcher/M/S/R       model M, stack S, bulk load R rows/s offered for the run's duration
//                       (stacks: cpu, gpu; with VIGIL_BATCHER_SWEEP=1 also gpu_P1_P2, the gpu
//                       stack with other routing thresholds)
//
// The scenario is vigil's: P0 and P1 are single payments with tight deadlines; large batches come
// from bulk callers (POST /v1/score/batch: backfills, replays, re-screening), sent as P2. What to
// look for: on the CPU alone the batcher's one thread scores each bulk batch of a large model for
// tens of milliseconds, so the single payments queued behind it may miss their deadlines and the
// P2 row rate saturates; with the GPU taking the bulk batches, whether the single calls keep their
// latency and how many more P2 rows are scored. Both stacks get the same load, the same batcher
// config and the same client threads.
//
// The load (kSingleRate, kP0Share, kDeadline, kBulkClients and kBulkRows below):
//   singles             one-row Score calls, kSingleRate calls/s in all (VIGIL_BATCHER_SINGLES):
//                       1 in 6 P0 (5 ms deadline), the rest P1 (50 ms). Call i is due at
//                       start + i / rate, whatever became of the calls before it (open loop). A
//                       pool of client threads takes the calls in turn, each sleeping until its
//                       call is due; the pool grows while calls fall due with every client busy,
//                       up to 256 threads (VIGIL_BATCHER_MAX_CLIENTS lowers it). Past that the
//                       generator lags (late_frac), and the lag is charged to the calls.
//   bulk                kBulkClients threads send P2 calls of B rows (kBulkRows,
//                       VIGIL_BATCHER_BULK_ROWS) with a 200 ms deadline, paced to R rows/s in
//                       all: bulk call j is due at start + j * B / R, taken by whichever bulk
//                       thread is free; a thread that is late sends at once, and the lateness
//                       counts. R = 0: no bulk calls (the singles alone).
// Deadlines and latencies count from the time a call was due, not from when it was sent (no
// coordinated omission). The first part of each run (warm-up) is sent but not counted.
//
// Stacks (S), one batcher config for both (BulkPolicy: BatchPolicyConfig::Fast, with P1 batches
// of up to 1024 calls, and P2 batches of up to kP2BatchRows rows, 4096: max_batch counts calls,
// so P2's is kP2BatchRows / B calls, at least one; a P2 batch waits up to Fast's 2 ms for more
// bulk calls). Before the runs each GPU scorer scores one batch of each power-of-two size up to
// the largest P2 batch, so that the device's lazy set-up is not charged to the first run.
//   cpu                 a router without a GPU: every batch on the CPU, on the batcher's thread
//   gpu                 the router with the CudaScorer, sending P1 batches of >= 256 rows and P2
//                       of >= 64 to the GPU (BackendRouterConfig's defaults; VIGIL_GPU_MIN_ROWS=
//                       "p1,p2" overrides them), P0 always on the CPU. Only with a device.
//
// Counters (per run, over the calls due in the measured window):
//   singles_offered     single calls/s offered (P0 and P1): the calls due in the window, per s
//   singles_achieved    single calls/s scored (status OK)
//   pN_p50_us, pN_p99_us  class N's latency, due time to answer, over its scored calls, in
//                       microseconds (-1: none scored); for P2, per bulk call
//   pN_ok               share of class N's calls scored within their deadline (a call answered
//                       OK after it, inside the batcher's few milliseconds of wait margin, counts
//                       as scored but not in time)
//   p2_offered_rows     bulk rows/s offered: the rows of the bulk calls due in the window, per
//                       second (R, to within a call)
//   p2_rows             bulk rows/s scored (rows of the bulk calls answered OK)
//   p2_rows_in_time     bulk rows/s scored within the 200 ms deadline
//   pN_expired, pN_shed  class N's calls whose deadline passed unscored (kDeadlineExceeded:
//                       decided on rules alone) and calls refused by a full queue
//                       (kResourceExhausted: the server's 503)
//   errors              calls that failed otherwise (any class)
//   share_cpu, share_gpu, share_fallback  share of the scored rows (singles and bulk) that each
//                       backend scored (the ScoreBackend the call reported: cpu, gpu,
//                       cpu-fallback)
//   cpu_batches, cpu_rows, gpu_batches, gpu_rows  BackendRouter::stats() over the window (a call
//                       scored inline on its caller's thread counts as a CPU batch of one)
//   fallback_timeout, fallback_error, fallback_busy  GPU batches scored on the CPU instead, by
//                       cause; breaker_skips: batches kept off the GPU by an open breaker
//   batches             batches the batcher's thread formed (BatchingScorer::stats())
//   inline_calls        calls scored at once on the caller's thread (P0 finding the batcher idle)
//   mean_batch          rows per batch the batcher's thread formed
//   clients             single-call client threads at the end of the run (its peak)
//   send_lag_p99_us     P99 of (sent - due) over the single calls: the generator's own lateness
//   late_frac           share of single calls sent more than 1 ms after they were due (high:
//                       every client was waiting on an earlier call, or the host could not keep
//                       up; either way the lag is in the latencies)
//   p2_late_frac        the same for bulk calls (every bulk thread was waiting on a call)
//   client_refused      present (1) when the system refused a client thread
// The router's and batcher's counters are read when the window starts and after the last call
// is answered (the window's calls, plus warm-up calls still queued at its start).
//
// Run by scripts/gpu-check on a GPU host; without a device only the cpu stack runs (the probe's
// reason is in the context). Ladders of R: demo 0, 250k, 1M, 4M rows/s; d8x1000 0, 50k, 200k,
// 1M rows/s. Under VIGIL_BENCH_SMOKE (ctest) each model and stack runs once for 0.2 s: singles
// 1,000 calls/s, bulk 20,000 rows/s in calls of 256 rows. Environment for manual runs:
//   VIGIL_BATCHER_BULK_RATES="r1,r2,..."  bulk rows/s for every model and stack (0 allowed)
//   VIGIL_BATCHER_BULK_ROWS=B            rows per bulk call
//   VIGIL_BATCHER_SINGLES=r              single calls/s (0: bulk alone)
//   VIGIL_BATCHER_SECONDS=s              measured window per run (default 2; warm-up 0.25 s)
//   VIGIL_GPU_MIN_ROWS="p1,p2"           the gpu stack's routing thresholds
//   VIGIL_BATCHER_MAX_CLIENTS=n          the single-call client pool's limit (at most 256)
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
#include <utility>
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
#include "vigil/model/cuda/testing_random_forest.h"
#include "vigil/model/model_file.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

// The single payments: kSingleRate calls/s in all, kP0Share of them P0 (urgent: instant rails),
// the rest P1 (the normal flow).
constexpr double kSingleRate = 20000;
constexpr double kP0Share = 1.0 / 6;
// Deadlines per class (from the due time), after ComplianceGrade's per-class budgets; P2 is bulk.
constexpr std::array<std::chrono::milliseconds, 3> kDeadline = {
    std::chrono::milliseconds(5), std::chrono::milliseconds(50), std::chrono::milliseconds(200)};
// The bulk callers: a few threads, each call kBulkRows rows.
constexpr size_t kBulkClients = 4;
constexpr size_t kBulkRows = 1024;
// The most rows a P2 batch holds (a few bulk calls).
constexpr size_t kP2BatchRows = 4096;
// The single-call client pool's limit.
constexpr size_t kMaxSingleClients = 256;

// Calls sent later than this after they were due count as late (late_frac).
constexpr std::chrono::milliseconds kLate(1);
// A client thread's stack: a Score call needs little (one row scored inline at most; a bulk
// call's rows and scores are on the heap).
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

// "a,b,c" as positive numbers (or non-negative, with allow_zero), or Fail naming the variable.
std::vector<double> ParseList(const char* var, const std::string& text, bool allow_zero = false) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v = 0;
    if (!absl::SimpleAtod(part, &v) || !std::isfinite(v) || v < 0 || (v == 0 && !allow_zero)) {
      Fail(absl::StrCat(var, "=\"", text, "\": '", part, "' is not a ",
                        allow_zero ? "non-negative" : "positive", " number"));
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

double SingleRate() {
  if (const char* s = std::getenv("VIGIL_BATCHER_SINGLES")) {
    return ParseList("VIGIL_BATCHER_SINGLES", s, /*allow_zero=*/true).front();
  }
  return Smoke() ? 1000 : kSingleRate;
}

size_t BulkRows() {
  if (const char* s = std::getenv("VIGIL_BATCHER_BULK_ROWS")) {
    const double v = ParseList("VIGIL_BATCHER_BULK_ROWS", s).front();
    if (v != std::floor(v) || v > 1e6) Fail("VIGIL_BATCHER_BULK_ROWS must be a whole number <= 1e6");
    return static_cast<size_t>(v);
  }
  return Smoke() ? 256 : kBulkRows;
}

size_t MaxSingleClients() {
  if (const char* env = std::getenv("VIGIL_BATCHER_MAX_CLIENTS")) {
    const double v = ParseList("VIGIL_BATCHER_MAX_CLIENTS", env).front();
    return std::clamp<size_t>(static_cast<size_t>(v), 1, kMaxSingleClients);
  }
  return kMaxSingleClients;
}

// Rows of the pool each model's calls draw from (a bulk call takes B consecutive ones).
size_t PoolRows() { return std::max(Smoke() ? size_t{4096} : size_t{65536}, BulkRows()); }

struct BenchModel : testing::BenchmarkModel {
  std::shared_ptr<const Scorer> cpu;
  std::shared_ptr<const Scorer> gpu;  // null without a device
  std::vector<double> bulk_rates;     // rows/s
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

std::vector<double> BulkRates(const std::string& model) {
  if (const char* env = std::getenv("VIGIL_BATCHER_BULK_RATES")) {
    return ParseList("VIGIL_BATCHER_BULK_RATES", env, /*allow_zero=*/true);
  }
  if (Smoke()) return {20000};
  // Ladders that cross the CPU stack's bulk capacity for each model (the demo model scores a row
  // several times faster than d8x1000).
  if (model == "demo") return {0, 250000, 1000000, 4000000};
  return {0, 50000, 200000, 1000000};
}

void AddCpuScorer(BenchModel& b) {
  auto schema = FeatureSchema::Create("bench.v1", b.model->feature_names);
  if (!schema.ok()) Fail(absl::StrCat(b.name, ": ", schema.status().message()));
  auto cpu = CpuScorer::Create(b.model, **schema, b.name);
  if (!cpu.ok()) Fail(absl::StrCat(b.name, ": ", cpu.status().message()));
  b.cpu = std::move(*cpu);
}

void LoadModels() {
  auto loaded = testing::BenchmarkModels(SourceDir(), PoolRows());
  if (!loaded.ok()) Fail(std::string(loaded.status().message()));
  for (testing::BenchmarkModel& l : *loaded) {
    Models().push_back(std::make_unique<BenchModel>());
    static_cast<testing::BenchmarkModel&>(*Models().back()) = std::move(l);
  }

  for (auto& b : Models()) {
    AddCpuScorer(*b);
    b->bulk_rates = BulkRates(b->name);
  }
}

// Scores one batch of each power-of-two size up to the largest P2 batch on the GPU, so that
// lazy device set-up (module loading, graph capture) is not charged to the first run.
void WarmGpu(const BenchModel& m) {
  const size_t most = std::min(PoolRows(), std::max(kP2BatchRows, BulkRows()));
  std::vector<double> scores(most);
  for (size_t n = 1;; n = std::min(2 * n, most)) {
    (void)m.gpu->Score(absl::MakeConstSpan(m.rows).subspan(0, n * m.width), n,
                       absl::MakeSpan(scores));
    if (n == most) break;
  }
}

// The gpu stack's routing thresholds: BackendRouterConfig's, or VIGIL_GPU_MIN_ROWS="p1,p2".
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

// Fast's waits and queue limits, with P1 batches free to grow past the router's P1 threshold and
// P2 batches of a few bulk calls: up to kP2BatchRows rows (max_batch counts calls, not rows).
BatchPolicyConfig BulkPolicy() {
  BatchPolicyConfig c = BatchPolicyConfig::Fast();
  c.classes[1].max_batch = 1024;
  c.classes[2].max_batch = std::max<size_t>(1, kP2BatchRows / BulkRows());
  return c;
}

std::string PolicyLabel(const BatchPolicyConfig& c) {
  return absl::StrCat("P1<=", c.classes[1].max_batch, " P2<=", c.classes[2].max_batch, "x",
                      BulkRows());
}

void MakeStacks(bool gpu) {
  auto cpu = std::make_unique<StackSpec>();
  cpu->name = "cpu";
  cpu->policy = BulkPolicy();
  cpu->label = PolicyLabel(cpu->policy);
  Stacks().push_back(std::move(cpu));

  if (!gpu) return;
  auto g = std::make_unique<StackSpec>();
  g->name = "gpu";
  g->use_gpu = true;
  g->policy = BulkPolicy();
  g->router = GpuRouterConfig();
  g->label = absl::StrCat(PolicyLabel(g->policy), " gpu>=", g->router.gpu_min_rows[1], "/",
                          g->router.gpu_min_rows[2]);
  Stacks().push_back(std::move(g));

  // VIGIL_BATCHER_SWEEP=1: more gpu stacks, each with other P1/P2 thresholds ("gpu_p1_p2"), to
  // find the router's thresholds (same load, same batcher).
  if (std::getenv("VIGIL_BATCHER_SWEEP") == nullptr) return;
  for (const auto& [p1, p2] : std::vector<std::pair<size_t, size_t>>{
           {64, 64}, {256, 64}, {1024, 256}, {BackendRouterConfig::kNever, 1024}}) {
    auto t = std::make_unique<StackSpec>();
    t->use_gpu = true;
    t->policy = BulkPolicy();
    t->router = BackendRouterConfig{};
    t->router.gpu_min_rows[1] = p1;
    t->router.gpu_min_rows[2] = p2;
    const std::string p1_text =
        p1 == BackendRouterConfig::kNever ? std::string("never") : absl::StrCat(p1);
    t->name = absl::StrCat("gpu_", p1_text, "_", p2);
    t->label = absl::StrCat(PolicyLabel(t->policy), " gpu>=", p1_text, "/", p2);
    Stacks().push_back(std::move(t));
  }
}

// "singles 20000/s (P0 17% 5ms, P1 83% 50ms); bulk 4 clients x 1024 rows, P2 200ms", for the
// context.
std::string LoadMix() {
  return absl::StrCat("singles ", SingleRate(), "/s (P0 ", std::lround(100 * kP0Share), "% ",
                      kDeadline[0].count(), "ms, P1 ", std::lround(100 * (1 - kP0Share)), "% ",
                      kDeadline[1].count(), "ms); bulk ", kBulkClients, " clients x ", BulkRows(),
                      " rows, P2 ", kDeadline[2].count(), "ms");
}

// ---- The load generator.

enum class Outcome : uint8_t { kOk, kExpired, kShed, kOther };

struct CallRecord {
  int64_t latency_ns = 0;  // due -> answered
  int64_t lag_ns = 0;      // due -> sent
  Outcome outcome = Outcome::kOk;
  ScoreBackend backend = ScoreBackend::kNone;
};

// One kind of call (singles or bulk): call i is due at start + i / rate. The calls in
// [first, total) are measured; those before are the warm-up.
struct Stream {
  double rate = 0;  // calls/s
  uint64_t first = 0, total = 0;
  Steady::time_point start;
  std::vector<CallRecord> records;  // per call, written by the client that sent it
  std::atomic<uint64_t> next{0};    // the next call no client has taken

  Steady::time_point Due(uint64_t i) const {
    return start + std::chrono::nanoseconds(std::llround(static_cast<double>(i) * 1e9 / rate));
  }
  void Plan(double calls_per_s, double warmup_s, double window_s) {
    rate = calls_per_s;
    first = static_cast<uint64_t>(std::ceil(rate * warmup_s));
    total = static_cast<uint64_t>(std::ceil(rate * (warmup_s + window_s)));
    records.assign(total, CallRecord{});
  }
};

// Shared by the client threads of one run.
struct Load {
  const Scorer* scorer = nullptr;
  const BenchModel* model = nullptr;
  Stream singles;
  std::vector<Priority> classes;  // per single call: P0 or P1
  Stream bulk;                    // P2, bulk_rows rows per call
  size_t bulk_rows = 0;
};

Outcome Classify(const absl::Status& status) {
  if (status.ok()) return Outcome::kOk;
  if (absl::IsDeadlineExceeded(status)) return Outcome::kExpired;
  if (absl::IsResourceExhausted(status)) return Outcome::kShed;
  return Outcome::kOther;
}

// Takes the stream's calls in turn, sends each when it is due (at once when late) and records it.
// "send" scores call i with the context given and returns its status.
template <typename Send>
void Drive(Stream& stream, Send send) {
  // Wake at the due time, not up to the default 50 µs timer slack after it.
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  for (;;) {
    const uint64_t i = stream.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= stream.total) return;
    const Steady::time_point due = stream.Due(i);
    std::this_thread::sleep_until(due);
    const Steady::time_point sent = Steady::now();
    ScoreBackend backend = ScoreBackend::kNone;
    ScoreContext context;
    context.backend = &backend;
    const absl::Status status = send(i, due, context);
    const Steady::time_point answered = Steady::now();
    CallRecord& r = stream.records[i];
    r.latency_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(answered - due).count();
    r.lag_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(sent - due).count();
    r.backend = backend;
    r.outcome = Classify(status);
  }
}

void SingleClient(Load* load) {
  const size_t width = load->model->width;
  const size_t pool = load->model->rows.size() / width;
  const absl::Span<const double> rows = load->model->rows;
  Drive(load->singles, [&](uint64_t i, Steady::time_point due, ScoreContext& context) {
    context.priority = load->classes[i];
    context.deadline = due + kDeadline[static_cast<size_t>(context.priority)];
    double score = 0;
    const size_t row = static_cast<size_t>(i % pool);
    const absl::Status status =
        load->scorer->Score(rows.subspan(row * width, width), 1, absl::MakeSpan(&score, 1),
                            context);
    benchmark::DoNotOptimize(score);
    return status;
  });
}

void BulkClient(Load* load) {
  const size_t width = load->model->width;
  const size_t n = load->bulk_rows;
  const size_t starts = load->model->rows.size() / width - n + 1;  // n <= the pool's rows
  const absl::Span<const double> rows = load->model->rows;
  std::vector<double> scores(n);
  Drive(load->bulk, [&](uint64_t j, Steady::time_point due, ScoreContext& context) {
    context.priority = Priority::kP2;
    context.deadline = due + kDeadline[2];
    const size_t row = static_cast<size_t>((j * n) % starts);
    const absl::Status status =
        load->scorer->Score(rows.subspan(row * width, n * width), n, absl::MakeSpan(scores),
                            context);
    benchmark::DoNotOptimize(scores.data());
    return status;
  });
}

// The client threads of one kind (pthreads, for a small stack each).
class ClientPool {
 public:
  ClientPool(Load* load, void (*client)(Load*)) : load_(load), client_(client) {}
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
      if (pthread_create(&t, &attr, &ClientPool::Run, this) != 0) {
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
  static void* Run(void* self) {
    auto* pool = static_cast<ClientPool*>(self);
    pool->client_(pool->load_);
    return nullptr;
  }
  Load* load_;
  void (*client_)(Load*);
  std::vector<pthread_t> threads_;
  size_t started_ = 0;
};

// ---- Results.

struct Snapshot {
  BackendRouter::Stats router;
  BatchingScorer::Stats batcher;
  double batch_rows = 0;  // batch-size histogram: rows of every batch and inline call
};

Snapshot Snap(const BackendRouter& router, const BatchingScorer& batcher,
              const ValueHistogram& sizes) {
  Snapshot s;
  s.router = router.stats();
  s.batcher = batcher.stats();
  s.batch_rows = sizes.sum();
  return s;
}

// Nearest-rank percentile of sorted nanoseconds, in microseconds; -1 when empty.
double PercentileUs(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return -1;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1]) / 1e3;
}

// One class's measured calls.
struct ClassTally {
  uint64_t calls = 0, ok = 0, expired = 0, shed = 0, other = 0, late = 0;
  uint64_t in_time = 0;          // scored within the deadline
  std::vector<int64_t> latency;  // scored calls
  std::vector<int64_t> lag;
};

struct RowsByBackend {
  uint64_t cpu = 0, gpu = 0, fallback = 0;
};

void Count(const CallRecord& r, Priority priority, uint64_t rows, ClassTally& t,
           RowsByBackend& by_backend) {
  using std::chrono::nanoseconds;
  const auto late_ns = std::chrono::duration_cast<nanoseconds>(kLate).count();
  const auto deadline_ns =
      std::chrono::duration_cast<nanoseconds>(kDeadline[static_cast<size_t>(priority)]).count();
  ++t.calls;
  t.lag.push_back(r.lag_ns);
  if (r.lag_ns > late_ns) ++t.late;
  switch (r.outcome) {
    case Outcome::kOk:
      ++t.ok;
      t.latency.push_back(r.latency_ns);
      if (r.latency_ns <= deadline_ns) ++t.in_time;
      if (r.backend == ScoreBackend::kGpu) {
        by_backend.gpu += rows;
      } else if (r.backend == ScoreBackend::kCpuFallback) {
        by_backend.fallback += rows;
      } else {
        by_backend.cpu += rows;
      }
      break;
    case Outcome::kExpired:
      ++t.expired;
      break;
    case Outcome::kShed:
      ++t.shed;
      break;
    case Outcome::kOther:
      ++t.other;
      break;
  }
}

void Report(benchmark::State& state, const Load& load, double window_s, const Snapshot& before,
            const Snapshot& after, size_t clients) {
  std::array<ClassTally, 3> tally;
  RowsByBackend by_backend;
  std::vector<int64_t> single_lag;
  uint64_t single_late = 0;
  for (uint64_t i = load.singles.first; i < load.singles.total; ++i) {
    const Priority p = load.classes[i];
    Count(load.singles.records[i], p, 1, tally[static_cast<size_t>(p)], by_backend);
  }
  for (uint64_t j = load.bulk.first; j < load.bulk.total; ++j) {
    Count(load.bulk.records[j], Priority::kP2, load.bulk_rows, tally[2], by_backend);
  }
  for (size_t c = 0; c < 2; ++c) {
    single_lag.insert(single_lag.end(), tally[c].lag.begin(), tally[c].lag.end());
    single_late += tally[c].late;
  }
  const auto frac = [](uint64_t part, uint64_t whole) {
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
  };
  const auto d = [](uint64_t a, uint64_t b) { return static_cast<double>(a - b); };
  const uint64_t singles = tally[0].calls + tally[1].calls;

  auto& k = state.counters;
  k["singles_offered"] = static_cast<double>(singles) / window_s;
  k["singles_achieved"] = static_cast<double>(tally[0].ok + tally[1].ok) / window_s;
  k["p2_offered_rows"] = static_cast<double>(tally[2].calls * load.bulk_rows) / window_s;
  k["p2_rows"] = static_cast<double>(tally[2].ok * load.bulk_rows) / window_s;
  k["p2_rows_in_time"] = static_cast<double>(tally[2].in_time * load.bulk_rows) / window_s;
  uint64_t errors = 0;
  for (size_t c = 0; c < 3; ++c) {
    ClassTally& t = tally[c];
    std::sort(t.latency.begin(), t.latency.end());
    const std::string p = absl::StrCat("p", c);
    k[p + "_p50_us"] = PercentileUs(t.latency, 0.50);
    k[p + "_p99_us"] = PercentileUs(t.latency, 0.99);
    k[p + "_ok"] = frac(t.in_time, t.calls);
    k[p + "_expired"] = static_cast<double>(t.expired);
    k[p + "_shed"] = static_cast<double>(t.shed);
    errors += t.other;
  }
  k["errors"] = static_cast<double>(errors);
  const uint64_t scored_rows = by_backend.cpu + by_backend.gpu + by_backend.fallback;
  k["share_cpu"] = frac(by_backend.cpu, scored_rows);
  k["share_gpu"] = frac(by_backend.gpu, scored_rows);
  k["share_fallback"] = frac(by_backend.fallback, scored_rows);

  const BackendRouter::Stats& r1 = after.router;
  const BackendRouter::Stats& r0 = before.router;
  k["cpu_batches"] = d(r1.cpu_batches, r0.cpu_batches);
  k["cpu_rows"] = d(r1.cpu_rows, r0.cpu_rows);
  k["gpu_batches"] = d(r1.gpu_batches, r0.gpu_batches);
  k["gpu_rows"] = d(r1.gpu_rows, r0.gpu_rows);
  k["fallback_timeout"] = d(r1.fallback_timeout, r0.fallback_timeout);
  k["fallback_error"] = d(r1.fallback_error, r0.fallback_error);
  k["fallback_busy"] = d(r1.fallback_busy, r0.fallback_busy);
  k["breaker_skips"] = d(r1.breaker_skips, r0.breaker_skips);

  const uint64_t batches = after.batcher.batches - before.batcher.batches;
  const uint64_t inline_calls = after.batcher.inline_calls - before.batcher.inline_calls;
  // The histogram holds each batch's rows and each inline call's; only P0, a class with no
  // queue delay, is scored inline, one row a call.
  const double batch_rows =
      after.batch_rows - before.batch_rows - static_cast<double>(inline_calls);
  k["batches"] = static_cast<double>(batches);
  k["inline_calls"] = static_cast<double>(inline_calls);
  k["mean_batch"] = batches == 0 ? 0.0 : batch_rows / static_cast<double>(batches);

  std::sort(single_lag.begin(), single_lag.end());
  k["clients"] = static_cast<double>(clients);
  k["send_lag_p99_us"] = PercentileUs(single_lag, 0.99);
  k["late_frac"] = frac(single_late, singles);
  k["p2_late_frac"] = frac(tally[2].late, tally[2].calls);
}

void BM_Batcher(benchmark::State& state, const BenchModel* m, const StackSpec* spec,
                double bulk_rate) {
  auto router_or = BackendRouter::Create(m->cpu, spec->use_gpu ? m->gpu : nullptr, spec->router);
  if (!router_or.ok()) {
    state.SkipWithError(std::string(router_or.status().message()).c_str());
    return;
  }
  std::shared_ptr<const BackendRouter> router = std::move(*router_or);
  std::vector<double> bounds;
  for (double b = 1; b <= 65536; b *= 2) bounds.push_back(b);
  auto sizes = ValueHistogram::Create(bounds);
  if (!sizes.ok()) Fail(std::string(sizes.status().message()));
  auto batcher_or = BatchingScorer::Create(router, spec->policy, sizes->get());
  if (!batcher_or.ok()) {
    state.SkipWithError(std::string(batcher_or.status().message()).c_str());
    return;
  }
  const std::unique_ptr<BatchingScorer> batcher = std::move(*batcher_or);

  const double window_s = WindowSeconds();
  const double warmup_s = WarmupSeconds();
  Load load;
  load.scorer = batcher.get();
  load.model = m;
  load.bulk_rows = BulkRows();
  load.singles.Plan(SingleRate(), warmup_s, window_s);
  load.bulk.Plan(bulk_rate / static_cast<double>(load.bulk_rows), warmup_s, window_s);
  load.classes.resize(load.singles.total);
  std::mt19937_64 rng(7);
  std::bernoulli_distribution urgent(kP0Share);
  for (Priority& p : load.classes) p = urgent(rng) ? Priority::kP0 : Priority::kP1;

  // Enough single clients to start with for a few milliseconds of calls in flight; more join
  // while calls fall due with every client busy.
  const size_t max_clients = MaxSingleClients();
  const size_t initial = std::min(
      max_clients, std::clamp<size_t>(static_cast<size_t>(load.singles.rate / 500), 8, 64));
  constexpr size_t kGrowBy = 32;
  constexpr auto kPoll = std::chrono::microseconds(200);

  Snapshot before, after;
  size_t clients = 0;
  for (auto _ : state) {
    load.singles.next.store(0);
    load.bulk.next.store(0);
    const Steady::time_point start = Steady::now() + std::chrono::milliseconds(50);  // start-up
    load.singles.start = start;
    load.bulk.start = start;
    ClientPool single_pool(&load, &SingleClient);
    ClientPool bulk_pool(&load, &BulkClient);
    bool refused = false;
    if (load.singles.total > 0) {
      refused = !single_pool.Grow(initial);
      if (single_pool.started() == 0) {
        state.SkipWithError("the system refused every client thread");
        return;
      }
    }
    if (load.bulk.total > 0) {
      if (!bulk_pool.Grow(kBulkClients)) refused = true;
      if (bulk_pool.started() == 0) {
        state.SkipWithError("the system refused every bulk client thread");
        return;
      }
    }
    bool snapped = false;
    const Steady::time_point window =
        start + std::chrono::nanoseconds(std::llround(warmup_s * 1e9));
    for (;;) {
      std::this_thread::sleep_for(kPoll);
      const Steady::time_point now = Steady::now();
      if (!snapped && now >= window) {
        before = Snap(*router, *batcher, **sizes);
        snapped = true;
      }
      const uint64_t i = load.singles.next.load(std::memory_order_relaxed);
      const bool singles_taken = i >= load.singles.total;
      if (singles_taken && load.bulk.next.load(std::memory_order_relaxed) >= load.bulk.total) {
        break;
      }
      if (!singles_taken && !refused && now - load.singles.Due(i) > kPoll &&
          single_pool.started() < max_clients) {
        refused = !single_pool.Grow(std::min(kGrowBy, max_clients - single_pool.started()));
      }
    }
    single_pool.Join();
    bulk_pool.Join();
    if (!snapped) before = Snap(*router, *batcher, **sizes);
    after = Snap(*router, *batcher, **sizes);
    clients = single_pool.started();
    if (refused) state.counters["client_refused"] = 1;
    state.SetIterationTime(window_s);
  }
  Report(state, load, window_s, before, after, clients);
  state.SetLabel(spec->label);
}

void Register() {
  for (const auto& m : Models()) {
    for (const auto& s : Stacks()) {
      if (s->use_gpu && m->gpu == nullptr) continue;
      for (double rate : m->bulk_rates) {
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
        vigil::WarmGpu(*m);
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
  benchmark::AddCustomContext("load", vigil::LoadMix());
  benchmark::AddCustomContext("window_s", absl::StrFormat("%g", vigil::WindowSeconds()));
  benchmark::AddCustomContext("warmup_s", absl::StrFormat("%g", vigil::WarmupSeconds()));
  vigil::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
