#include "vigil/model/cuda/cuda_scorer.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/cuda/forest_kernels.h"
#include "vigil/model/cuda/forest_layout.h"
#include "vigil/model/cuda/host_pool.h"
#include "vigil/model/cuda/ranked_forest.h"
#include "vigil/model/reason_codes.h"
#include "vigil/model/tree_shap.h"

namespace vigil {

using cuda::ForestLayout;
using cuda::ForestView;
using Steady = std::chrono::steady_clock;

namespace {

absl::Status CudaFailure(cudaError_t e, const char* call) {
  return absl::InternalError(absl::StrCat("CUDA ", call, ": ", cudaGetErrorName(e), " (",
                                          cudaGetErrorString(e), ")"));
}

#define VIGIL_CUDA_RETURN_IF_ERROR(call)                                 \
  do {                                                                   \
    const cudaError_t vigil_cuda_error = (call);                         \
    if (vigil_cuda_error != cudaSuccess) {                               \
      return CudaFailure(vigil_cuda_error, #call);                       \
    }                                                                    \
  } while (false)

// A device array freed with the scorer.
template <typename T>
struct DeviceArray {
  T* data = nullptr;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (data != nullptr) cudaFree(data);
  }
  absl::Status Allocate(size_t count) {
    VIGIL_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, std::max<size_t>(count, 1) * sizeof(T)));
    return absl::OkStatus();
  }
  absl::Status Upload(const std::vector<T>& v) {
    VIGIL_RETURN_IF_ERROR(Allocate(v.size()));
    if (!v.empty()) {
      VIGIL_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(data, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    return absl::OkStatus();
  }
  // The same, and "view" (a ForestView field) set to the device copy.
  absl::Status Upload(const std::vector<T>& v, const T*& view) {
    VIGIL_RETURN_IF_ERROR(Upload(v));
    view = data;
    return absl::OkStatus();
  }
};

// A pinned (page-locked) host array, so that copies run asynchronously at full speed.
template <typename T>
struct PinnedArray {
  T* data = nullptr;
  PinnedArray() = default;
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() {
    if (data != nullptr) cudaFreeHost(data);
  }
  // mapped: also mapped into the device's address space (device_view() is then its address
  // there), so that kernels read and write it in place.
  absl::Status Allocate(size_t count, bool mapped = false) {
    VIGIL_CUDA_RETURN_IF_ERROR(cudaHostAlloc(reinterpret_cast<void**>(&data),
                                             std::max<size_t>(count, 1) * sizeof(T),
                                             mapped ? cudaHostAllocMapped : cudaHostAllocDefault));
    std::fill(data, data + std::max<size_t>(count, 1), T{});
    if (mapped) {
      VIGIL_CUDA_RETURN_IF_ERROR(
          cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), data, 0));
    }
    return absl::OkStatus();
  }
  T* device_view = nullptr;
};

// The uploaded ForestLayout.
struct DeviceForest {
  DeviceArray<cuda::ForestNode> nodes;
  DeviceArray<uint32_t> tree_root;
  DeviceArray<uint8_t> tree_depth;
  DeviceArray<double> path_value;
  DeviceArray<uint32_t> path_element_begin;
  DeviceArray<uint32_t> element_input;
  DeviceArray<double> element_zero;
  DeviceArray<uint32_t> element_edge_begin;
  DeviceArray<cuda::ShapEdge> edges;
  DeviceArray<uint32_t> ranked_words, ranked_trees, ranked_roots;
  DeviceArray<float> leaf_value, search;
  DeviceArray<uint32_t> threshold_begin, search_begin, search_height;
  ForestView view;

  absl::Status Upload(const ForestLayout& f, bool ranked_nodes) {
    VIGIL_RETURN_IF_ERROR(nodes.Upload(f.nodes, view.nodes));
    VIGIL_RETURN_IF_ERROR(tree_root.Upload(f.tree_root, view.tree_root));
    VIGIL_RETURN_IF_ERROR(tree_depth.Upload(f.tree_depth, view.tree_depth));
    VIGIL_RETURN_IF_ERROR(path_value.Upload(f.path_value, view.path_value));
    VIGIL_RETURN_IF_ERROR(path_element_begin.Upload(f.path_element_begin, view.path_element_begin));
    VIGIL_RETURN_IF_ERROR(element_input.Upload(f.element_input, view.element_input));
    VIGIL_RETURN_IF_ERROR(element_zero.Upload(f.element_zero, view.element_zero));
    VIGIL_RETURN_IF_ERROR(element_edge_begin.Upload(f.element_edge_begin, view.element_edge_begin));
    VIGIL_RETURN_IF_ERROR(edges.Upload(f.edges, view.edges));
    view.num_trees = static_cast<uint32_t>(f.num_trees());
    view.num_inputs = f.num_inputs;
    view.base_margin = f.base_margin;
    view.group_begin = f.group_begin;
    // The ranked nodes (the rows*ranked kernels), when asked for and the model's fit 4 bytes.
    if (!ranked_nodes) return absl::OkStatus();
    if (absl::StatusOr<cuda::RankedForest> r = cuda::RankedForest::Build(f); r.ok()) {
      VIGIL_RETURN_IF_ERROR(ranked_words.Upload(r->words, view.ranked_words));
      VIGIL_RETURN_IF_ERROR(ranked_trees.Upload(r->tree_header, view.ranked_trees));
      VIGIL_RETURN_IF_ERROR(ranked_roots.Upload(r->root_word, view.ranked_roots));
      VIGIL_RETURN_IF_ERROR(leaf_value.Upload(r->leaf_value, view.leaf_value));
      VIGIL_RETURN_IF_ERROR(threshold_begin.Upload(r->threshold_begin, view.threshold_begin));
      VIGIL_RETURN_IF_ERROR(search.Upload(r->search, view.search));
      VIGIL_RETURN_IF_ERROR(search_begin.Upload(r->search_begin, view.search_begin));
      VIGIL_RETURN_IF_ERROR(search_height.Upload(r->search_height, view.search_height));
      view.offset_bits = r->offset_bits;
      view.slot_bits = r->slot_bits;
    }
    return absl::OkStatus();
  }
};

// Buffers for one batch in flight: "halves" halves of "capacity" rows each (bulk slots use two,
// to overlap one chunk's gathering with the previous chunk's device work).
struct Slot {
  size_t capacity = 0;
  int halves = 1;
  std::array<PinnedArray<float>, 2> host_rows, host_margins;
  std::array<DeviceArray<float>, 2> device_rows, device_margins;
  bool zero_copy = false;  // small slots with CudaScorerOptions::zero_copy_small
  std::array<cudaEvent_t, 2> done{};
  // Per power-of-two batch size: the captured graph (small slots). A graph may be launched
  // into any stream; the slot's owner launches it into its class's.
  std::vector<cudaGraphExec_t> graphs;
  bool busy = false;
  bool abandoned = false;  // a call gave up on it; free once the device has finished

  ~Slot() {
    for (cudaGraphExec_t g : graphs) {
      if (g != nullptr) cudaGraphExecDestroy(g);
    }
    for (cudaEvent_t e : done) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  }
  bool Idle() const {
    for (int h = 0; h < halves; ++h) {
      if (cudaEventQuery(done[static_cast<size_t>(h)]) == cudaErrorNotReady) return false;
    }
    return true;
  }
};

}  // namespace

struct CudaScorer::Impl {
  std::string version;
  CudaScorerOptions options;
  CudaDeviceInfo device;
  CpuPredictor predictor;  // the row binding, Transform, and nothing else
  TreeShapExplainer explainer;
  ForestLayout layout;
  DeviceForest forest;
  std::array<cudaStream_t, 3> streams{};  // by Priority
  // By Priority, at the same priority: a bulk batch's chunks alternate between streams[c] and
  // these (chunk k on its half's stream), so that one chunk's copy in and the previous chunk's
  // kernel overlap; on one stream each waited for the other.
  std::array<cudaStream_t, 3> second_streams{};
  std::vector<std::unique_ptr<Slot>> small, bulk;
  std::unique_ptr<cuda::HostPool> pool;

  mutable std::mutex mu;
  mutable std::condition_variable freed;
  mutable Stats stats;

  std::mutex shap_mu;  // one SHAP batch at a time (its buffers below)
  PinnedArray<float> shap_host_rows;
  PinnedArray<double> shap_host_out;
  DeviceArray<float> shap_device_rows;
  DeviceArray<double> shap_device_out;
  cudaEvent_t shap_done = nullptr;

  Impl(CpuPredictor p, TreeShapExplainer e) : predictor(std::move(p)), explainer(std::move(e)) {}
  ~Impl() {
    if (device.name.empty()) return;
    cudaSetDevice(device.ordinal);
    // Only this scorer's work: other scorers on the device (other model versions) run on.
    for (const auto& set : {streams, second_streams}) {
      for (cudaStream_t s : set) {
        if (s != nullptr) cudaStreamSynchronize(s);
      }
    }
    small.clear();
    bulk.clear();
    if (shap_done != nullptr) cudaEventDestroy(shap_done);
    for (const auto& set : {streams, second_streams}) {
      for (cudaStream_t s : set) {
        if (s != nullptr) cudaStreamDestroy(s);
      }
    }
  }

  size_t inputs() const { return layout.num_inputs; }

  absl::Status Start();
  absl::Status MakeSlot(size_t capacity, int halves, std::unique_ptr<Slot>& slot);
  absl::StatusOr<Slot*> Acquire(bool small_batch, Steady::time_point until) const;
  // Gathers rows [first, first + count) of "rows" (the caller's layout) as float32 inputs.
  void Gather(absl::Span<const double> rows, size_t first, size_t count, float* out) const;
  // The same on the host pool, for bulk chunks.
  void GatherParallel(absl::Span<const double> rows, size_t first, size_t count,
                      float* out) const {
    pool->ParallelFor(count, 4096, [&](size_t begin, size_t end) {
      Gather(rows, first + begin, end - begin, out + begin * inputs());
    });
  }
  absl::Status Wait(cudaEvent_t event, Steady::time_point until) const;
  // The graph of one small batch of "shape" rows through "slot": copy in, score, copy out.
  absl::StatusOr<cudaGraphExec_t> Capture(Slot& slot, uint32_t shape) const;
  // Scores n rows; "sink"(first, count, margins) receives each finished piece.
  template <typename Sink>
  absl::Status Run(absl::Span<const double> rows, size_t n, const ScoreContext& context,
                   Sink sink) const;
};

absl::Status CudaScorerOptions::Validate() const {
  if (small_batch_rows == 0 || !std::has_single_bit(small_batch_rows)) {
    return absl::InvalidArgumentError("cuda.small_batch_rows must be a power of two");
  }
  if (chunk_rows < small_batch_rows) {
    return absl::InvalidArgumentError("cuda.chunk_rows must be at least cuda.small_batch_rows");
  }
  if (small_slots <= 0) return absl::InvalidArgumentError("cuda.small_slots must be positive");
  if (bulk_slots <= 0) return absl::InvalidArgumentError("cuda.bulk_slots must be positive");
  if (shap_chunk_rows == 0) {
    return absl::InvalidArgumentError("cuda.shap_chunk_rows must be positive");
  }
  if (timeout <= std::chrono::microseconds::zero()) {
    return absl::InvalidArgumentError("cuda.timeout must be positive");
  }
  if (host_threads < 0) return absl::InvalidArgumentError("cuda.host_threads must not be negative");
  return absl::OkStatus();
}

bool CudaBackendBuilt() { return true; }

absl::StatusOr<CudaDeviceInfo> ProbeCudaDevice(int ordinal) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it
    return absl::UnavailableError(absl::StrCat("no CUDA device: ", cudaGetErrorName(e), " (",
                                               cudaGetErrorString(e), ")"));
  }
  if (count == 0) return absl::UnavailableError("no CUDA device: the driver reports none");
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(absl::StrCat("cuda.device ", ordinal, " does not exist; ",
                                                   count, " device(s) present"));
  }
  cudaDeviceProp p{};
  VIGIL_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, ordinal));
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  info.name = p.name;
  info.compute_major = p.major;
  info.compute_minor = p.minor;
  info.multiprocessors = p.multiProcessorCount;
  info.memory_bytes = p.totalGlobalMem;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  return info;
}

absl::Status CudaScorer::Impl::MakeSlot(size_t capacity, int halves, std::unique_ptr<Slot>& s) {
  s = std::make_unique<Slot>();
  s->capacity = capacity;
  s->halves = halves;
  s->zero_copy = halves == 1 && options.zero_copy_small;
  for (size_t h = 0; h < static_cast<size_t>(halves); ++h) {
    VIGIL_RETURN_IF_ERROR(s->host_rows[h].Allocate(capacity * inputs(), s->zero_copy));
    VIGIL_RETURN_IF_ERROR(s->host_margins[h].Allocate(capacity, s->zero_copy));
    if (!s->zero_copy) {
      VIGIL_RETURN_IF_ERROR(s->device_rows[h].Allocate(capacity * inputs()));
      VIGIL_RETURN_IF_ERROR(s->device_margins[h].Allocate(capacity));
    }
    VIGIL_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s->done[h], cudaEventDisableTiming));
  }
  if (halves == 1) {
    // Captured now, so that no call pays for a capture.
    for (uint32_t shape = 1; shape <= capacity; shape *= 2) {
      VIGIL_ASSIGN_OR_RETURN(cudaGraphExec_t graph, Capture(*s, shape));
      s->graphs.push_back(graph);
    }
  }
  return absl::OkStatus();
}

absl::Status CudaScorer::Impl::Start() {
  VIGIL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device.ordinal));
  VIGIL_RETURN_IF_ERROR(forest.Upload(layout, options.ranked_nodes));
  int least = 0, greatest = 0;
  VIGIL_CUDA_RETURN_IF_ERROR(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  // Numerically lower is more urgent: P0 gets the greatest priority, P2 the least.
  const std::array<int, 3> priority = {greatest, (least + greatest) / 2, least};
  for (size_t c = 0; c < 3; ++c) {
    VIGIL_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithPriority(&streams[c], cudaStreamNonBlocking, priority[c]));
    VIGIL_CUDA_RETURN_IF_ERROR(
        cudaStreamCreateWithPriority(&second_streams[c], cudaStreamNonBlocking, priority[c]));
  }
  const int threads = options.host_threads > 0
                          ? options.host_threads
                          : std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 1, 8);
  pool = std::make_unique<cuda::HostPool>(threads - 1);  // the caller is the last
  small.resize(static_cast<size_t>(options.small_slots));
  for (auto& s : small) VIGIL_RETURN_IF_ERROR(MakeSlot(options.small_batch_rows, 1, s));
  bulk.resize(static_cast<size_t>(options.bulk_slots));
  for (auto& s : bulk) VIGIL_RETURN_IF_ERROR(MakeSlot(options.chunk_rows, 2, s));
  if (cuda::ShapRowsPerBlock(layout.num_inputs) > 0) {
    VIGIL_RETURN_IF_ERROR(shap_host_rows.Allocate(options.shap_chunk_rows * inputs()));
    VIGIL_RETURN_IF_ERROR(shap_host_out.Allocate(options.shap_chunk_rows * (inputs() + 1)));
    VIGIL_RETURN_IF_ERROR(shap_device_rows.Allocate(options.shap_chunk_rows * inputs()));
    VIGIL_RETURN_IF_ERROR(shap_device_out.Allocate(options.shap_chunk_rows * (inputs() + 1)));
    VIGIL_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&shap_done, cudaEventDisableTiming));
  }
  VIGIL_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::OkStatus();
}

absl::StatusOr<Slot*> CudaScorer::Impl::Acquire(bool small_batch, Steady::time_point until) const {
  const auto& slots = small_batch ? small : bulk;
  std::unique_lock lock(mu);
  while (true) {
    for (const auto& s : slots) {
      if (s->busy) continue;
      if (s->abandoned) {
        if (!s->Idle()) continue;
        s->abandoned = false;
      }
      s->busy = true;
      return s.get();
    }
    // An abandoned slot frees itself when the device finishes, without a notification: look
    // again at least every millisecond.
    const auto next = std::min(until, Steady::now() + std::chrono::milliseconds(1));
    freed.wait_until(lock, next);
    if (Steady::now() >= until) {
      ++stats.busy;
      return absl::ResourceExhaustedError(
          absl::StrCat("all ", slots.size(), " GPU ", small_batch ? "small-batch" : "bulk",
                       " buffers stayed busy until the call's deadline"));
    }
  }
}

void CudaScorer::Impl::Gather(absl::Span<const double> rows, size_t first, size_t count,
                              float* out) const {
  const size_t width = predictor.row_width();
  const std::vector<uint32_t>& column = predictor.column_of_feature();
  const size_t k = column.size();
  for (size_t i = 0; i < count; ++i) {
    const double* row = rows.data() + (first + i) * width;
    float* x = out + i * k;
    for (size_t f = 0; f < k; ++f) x[f] = static_cast<float>(row[column[f]]);
  }
}

absl::Status CudaScorer::Impl::Wait(cudaEvent_t event, Steady::time_point until) const {
  // Spin first (a small batch is back within tens of microseconds), then yield the core.
  const auto spin_until = Steady::now() + std::chrono::microseconds(200);
  while (true) {
    const cudaError_t e = cudaEventQuery(event);
    if (e == cudaSuccess) return absl::OkStatus();
    if (e != cudaErrorNotReady) return CudaFailure(e, "cudaEventQuery");
    const auto now = Steady::now();
    if (now >= until) {
      return absl::DeadlineExceededError("the GPU did not answer before the call's deadline");
    }
    if (now >= spin_until) std::this_thread::yield();
  }
}

absl::StatusOr<cudaGraphExec_t> CudaScorer::Impl::Capture(Slot& slot, uint32_t shape) const {
  cudaGraphExec_t exec = nullptr;
  cudaStream_t capture = nullptr;
  VIGIL_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  const auto captured = [&]() -> absl::Status {
    VIGIL_CUDA_RETURN_IF_ERROR(
        cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    const auto variant =
        cuda::ChoosePredictVariant(shape, forest.view.num_trees, device.multiprocessors);
    cudaError_t copy_in = cudaSuccess, kernel = cudaSuccess, copy_out = cudaSuccess;
    if (slot.zero_copy) {
      // The kernel reads the rows and writes the margins in pinned host memory: one node.
      kernel = cuda::LaunchPredict(forest.view, slot.host_rows[0].device_view, shape,
                                   slot.host_margins[0].device_view, variant, capture);
    } else {
      copy_in = cudaMemcpyAsync(slot.device_rows[0].data, slot.host_rows[0].data,
                                size_t{shape} * inputs() * sizeof(float), cudaMemcpyHostToDevice,
                                capture);
      kernel = cuda::LaunchPredict(forest.view, slot.device_rows[0].data, shape,
                                   slot.device_margins[0].data, variant, capture);
      copy_out = cudaMemcpyAsync(slot.host_margins[0].data, slot.device_margins[0].data,
                                 size_t{shape} * sizeof(float), cudaMemcpyDeviceToHost, capture);
    }
    const cudaError_t end_capture = cudaStreamEndCapture(capture, &graph);
    // The first failure says most (a failed launch invalidates the capture after it).
    VIGIL_CUDA_RETURN_IF_ERROR(copy_in);
    VIGIL_CUDA_RETURN_IF_ERROR(kernel);
    VIGIL_CUDA_RETURN_IF_ERROR(copy_out);
    VIGIL_CUDA_RETURN_IF_ERROR(end_capture);
    VIGIL_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    return absl::OkStatus();
  }();
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaStreamDestroy(capture);
  if (!captured.ok()) {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    return captured;
  }
  return exec;
}

template <typename Sink>
absl::Status CudaScorer::Impl::Run(absl::Span<const double> rows, size_t n,
                                   const ScoreContext& context, Sink sink) const {
  if (n == 0) return absl::OkStatus();
  // The CUDA runtime's current device is per thread, and callers are any threads.
  VIGIL_CUDA_RETURN_IF_ERROR(cudaSetDevice(device.ordinal));
  const auto until = std::min(context.deadline.value_or(Steady::time_point::max()),
                              Steady::now() + options.timeout);
  const auto c = static_cast<size_t>(context.priority);
  cudaStream_t stream = streams[c];
  const bool small_batch = n <= options.small_batch_rows;
  VIGIL_ASSIGN_OR_RETURN(Slot * slot, Acquire(small_batch, until));
  size_t chunks = 0;  // of a bulk batch
  const absl::Status status = [&]() -> absl::Status {
    if (small_batch) {
      Gather(rows, 0, n, slot->host_rows[0].data);
      const uint32_t shape = std::bit_ceil(static_cast<uint32_t>(n));
      cudaGraphExec_t graph = slot->graphs[static_cast<size_t>(std::countr_zero(shape))];
      VIGIL_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph, stream));
      VIGIL_CUDA_RETURN_IF_ERROR(cudaEventRecord(slot->done[0], stream));
      VIGIL_RETURN_IF_ERROR(Wait(slot->done[0], until));
      sink(0, n, slot->host_margins[0].data);
      return absl::OkStatus();
    }
    // Chunk k uses half k % 2 and that half's stream, on which its copy in, scoring and copy out
    // run in order; before reusing a half, its previous chunk is collected.
    const std::array<cudaStream_t, 2> half_stream = {stream, second_streams[c]};
    const size_t chunk = slot->capacity;
    chunks = (n + chunk - 1) / chunk;
    const auto collect = [&](size_t k) -> absl::Status {
      const size_t h = k % 2;
      VIGIL_RETURN_IF_ERROR(Wait(slot->done[h], until));
      sink(k * chunk, std::min(chunk, n - k * chunk), slot->host_margins[h].data);
      return absl::OkStatus();
    };
    for (size_t k = 0; k < chunks; ++k) {
      const size_t h = k % 2;
      if (k >= 2) VIGIL_RETURN_IF_ERROR(collect(k - 2));
      const size_t first = k * chunk, count = std::min(chunk, n - first);
      GatherParallel(rows, first, count, slot->host_rows[h].data);
      const cudaStream_t chunk_stream = half_stream[h];
      VIGIL_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot->device_rows[h].data, slot->host_rows[h].data,
                                                 count * inputs() * sizeof(float),
                                                 cudaMemcpyHostToDevice, chunk_stream));
      VIGIL_CUDA_RETURN_IF_ERROR(cuda::LaunchPredict(
          forest.view, slot->device_rows[h].data, static_cast<uint32_t>(count),
          slot->device_margins[h].data,
          cuda::ChoosePredictVariant(static_cast<uint32_t>(count), forest.view.num_trees,
                                     device.multiprocessors),
          chunk_stream));
      VIGIL_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(slot->host_margins[h].data,
                                                 slot->device_margins[h].data,
                                                 count * sizeof(float), cudaMemcpyDeviceToHost,
                                                 chunk_stream));
      VIGIL_CUDA_RETURN_IF_ERROR(cudaEventRecord(slot->done[h], chunk_stream));
    }
    for (size_t k = chunks >= 2 ? chunks - 2 : 0; k < chunks; ++k) {
      VIGIL_RETURN_IF_ERROR(collect(k));
    }
    return absl::OkStatus();
  }();
  {
    // One lock: the slot back (after a failure the device may still be working on its buffers:
    // it returns to the pool only once its events say the device is done) and the counts.
    std::lock_guard lock(mu);
    slot->busy = false;
    slot->abandoned = !status.ok();
    if (status.ok()) {
      ++stats.calls;
      stats.rows += n;
      if (small_batch) ++stats.graph_launches;
      stats.chunks += chunks;
    } else if (absl::IsDeadlineExceeded(status)) {
      ++stats.timeouts;
    } else {
      ++stats.errors;
    }
  }
  freed.notify_one();
  return status;
}

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(
    std::shared_ptr<const TreeEnsemble> model, const FeatureSchema& schema,
    std::string model_version, CudaScorerOptions options) {
  return Create(std::move(model), schema.names(), std::move(model_version), options);
}

absl::StatusOr<std::unique_ptr<CudaScorer>> CudaScorer::Create(
    std::shared_ptr<const TreeEnsemble> model, const std::vector<std::string>& columns,
    std::string model_version, CudaScorerOptions options) {
  VIGIL_RETURN_IF_ERROR(options.Validate());
  if (model->num_groups != 1 || model->link != ModelLink::kSigmoid) {
    return absl::InvalidArgumentError(
        absl::StrCat("model ", model_version, ": objective '", model->objective,
                     "' does not give one probability; a decision needs a binary classifier "
                     "(e.g. binary:logistic)"));
  }
  const std::string what = absl::StrCat("the columns of model ", model_version);
  VIGIL_ASSIGN_OR_RETURN(CpuPredictor predictor, CpuPredictor::Create(model, columns, what));
  VIGIL_ASSIGN_OR_RETURN(TreeShapExplainer explainer,
                         TreeShapExplainer::Create(model, columns, what));
  VIGIL_ASSIGN_OR_RETURN(ForestLayout layout, ForestLayout::Build(*model));
  VIGIL_ASSIGN_OR_RETURN(CudaDeviceInfo device, ProbeCudaDevice(options.device));
  auto impl = std::make_unique<Impl>(std::move(predictor), std::move(explainer));
  impl->version = std::move(model_version);
  impl->options = options;
  impl->device = std::move(device);
  impl->layout = std::move(layout);
  VIGIL_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<CudaScorer>(new CudaScorer(std::move(impl)));
}

CudaScorer::CudaScorer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaScorer::~CudaScorer() = default;

const std::string& CudaScorer::model_version() const { return impl_->version; }
size_t CudaScorer::row_width() const { return impl_->predictor.row_width(); }
size_t CudaScorer::shap_width() const { return impl_->layout.num_inputs + 1; }
const CudaDeviceInfo& CudaScorer::device() const { return impl_->device; }

CudaScorer::Stats CudaScorer::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

absl::Status CudaScorer::Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                               const ScoreContext& context) const {
  if (context.backend != nullptr) *context.backend = ScoreBackend::kGpu;
  return impl_->Run(rows, n, context, [&](size_t first, size_t count, const float* margins) {
    const auto transform = [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const double margin = margins[i];
        impl_->predictor.Transform(absl::MakeConstSpan(&margin, 1), scores.subspan(first + i, 1));
      }
    };
    constexpr size_t kPiece = 16384;
    if (count < 2 * kPiece) {
      transform(0, count);  // a small batch: on the caller, no task made
    } else {
      impl_->pool->ParallelFor(count, kPiece, transform);
    }
  });
}

absl::Status CudaScorer::Margins(absl::Span<const double> rows, size_t n, absl::Span<float> out,
                                 const ScoreContext& context) const {
  return impl_->Run(rows, n, context, [&](size_t first, size_t count, const float* margins) {
    std::copy(margins, margins + count, out.begin() + static_cast<ptrdiff_t>(first));
  });
}

absl::StatusOr<std::vector<Reason>> CudaScorer::Explain(absl::Span<const double> row,
                                                        int k) const {
  std::vector<double> contributions(impl_->explainer.output_size());
  impl_->explainer.Explain(row, absl::MakeSpan(contributions));
  return TopReasons(impl_->explainer, row, contributions, k);
}

absl::Status CudaScorer::ShapValues(absl::Span<const double> rows, size_t n,
                                    absl::Span<double> out) const {
  Impl& m = *impl_;
  const size_t width = shap_width();
  if (cuda::ShapRowsPerBlock(m.layout.num_inputs) == 0) {
    // Rows too wide for the kernel's shared memory (a few hundred features): the CPU explainer,
    // on the host pool.
    const size_t row_width = m.predictor.row_width();
    m.pool->ParallelFor(n, 16, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        m.explainer.Explain(rows.subspan(i * row_width, row_width), out.subspan(i * width, width));
      }
    });
    return absl::OkStatus();
  }
  std::lock_guard lock(m.shap_mu);
  VIGIL_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device.ordinal));
  cudaStream_t stream = m.streams[static_cast<size_t>(Priority::kP2)];
  for (size_t first = 0; first < n; first += m.options.shap_chunk_rows) {
    const size_t count = std::min(m.options.shap_chunk_rows, n - first);
    m.GatherParallel(rows, first, count, m.shap_host_rows.data);
    VIGIL_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(m.shap_device_rows.data, m.shap_host_rows.data,
                                               count * m.inputs() * sizeof(float),
                                               cudaMemcpyHostToDevice, stream));
    VIGIL_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(m.shap_device_out.data, 0, count * width * sizeof(double), stream));
    VIGIL_CUDA_RETURN_IF_ERROR(cuda::LaunchShap(m.forest.view, m.shap_device_rows.data,
                                                static_cast<uint32_t>(count),
                                                m.shap_device_out.data,
                                                m.device.multiprocessors, stream));
    VIGIL_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(m.shap_host_out.data, m.shap_device_out.data,
                                               count * width * sizeof(double),
                                               cudaMemcpyDeviceToHost, stream));
    VIGIL_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.shap_done, stream));
    VIGIL_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(m.shap_done));
    double* dst = out.data() + first * width;
    std::copy(m.shap_host_out.data, m.shap_host_out.data + count * width, dst);
    for (size_t i = 0; i < count; ++i) dst[i * width + width - 1] = m.layout.shap_bias;
  }
  return absl::OkStatus();
}

}  // namespace vigil

namespace vigil {

const cuda::ForestView& CudaScorerTesting::Forest(const CudaScorer& scorer) {
  return scorer.impl_->forest.view;
}

void CudaScorerTesting::Gather(const CudaScorer& scorer, absl::Span<const double> rows,
                               size_t first, size_t count, float* out) {
  scorer.impl_->Gather(rows, first, count, out);
}

}  // namespace vigil
