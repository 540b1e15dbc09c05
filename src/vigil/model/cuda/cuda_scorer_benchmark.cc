// The CUDA backend's figures (docs/benchmarks.md, "CUDA backend"), on two models: the demo model
// (testdata/models/demo_model.json, 299 trees of depth <= 6) and a random 1000-tree model of
// complete depth-8 trees over 32 float features ("d8x1000": every walk is 8 steps deep).
//
//   kernel/M/N          forest kernel alone, rows already on the device (CUDA events)
//   variant/M/N/V       each kernel variant, for the choice ChoosePredictVariant makes
//   simple/M/N          a plain one-thread-per-row walk over the model's own arrays (the peer)
//   e2e/M/N             CudaScorer::Score from the caller's double rows to probabilities;
//                       h2d_bound = the time the rows' float32 bytes take at the measured
//                       host-to-device bandwidth over the time taken (1 = the copy floor)
//   e2e_margins/M/N     the same, float32 margins out (no host-side sigmoid)
//   latency/M/P         one-row Score calls of class P, back to back: p50/p99 in microseconds
//                       (an otherwise idle GPU: it may sit at its idle clock between calls)
//   latency_loaded/M/P0 the same while another thread keeps the GPU busy with P2 batches of
//                       65,536 rows (the serving case: P0 on the highest-priority stream)
//   e2e_zerocopy/M/N, latency_zerocopy/M/P0
//                       small batches with zero_copy_small (the default; the rows above turn it
//                       off): the kernel reads the rows from and writes the margins to pinned
//                       host memory (no copy nodes)
//   cpu/M/N             the CPU predictor on all of the host's cores (MarginsBatchParallel)
//   ranked_build/M      RankedForest::Build: what the ranked nodes add to a model's load
//   shap_gpu/M/N        CudaScorer::ShapValues
//   shap_cpu/M/N        the CPU TreeSHAP explainer on all of the host's cores
//   copy/h2d, copy/d2d  pinned host-to-device and device-to-device bandwidth (256 MiB)
//
// Run by scripts/gpu-check on a GPU host. Without a device only the CPU rows run. Under
// VIGIL_BENCH_SMOKE (ctest) the sizes shrink to a quick pass.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/cuda/cuda_scorer.h"
#include "vigil/model/cuda/forest_layout.h"
#include "vigil/model/cuda/ranked_forest.h"
#include "vigil/model/cuda/testing_random_forest.h"
#include "vigil/model/model_file.h"
#include "vigil/model/tree_shap.h"

#if defined(VIGIL_CUDA_BUILT)
#include "vigil/model/cuda/forest_kernels.h"
#include "vigil/model/cuda/simple_forest_kernel.h"
#include "vigil/model/cuda/testing_forest_kernels.h"
#endif

namespace vigil {
namespace {

bool Smoke() { return std::getenv("VIGIL_BENCH_SMOKE") != nullptr; }

std::string SourceDir() {
  const char* dir = std::getenv("VIGIL_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

unsigned Cores() { return std::max(1u, std::thread::hardware_concurrency()); }

struct BenchModel : testing::BenchmarkModel {
  std::unique_ptr<CpuPredictor> predictor;
  std::unique_ptr<TreeShapExplainer> explainer;
  std::unique_ptr<CudaScorer> gpu;            // small batches through copies
  // The default options (small batches zero copy) but bulk chunks of 65,536 rows.
  std::unique_ptr<CudaScorer> gpu_zero_copy;
};

size_t MaxRows() { return Smoke() ? 4096 : size_t{1} << 20; }

std::vector<std::unique_ptr<BenchModel>>& Models() {
  static auto* models = new std::vector<std::unique_ptr<BenchModel>>();
  return *models;
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "cuda_scorer_benchmark: %s\n", what.c_str());
  std::exit(1);
}

void LoadModels() {
  auto loaded = testing::BenchmarkModels(SourceDir(), MaxRows(), Smoke() ? 100 : 1000);
  if (!loaded.ok()) Fail(std::string(loaded.status().message()));
  for (testing::BenchmarkModel& l : *loaded) {
    Models().push_back(std::make_unique<BenchModel>());
    static_cast<testing::BenchmarkModel&>(*Models().back()) = std::move(l);
  }

  for (auto& b : Models()) {
    const auto& columns = b->model->feature_names;
    auto predictor = CpuPredictor::Create(b->model, columns, "bench");
    auto explainer = TreeShapExplainer::Create(b->model, columns, "bench");
    if (!predictor.ok() || !explainer.ok()) Fail("the CPU backend refused a benchmark model");
    b->predictor = std::make_unique<CpuPredictor>(std::move(*predictor));
    b->explainer = std::make_unique<TreeShapExplainer>(std::move(*explainer));
  }
}

// Runs fn(begin, end) over [0, n) split across all cores.
template <typename Fn>
void OnAllCores(size_t n, Fn fn) {
  const size_t threads = std::min<size_t>(Cores(), n);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { fn(n * t / threads, n * (t + 1) / threads); });
  }
  for (auto& th : pool) th.join();
}

void BM_Cpu(benchmark::State& state, BenchModel* b, size_t n) {
  std::vector<double> margins(n);
  for (auto _ : state) {
    b->predictor->MarginsBatchParallel(b->rows, n, absl::MakeSpan(margins),
                                       static_cast<int>(Cores()));
    benchmark::DoNotOptimize(margins.data());
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cores"] = Cores();
}

// What the ranked nodes add to a model's load (host side, before their upload).
void BM_RankedBuild(benchmark::State& state, BenchModel* b) {
  auto layout = cuda::ForestLayout::Build(*b->model);
  if (!layout.ok()) Fail(std::string(layout.status().message()));
  for (auto _ : state) {
    auto ranked = cuda::RankedForest::Build(*layout);
    if (!ranked.ok()) Fail(std::string(ranked.status().message()));
    benchmark::DoNotOptimize(ranked->words.data());
  }
}

void BM_ShapCpu(benchmark::State& state, BenchModel* b, size_t n) {
  const size_t out = b->explainer->output_size();
  std::vector<double> values(n * out);
  for (auto _ : state) {
    OnAllCores(n, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        b->explainer->Explain(absl::MakeConstSpan(b->rows).subspan(i * b->width, b->width),
                              absl::MakeSpan(values).subspan(i * out, out));
      }
    });
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cores"] = Cores();
}

#if defined(VIGIL_CUDA_BUILT)

#define CUDA_OR_FAIL(call)                                                        \
  do {                                                                            \
    const cudaError_t e = (call);                                                 \
    if (e != cudaSuccess) Fail(absl::StrCat(#call, ": ", cudaGetErrorString(e))); \
  } while (false)

double g_h2d_bytes_per_s = 0;

// Device copies of a model's rows (float32 inputs) and margins, for the kernel-only rows.
struct DeviceRows {
  float* rows = nullptr;
  float* margins = nullptr;
  float* reference = nullptr;
  cuda::SimpleForest simple{};
};
std::vector<DeviceRows> g_device;

template <typename T>
T* Upload(const std::vector<T>& v) {
  T* d = nullptr;
  CUDA_OR_FAIL(cudaMalloc(&d, std::max<size_t>(v.size(), 1) * sizeof(T)));
  CUDA_OR_FAIL(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

cuda::SimpleForest UploadSimple(const TreeEnsemble& m) {
  std::vector<float> threshold, value;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    threshold.push_back(static_cast<float>(m.threshold[i]));
    value.push_back(static_cast<float>(m.value[i]));
  }
  std::vector<uint32_t> root(m.tree_begin.begin(), m.tree_begin.end() - 1);
  cuda::SimpleForest f{};
  f.feature = Upload(m.feature);
  f.threshold = Upload(threshold);
  f.left = Upload(m.left);
  f.right = Upload(m.right);
  f.default_left = Upload(m.default_left);
  f.value = Upload(value);
  f.root = Upload(root);
  f.num_trees = static_cast<uint32_t>(m.num_trees());
  f.num_inputs = static_cast<uint32_t>(m.feature_names.size());
  f.base_margin = static_cast<float>(m.base_margin[0]);
  return f;
}

double MeasureCopy(cudaMemcpyKind kind, size_t bytes, int repeats) {
  void *src = nullptr, *dst = nullptr;
  if (kind == cudaMemcpyHostToDevice) {
    CUDA_OR_FAIL(cudaHostAlloc(&src, bytes, cudaHostAllocDefault));
    std::fill(static_cast<char*>(src), static_cast<char*>(src) + bytes, 1);
  } else {
    CUDA_OR_FAIL(cudaMalloc(&src, bytes));
    CUDA_OR_FAIL(cudaMemset(src, 1, bytes));
  }
  CUDA_OR_FAIL(cudaMalloc(&dst, bytes));
  cudaEvent_t start, stop;
  CUDA_OR_FAIL(cudaEventCreate(&start));
  CUDA_OR_FAIL(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < repeats + 1; ++i) {
    CUDA_OR_FAIL(cudaEventRecord(start));
    CUDA_OR_FAIL(cudaMemcpyAsync(dst, src, bytes, kind));
    CUDA_OR_FAIL(cudaEventRecord(stop));
    CUDA_OR_FAIL(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_OR_FAIL(cudaEventElapsedTime(&t, start, stop));
    if (i > 0) ms.push_back(t);  // the first is a warm-up
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  kind == cudaMemcpyHostToDevice ? cudaFreeHost(src) : cudaFree(src);
  cudaFree(dst);
  // Device-to-device moves each byte twice (read and write).
  const double moved = kind == cudaMemcpyDeviceToDevice ? 2.0 * static_cast<double>(bytes)
                                                        : static_cast<double>(bytes);
  return moved / (ms[ms.size() / 2] / 1e3);
}

void BM_Copy(benchmark::State& state, cudaMemcpyKind kind) {
  const size_t bytes = Smoke() ? (size_t{16} << 20) : (size_t{256} << 20);
  double rate = 0;
  for (auto _ : state) {
    rate = MeasureCopy(kind, bytes, 5);
    state.SetIterationTime(static_cast<double>(bytes) / rate);
  }
  state.counters["GB_per_s"] = rate / 1e9;
}

// Times one launch per iteration with CUDA events.
template <typename Launch>
void TimeLaunches(benchmark::State& state, size_t n, Launch launch) {
  cudaEvent_t start, stop;
  CUDA_OR_FAIL(cudaEventCreate(&start));
  CUDA_OR_FAIL(cudaEventCreate(&stop));
  CUDA_OR_FAIL(launch());  // warm-up
  CUDA_OR_FAIL(cudaDeviceSynchronize());
  for (auto _ : state) {
    CUDA_OR_FAIL(cudaEventRecord(start));
    CUDA_OR_FAIL(launch());
    CUDA_OR_FAIL(cudaEventRecord(stop));
    CUDA_OR_FAIL(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_OR_FAIL(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

// "variant": the one to time; none: ChoosePredictVariant's choice, as the scorer makes it.
void BM_Kernel(benchmark::State& state, size_t model, size_t n,
               std::optional<cuda::AnyPredictVariant> variant) {
  BenchModel& b = *Models()[model];
  const cuda::ForestView& view = CudaScorerTesting::Forest(*b.gpu);
  const cuda::AnyPredictVariant v =
      variant.has_value() ? *variant
                          : cuda::ChoosePredictVariant(static_cast<uint32_t>(n), view.num_trees,
                                                       b.gpu->device().multiprocessors);
  TimeLaunches(state, n, [&] {
    return cuda::LaunchPredict(view, g_device[model].rows, static_cast<uint32_t>(n),
                               g_device[model].margins, v, nullptr);
  });
  state.SetLabel(cuda::PredictVariantName(v));
}

void BM_Simple(benchmark::State& state, size_t model, size_t n) {
  TimeLaunches(state, n, [&] {
    return cuda::LaunchSimplePredict(g_device[model].simple, g_device[model].rows,
                                     static_cast<uint32_t>(n), g_device[model].reference, nullptr);
  });
  // The peer computes the same function: its margins equal the tuned kernel's.
  const cuda::ForestView& view = CudaScorerTesting::Forest(*Models()[model]->gpu);
  CUDA_OR_FAIL(cuda::LaunchPredict(view, g_device[model].rows, static_cast<uint32_t>(n),
                                   g_device[model].margins, cuda::ComparisonVariant::kRows4,
                                   nullptr));
  std::vector<float> a(n), b(n);
  CUDA_OR_FAIL(cudaMemcpy(a.data(), g_device[model].margins, n * sizeof(float),
                          cudaMemcpyDeviceToHost));
  CUDA_OR_FAIL(cudaMemcpy(b.data(), g_device[model].reference, n * sizeof(float),
                          cudaMemcpyDeviceToHost));
  if (a != b) state.SkipWithError("the simple kernel's margins differ from the tuned kernel's");
}

void BM_EndToEnd(benchmark::State& state, size_t model, size_t n, bool margins_only,
                 bool zero_copy = false) {
  BenchModel& b = *Models()[model];
  CudaScorer& gpu = zero_copy ? *b.gpu_zero_copy : *b.gpu;
  std::vector<double> scores(n);
  std::vector<float> margins(n);
  for (auto _ : state) {
    const absl::Status s = margins_only ? gpu.Margins(b.rows, n, absl::MakeSpan(margins))
                                        : gpu.Score(b.rows, n, absl::MakeSpan(scores));
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  const double floor_s = static_cast<double>(n * b.model->feature_names.size() * sizeof(float)) /
                         g_h2d_bytes_per_s;
  state.counters["h2d_bound"] =
      benchmark::Counter(floor_s, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Latency(benchmark::State& state, size_t model, Priority priority, bool loaded,
                bool zero_copy = false) {
  BenchModel& b = *Models()[model];
  CudaScorer& gpu = zero_copy ? *b.gpu_zero_copy : *b.gpu;
  // The load: P2 batches back to back on another thread until the measurement ends.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> load_batches{0};
  std::thread load;
  if (loaded) {
    load = std::thread([&] {
      const size_t n = std::min<size_t>(65536, MaxRows());
      std::vector<float> margins(n);
      ScoreContext bulk;
      bulk.priority = Priority::kP2;
      while (!stop.load()) {
        if (b.gpu->Margins(b.rows, n, absl::MakeSpan(margins), bulk).ok()) ++load_batches;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the load is running
  }
  ScoreContext context;
  context.priority = priority;
  std::vector<double> times;
  double score = 0;
  size_t row = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const absl::Status s = gpu.Score(absl::MakeConstSpan(b.rows).subspan(row * b.width, b.width),
                                     1, absl::MakeSpan(&score, 1), context);
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    row = (row + 1) % 4096;
  }
  if (loaded) {
    stop = true;
    load.join();
    state.counters["load_batches"] = static_cast<double>(load_batches.load());
  }
  std::sort(times.begin(), times.end());
  state.counters["p50_us"] = times[times.size() / 2];
  state.counters["p99_us"] = times[times.size() * 99 / 100];
}

void BM_ShapGpu(benchmark::State& state, size_t model, size_t n) {
  BenchModel& b = *Models()[model];
  std::vector<double> values(n * b.gpu->shap_width());
  for (auto _ : state) {
    const absl::Status s = b.gpu->ShapValues(b.rows, n, absl::MakeSpan(values));
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void RegisterGpu() {
  const bool smoke = Smoke();
  g_h2d_bytes_per_s = MeasureCopy(cudaMemcpyHostToDevice, smoke ? (16 << 20) : (256 << 20), 5);
  benchmark::AddCustomContext("h2d_GB_per_s", absl::StrFormat("%.2f", g_h2d_bytes_per_s / 1e9));
  benchmark::RegisterBenchmark("copy/h2d", BM_Copy, cudaMemcpyHostToDevice)->UseManualTime()->Iterations(3);
  benchmark::RegisterBenchmark("copy/d2d", BM_Copy, cudaMemcpyDeviceToDevice)->UseManualTime()->Iterations(3);
  const std::vector<size_t> sizes = smoke ? std::vector<size_t>{1, 256}
                                          : std::vector<size_t>{1, 16, 256, 4096, 65536, 1 << 20};
  for (size_t k = 0; k < Models().size(); ++k) {
    BenchModel& b = *Models()[k];
    std::vector<float> x(MaxRows() * b.width);
    CudaScorerOptions copies;  // the e2e and latency rows: small batches through copies
    copies.zero_copy_small = false;
    auto gpu = CudaScorer::Create(b.model, b.model->feature_names, b.name, copies);
    if (!gpu.ok()) Fail(std::string(gpu.status().message()));
    b.gpu = std::move(*gpu);
    gpu = CudaScorer::Create(b.model, b.model->feature_names, b.name, CudaScorerOptions{});
    if (!gpu.ok()) Fail(std::string(gpu.status().message()));
    b.gpu_zero_copy = std::move(*gpu);
    CudaScorerTesting::Gather(*b.gpu, b.rows, 0, MaxRows(), x.data());
    DeviceRows d;
    d.rows = Upload(x);
    CUDA_OR_FAIL(cudaMalloc(&d.margins, MaxRows() * sizeof(float)));
    CUDA_OR_FAIL(cudaMalloc(&d.reference, MaxRows() * sizeof(float)));
    d.simple = UploadSimple(*b.model);
    g_device.push_back(d);
    for (size_t n : sizes) {
      benchmark::RegisterBenchmark(absl::StrCat("kernel/", b.name, "/", n).c_str(), BM_Kernel, k, n,
                                   std::nullopt)
          ->UseManualTime();
    }
    for (size_t n : sizes) {
      if (n < 4096 && !smoke) continue;
      benchmark::RegisterBenchmark(absl::StrCat("simple/", b.name, "/", n).c_str(), BM_Simple, k, n)
          ->UseManualTime();
    }
    for (size_t n : sizes) {
      for (const cuda::AnyPredictVariant v : cuda::kAllPredictVariants) {
        if (smoke && v != cuda::AnyPredictVariant(cuda::ComparisonVariant::kRows1)) continue;
        benchmark::RegisterBenchmark(
            absl::StrCat("variant/", b.name, "/", n, "/", cuda::PredictVariantName(v)).c_str(),
            BM_Kernel, k, n, v)
            ->UseManualTime();
      }
    }
    for (size_t n : sizes) {
      benchmark::RegisterBenchmark(absl::StrCat("e2e/", b.name, "/", n).c_str(), BM_EndToEnd, k, n,
                                   false, false)
          ->UseRealTime();
      benchmark::RegisterBenchmark(absl::StrCat("e2e_margins/", b.name, "/", n).c_str(),
                                   BM_EndToEnd, k, n, true, false)
          ->UseRealTime();
    }
    for (Priority p : {Priority::kP0, Priority::kP2}) {
      benchmark::RegisterBenchmark(absl::StrCat("latency/", b.name, "/", PriorityName(p)).c_str(),
                                   BM_Latency, k, p, false, false)
          ->Iterations(smoke ? 10 : 20000);
    }
    benchmark::RegisterBenchmark(absl::StrCat("latency_loaded/", b.name, "/P0").c_str(),
                                 BM_Latency, k, Priority::kP0, true, false)
        ->Iterations(smoke ? 10 : 20000);
    benchmark::RegisterBenchmark(absl::StrCat("latency_zerocopy/", b.name, "/P0").c_str(),
                                 BM_Latency, k, Priority::kP0, false, true)
        ->Iterations(smoke ? 10 : 20000);
    for (size_t n : {size_t{1}, size_t{16}, size_t{256}}) {
      benchmark::RegisterBenchmark(absl::StrCat("e2e_zerocopy/", b.name, "/", n).c_str(),
                                   BM_EndToEnd, k, n, false, true)
          ->UseRealTime();
    }
    for (size_t n : smoke ? std::vector<size_t>{64} : std::vector<size_t>{1024, 16384, 65536}) {
      benchmark::RegisterBenchmark(absl::StrCat("shap_gpu/", b.name, "/", n).c_str(), BM_ShapGpu, k, n)
          ->UseRealTime();
    }
  }
}

#endif  // VIGIL_CUDA_BUILT

void RegisterCpu() {
  for (auto& b : Models()) {
    for (size_t n : Smoke() ? std::vector<size_t>{256} : std::vector<size_t>{4096, 65536, 1 << 20}) {
      benchmark::RegisterBenchmark(absl::StrCat("cpu/", b->name, "/", n).c_str(), BM_Cpu, b.get(), n)
          ->UseRealTime();
    }
    const size_t shap_rows = Smoke() ? 16 : (b->name == "demo" ? 16384 : 1024);
    benchmark::RegisterBenchmark(absl::StrCat("shap_cpu/", b->name, "/", shap_rows).c_str(), BM_ShapCpu,
                                 b.get(), shap_rows)
        ->UseRealTime();
    benchmark::RegisterBenchmark(absl::StrCat("ranked_build/", b->name).c_str(), BM_RankedBuild,
                                 b.get())
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  vigil::LoadModels();
  auto device = vigil::ProbeCudaDevice();
  if (device.ok()) {
    benchmark::AddCustomContext("gpu", device->name);
    benchmark::AddCustomContext("gpu_multiprocessors", std::to_string(device->multiprocessors));
    benchmark::AddCustomContext("cuda_driver", std::to_string(device->driver_version));
    benchmark::AddCustomContext("cuda_runtime", std::to_string(device->runtime_version));
#if defined(VIGIL_CUDA_BUILT)
    vigil::RegisterGpu();
#endif
  } else {
    benchmark::AddCustomContext("gpu", std::string(device.status().message()));
  }
  benchmark::AddCustomContext("host_cores", std::to_string(vigil::Cores()));
  vigil::RegisterCpu();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
