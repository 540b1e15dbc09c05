// CudaScorer: the Scorer backed by an NVIDIA GPU (docs/gpu.md). Scores batches of rows with the
// forest kernels and computes exact TreeSHAP values for batches (ShapValues); single-row
// explanations (Explain) stay on the CPU explainer, which answers one row faster than a device
// round trip.
//
// Scores equal the CPU backend's bit for bit: the same float32 splits, and the margin summed in
// float32 in tree order on the device, then turned into a probability on the host by the CPU
// predictor's own Transform. A payment scored on either backend gets the same decision.
//
// Per call: the rows' model features are gathered and rounded to float32 into a pinned host
// buffer (a pool made at Create: no allocation per call), copied to the device, scored and copied
// back on the CUDA stream of the call's priority class (P0 on the device's highest stream
// priority). Batches of up to options.small_batch_rows replay a CUDA graph captured for the next
// power of two; larger ones stream through in chunks, two in flight, so that gathering one
// chunk overlaps the copies and kernels of the one before.
//
// Failures are values: no device or driver (kUnavailable from Create), a device error
// (kInternal, naming the CUDA call and the runtime's reason), a call that outlives its deadline
// or options.timeout (kDeadlineExceeded; the buffers it used return to the pool once the device
// is done with them), every buffer busy (kResourceExhausted). The caller (BackendRouter) then
// scores on the CPU.
//
// Thread safety: Score, ShapValues and Explain may be called from any number of threads.
#ifndef VIGIL_MODEL_CUDA_CUDA_SCORER_H_
#define VIGIL_MODEL_CUDA_CUDA_SCORER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/core/feature_schema.h"
#include "vigil/model/scorer.h"
#include "vigil/model/tree_ensemble.h"

namespace vigil {

// Whether this build has the CUDA backend (VIGIL_ENABLE_CUDA).
bool CudaBackendBuilt();

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;  // CUDA's encoding: 1000 * major + 10 * minor
};

// The device "ordinal", or kUnavailable with the runtime's reason (no driver, no device, a
// build without CUDA) or kInvalidArgument (no such ordinal).
absl::StatusOr<CudaDeviceInfo> ProbeCudaDevice(int ordinal = 0);

struct CudaScorerOptions {
  int device = 0;
  // Batches up to this many rows replay a captured CUDA graph; one slot of the pool holds one.
  size_t small_batch_rows = 1024;
  int small_slots = 8;  // small batches on the device at once
  // Larger batches stream through in chunks of this many rows, two in flight per slot.
  size_t chunk_rows = 262144;
  int bulk_slots = 2;
  // Small batches read their rows from, and write their margins to, pinned host memory mapped
  // into the device (zero copy): a graph of one kernel instead of copy, kernel, copy. On the
  // H200 this takes 4-6 us off a batch of 1 to 16 rows and 16-18 us off one of 256
  // (docs/benchmarks.md, "CUDA backend").
  bool zero_copy_small = true;
  // Also upload the model as RankedForest (ranked_forest.h), for the kernel large batches run
  // (rows16ranked). Off, or where the model's nodes do not fit 4 bytes, they run rows4.
  bool ranked_nodes = true;
  // Host threads that gather and convert bulk batches (0: half the host's cores, at most 8).
  int host_threads = 0;
  // Rows per device pass of ShapValues.
  size_t shap_chunk_rows = 16384;
  // The longest a scoring call waits for the device (less when its deadline comes sooner).
  std::chrono::microseconds timeout{std::chrono::milliseconds(100)};

  // Errors name the field: sizes and counts must be positive, small_batch_rows a power of two
  // no larger than chunk_rows.
  absl::Status Validate() const;
};

class CudaScorer final : public Scorer {
 public:
  struct Stats {
    uint64_t calls = 0, rows = 0;
    uint64_t graph_launches = 0;  // small batches replayed from a captured graph
    uint64_t chunks = 0;          // chunks of bulk batches
    uint64_t timeouts = 0, errors = 0, busy = 0;
  };

  // Binds "model" to "schema" and uploads it. Fails as CpuScorer::Create does for models that do
  // not give one probability; for models the kernels do not take (LightGBM, more than 16,384
  // features: ForestLayout::Build); kUnavailable without a usable device.
  static absl::StatusOr<std::unique_ptr<CudaScorer>> Create(
      std::shared_ptr<const TreeEnsemble> model, const FeatureSchema& schema,
      std::string model_version, CudaScorerOptions options = {});
  // The same for rows whose columns are "columns" (a CSV header, say).
  static absl::StatusOr<std::unique_ptr<CudaScorer>> Create(
      std::shared_ptr<const TreeEnsemble> model, const std::vector<std::string>& columns,
      std::string model_version, CudaScorerOptions options = {});
  ~CudaScorer() override;

  const std::string& model_version() const override;
  size_t row_width() const override;
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override;
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override;

  // The float32 margins of n rows (what Score turns into probabilities).
  absl::Status Margins(absl::Span<const double> rows, size_t n, absl::Span<float> margins,
                       const ScoreContext& context = {}) const;

  // Exact TreeSHAP values of n rows' margins: row i's at out[i * shap_width()], the model's
  // features in model order, then the bias (the CPU explainer's layout; its values within 1e-5).
  // Runs on the P2 stream, without a timeout; rows too wide for the kernel (about 400 features
  // and more) are explained by the CPU explainer on the host threads instead.
  absl::Status ShapValues(absl::Span<const double> rows, size_t n, absl::Span<double> out) const;
  size_t shap_width() const;

  const CudaDeviceInfo& device() const;
  Stats stats() const;

  struct Impl;  // CUDA state (model/cuda/cuda_scorer.cc)

 private:
  friend struct CudaScorerTesting;
  explicit CudaScorer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil

#endif  // VIGIL_MODEL_CUDA_CUDA_SCORER_H_
