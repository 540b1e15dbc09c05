// Scoring and explanation cost per row: CpuPredictor and TreeShapExplainer against XGBoost's own
// C API (libxgboost 1.7), on the same models and rows in the same process.
//
// Build with optimisation (the release preset, RelWithDebInfo) and run:
//   build/src/vigil/model/predictor_benchmark [--benchmark_filter=depth8]
// Each model is trained on first use by tools/xgboost_oracle.py (python3-xgboost): "depth6" is
// shaped like the demo model (depth 6, 300 trees), "depth8" is the 500-tree depth-8 model. The
// rows are the oracle's held-out rows (10% missing), cycled. Both sides run on one thread
// (XGBoost's nthread = 1), except the *Threads benchmarks, which give both the same number.
//
// Before anything is timed, our margins are checked to equal XGBoost's bit for bit on every row,
// single-row and batch paths alike (and our SHAP values to be within 1e-4 of pred_contribs), so
// both sides compute the same thing. XGBoost gets its cheapest input: float32 rows and their
// array-interface strings and DMatrix handles are built outside the timed loop, so what it is
// timed on is the call itself (parsing the interface and config, its proxy DMatrix, the trees).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "benchmark/benchmark.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/model_file.h"
#include "vigil/model/tree_shap.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"
#include "xgboost/c_api.h"

namespace vigil {
namespace {

constexpr size_t kBatch = 1024;
// pred_contribs rows per call: enough to amortise XGBoost's per-call work (it recomputes every
// node's mean value on each call) the way a batch explainer would.
constexpr size_t kContribsBatch = 64;
constexpr double kShapTolerance = 1e-4;  // XGBoost 1.7 computes SHAP values in float32

bool Smoke() { return std::getenv("VIGIL_BENCH_SMOKE") != nullptr; }

struct ModelSpec {
  int seed;
  int depth;
  int trees;
  // Enough training rows that trees grow to their depth (with 2,000 most stop at depth 3-5).
  int train_rows;
};
constexpr ModelSpec kDepth6{1, 6, 300, 50'000};
constexpr ModelSpec kDepth8{4, 8, 500, 50'000};

// One model, loaded by both sides, with its rows in the layouts each side takes.
struct Fixture {
  std::string error;  // when set, every benchmark of this model is skipped with it
  std::shared_ptr<const TreeEnsemble> model;
  std::optional<CpuPredictor> predictor;
  std::optional<TreeShapExplainer> shap;
  BoosterHandle booster = nullptr;
  std::string label;
  size_t width = 0;
  size_t n = 0;                 // rows in rows.csv
  std::vector<double> rows;     // row i at rows[i * width], NaN = missing
  std::vector<double> batch;    // kBatch rows cycling through "rows"
  std::vector<float> rows_f32;  // the same rows as XGBoost reads them
  std::vector<float> batch_f32;
  std::vector<std::string> row_interface;       // array interface of each row of rows_f32
  std::string batch_interface;                  // array interface of batch_f32
  std::vector<DMatrixHandle> contribs_batches;  // batch_f32 in blocks of kContribsBatch rows
  std::optional<std::string> shap_error;        // the SHAP check's outcome, once run
};

std::string XgbError(const char* call) { return absl::StrCat(call, ": ", XGBGetLastError()); }

std::string ArrayInterface(const float* data, size_t rows, size_t cols) {
  return absl::StrFormat(
      R"({"data": [%d, true], "shape": [%d, %d], "typestr": "<f4", "version": 3})",
      reinterpret_cast<uintptr_t>(data), rows, cols);
}

// XGBoosterPredictFromDense's config for margins (type 1), without the output transform, as
// CpuPredictor::Margins computes them. 1.7 requires "cache_id"; 0 is the only value it takes
// (no prediction cache), as the Python package passes.
constexpr char kMarginConfig[] =
    R"({"type": 1, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
    R"("strict_shape": false, "missing": NaN, "cache_id": 0})";
// XGBoosterPredictFromDMatrix's config for SHAP values (type 2, pred_contribs); in-place
// prediction offers only values and margins.
constexpr char kContribsConfig[] =
    R"({"type": 2, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
    R"("strict_shape": false})";

// Margins of the n rows behind "interface", by XGBoost.
const float* XgbMargins(BoosterHandle booster, const std::string& interface, size_t n,
                        std::string* error) {
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  if (XGBoosterPredictFromDense(booster, interface.c_str(), kMarginConfig, nullptr, &shape, &dim,
                                &out) != 0) {
    *error = XgbError("XGBoosterPredictFromDense");
    return nullptr;
  }
  if (dim != 1 || shape[0] != n) {
    *error = absl::StrCat("XGBoosterPredictFromDense: unexpected output shape, dim ", dim);
    return nullptr;
  }
  return out;
}

std::string Load(const std::string& dir, Fixture& f) {
  auto model = LoadModelFile(dir + "/model.json");
  if (!model.ok()) return model.status().ToString();
  f.model = *std::move(model);

  std::ifstream in(dir + "/rows.csv");
  std::string line;
  if (!std::getline(in, line)) return "rows.csv is empty";
  const std::vector<std::string> header = absl::StrSplit(line, ',');
  f.width = header.size();
  while (std::getline(in, line)) {
    for (absl::string_view cell : absl::StrSplit(line, ',')) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (!cell.empty() && !absl::SimpleAtod(cell, &v)) return absl::StrCat("rows.csv: ", cell);
      f.rows.push_back(v);
    }
  }
  f.n = f.rows.size() / f.width;
  if (f.n == 0 || f.rows.size() != f.n * f.width) return "rows.csv is ragged";

  auto predictor = CpuPredictor::Create(f.model, header, "rows.csv");
  if (!predictor.ok()) return predictor.status().ToString();
  if (predictor->num_groups() != 1) return "expected a single-group model";
  f.predictor.emplace(*std::move(predictor));
  auto shap = TreeShapExplainer::Create(f.model, header, "rows.csv");
  if (!shap.ok()) return shap.status().ToString();
  f.shap.emplace(*std::move(shap));

  if (XGBoosterCreate(nullptr, 0, &f.booster) != 0) return XgbError("XGBoosterCreate");
  if (XGBoosterLoadModel(f.booster, (dir + "/model.json").c_str()) != 0) {
    return XgbError("XGBoosterLoadModel");
  }
  if (XGBoosterSetParam(f.booster, "nthread", "1") != 0) return XgbError("XGBoosterSetParam");
  return "";
}

// Lays out the rows for both sides and checks that both score them the same.
std::string Prepare(Fixture& f) {
  for (size_t i = 0; i < kBatch; ++i) {
    const size_t r = i % f.n;
    f.batch.insert(f.batch.end(), f.rows.begin() + r * f.width, f.rows.begin() + (r + 1) * f.width);
  }
  f.rows_f32.assign(f.rows.begin(), f.rows.end());
  f.batch_f32.assign(f.batch.begin(), f.batch.end());
  for (size_t i = 0; i < f.n; ++i) {
    f.row_interface.push_back(ArrayInterface(&f.rows_f32[i * f.width], 1, f.width));
  }
  f.batch_interface = ArrayInterface(f.batch_f32.data(), kBatch, f.width);
  for (size_t b = 0; b < kBatch; b += kContribsBatch) {
    DMatrixHandle m = nullptr;
    if (XGDMatrixCreateFromMat(&f.batch_f32[b * f.width], kContribsBatch, f.width,
                               std::numeric_limits<float>::quiet_NaN(), &m) != 0) {
      return XgbError("XGDMatrixCreateFromMat");
    }
    f.contribs_batches.push_back(m);
  }

  std::string error;
  for (size_t i = 0; i < f.n; ++i) {
    const float* xgb = XgbMargins(f.booster, f.row_interface[i], 1, &error);
    if (xgb == nullptr) return error;
    const double ours = f.predictor->Margin(absl::MakeConstSpan(&f.rows[i * f.width], f.width));
    if (ours != static_cast<double>(*xgb)) {
      return absl::StrFormat("single row %d: margin %.9g, XGBoost %.9g", i, ours, *xgb);
    }
  }
  std::vector<double> ours(kBatch);
  f.predictor->MarginsBatch(f.batch, kBatch, absl::MakeSpan(ours));
  const float* xgb = XgbMargins(f.booster, f.batch_interface, kBatch, &error);
  if (xgb == nullptr) return error;
  for (size_t i = 0; i < kBatch; ++i) {
    if (ours[i] != static_cast<double>(xgb[i])) {
      return absl::StrFormat("batch row %d: margin %.9g, XGBoost %.9g", i, ours[i], xgb[i]);
    }
  }

  // Internal nodes visited per tree per row, so ns_per_tree_per_row can be read per node.
  int64_t visited = 0;
  const TreeEnsemble& m = *f.model;
  for (size_t i = 0; i < f.n; ++i) {
    for (size_t t = 0; t < m.num_trees(); ++t) {
      for (auto node = static_cast<int32_t>(m.tree_begin[t]); !m.is_leaf(node); ++visited) {
        const uint32_t column = f.shap->column(static_cast<size_t>(m.feature[node]));
        node = m.Next(static_cast<size_t>(node), f.rows[i * f.width + column]);
      }
    }
  }
  f.label = absl::StrFormat("%d trees, %.1f nodes/tree, %.2f splits/tree/row", m.num_trees(),
                            static_cast<double>(m.num_nodes()) / m.num_trees(),
                            static_cast<double>(visited) / (m.num_trees() * f.n));
  return "";
}

// Trains "spec" with the oracle on first use (a model per spec, for the process's lifetime).
Fixture& Get(const ModelSpec& spec) {
  static auto* fixtures = new std::map<const ModelSpec*, Fixture>;
  auto [it, inserted] = fixtures->try_emplace(&spec);
  Fixture& f = it->second;
  if (!inserted) return f;
  // VIGIL_BENCH_MODELS=DIR: models trained elsewhere, in DIR/seed<S>_depth<D>_trees<T>/ (as
  // tools/xgboost_oracle.py writes them), for machines without python3-xgboost.
  if (const char* models = std::getenv("VIGIL_BENCH_MODELS"); models != nullptr && !Smoke()) {
    const std::string dir =
        absl::StrCat(models, "/seed", spec.seed, "_depth", spec.depth, "_trees", spec.trees);
    f.error = Load(dir, f);
    if (f.error.empty()) f.error = Prepare(f);
    return f;
  }
  char dir_template[] = "/tmp/vigil_predictor_bench_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    f.error = "mkdtemp failed";
    return f;
  }
  const std::string log = absl::StrCat(dir, "/oracle.log");
  std::vector<std::string> args = {testing::SourceDir() + "/tools/xgboost_oracle.py", dir, "--seed",
                                   std::to_string(spec.seed)};
  if (Smoke()) {
    args.insert(args.end(), {"--depth", "3", "--trees", "5", "--train-rows", "300"});
  } else {
    args.insert(args.end(),
                {"--depth", std::to_string(spec.depth), "--trees", std::to_string(spec.trees),
                 "--train-rows", std::to_string(spec.train_rows)});
  }
  if (testing::RunProcess("/usr/bin/python3", args, log) != 0) {
    // The directory is kept for its log.
    f.error = absl::StrCat(
        "tools/xgboost_oracle.py failed (scripts/setup installs "
        "python3-xgboost); see ",
        log);
    return f;
  }
  f.error = Load(dir, f);
  if (f.error.empty()) f.error = Prepare(f);
  std::filesystem::remove_all(dir);
  return f;
}

// Our SHAP values against pred_contribs on every row, the first time a SHAP benchmark runs
// (it costs as much as the benchmark itself on the larger models).
const std::string& CheckShap(Fixture& f) {
  if (f.shap_error.has_value()) return *f.shap_error;
  f.shap_error.emplace();
  const size_t per_row = f.shap->output_size();
  std::vector<double> phi(per_row);
  for (size_t b = 0; b < f.contribs_batches.size(); ++b) {
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* xgb = nullptr;
    if (XGBoosterPredictFromDMatrix(f.booster, f.contribs_batches[b], kContribsConfig, &shape, &dim,
                                    &xgb) != 0) {
      return *f.shap_error = XgbError("XGBoosterPredictFromDMatrix");
    }
    if (dim != 2 || shape[0] != kContribsBatch || shape[1] != per_row) {
      return *f.shap_error = "XGBoosterPredictFromDMatrix: unexpected output shape";
    }
    // Batch rows repeat rows.csv; each distinct row is checked once.
    for (size_t j = 0; j < kContribsBatch; ++j) {
      const size_t i = b * kContribsBatch + j;
      if (i >= f.n) return *f.shap_error;
      f.shap->Explain(absl::MakeConstSpan(&f.batch[i * f.width], f.width), absl::MakeSpan(phi));
      for (size_t k = 0; k < per_row; ++k) {
        if (std::abs(phi[k] - xgb[j * per_row + k]) > kShapTolerance) {
          return *f.shap_error = absl::StrFormat("row %d value %d: SHAP %.9g, XGBoost %.9g", i, k,
                                                 phi[k], xgb[j * per_row + k]);
        }
      }
    }
  }
  return *f.shap_error;
}

Fixture* Setup(benchmark::State& state, const ModelSpec& spec) {
  Fixture& f = Get(spec);
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return nullptr;
  }
  state.SetLabel(f.label);
  return &f;
}

void ReportRows(benchmark::State& state, const Fixture& f, size_t rows_per_iteration,
                bool per_tree) {
  const auto rows =
      static_cast<double>(state.iterations()) * static_cast<double>(rows_per_iteration);
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  if (per_tree) {
    state.counters["ns_per_tree_per_row"] =
        benchmark::Counter(rows * static_cast<double>(f.model->num_trees()) / 1e9,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  }
}

// One row per call: the scoring latency of a single transaction.
void BM_Vigil_SingleRow(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        f->predictor->Margin(absl::MakeConstSpan(&f->rows[i * f->width], f->width)));
    if (++i == f->n) i = 0;
  }
  ReportRows(state, *f, 1, true);
}

void BM_Xgboost_SingleRow(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  size_t i = 0;
  for (auto _ : state) {
    if (XGBoosterPredictFromDense(f->booster, f->row_interface[i].c_str(), kMarginConfig, nullptr,
                                  &shape, &dim, &out) != 0) {
      state.SkipWithError(XgbError("XGBoosterPredictFromDense").c_str());
      break;
    }
    benchmark::DoNotOptimize(*out);
    if (++i == f->n) i = 0;
  }
  ReportRows(state, *f, 1, true);
}

// kBatch rows per call, one thread: throughput when transactions arrive in batches (replay).
void BM_Vigil_Batch1024(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  std::vector<double> margins(kBatch);
  for (auto _ : state) {
    f->predictor->MarginsBatch(f->batch, kBatch, absl::MakeSpan(margins));
    benchmark::ClobberMemory();
  }
  ReportRows(state, *f, kBatch, true);
}

void BM_Xgboost_Batch1024(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  for (auto _ : state) {
    if (XGBoosterPredictFromDense(f->booster, f->batch_interface.c_str(), kMarginConfig, nullptr,
                                  &shape, &dim, &out) != 0) {
      state.SkipWithError(XgbError("XGBoosterPredictFromDense").c_str());
      break;
    }
    benchmark::DoNotOptimize(*out);
  }
  ReportRows(state, *f, kBatch, true);
}

// kBatch rows per call on state.range(0) threads, both sides: vigil splits the batch into
// whole 64-row blocks, one thread each (MarginsBatchParallel starts its threads per call);
// XGBoost runs its OpenMP pool with nthread set to the same number.
void BM_Vigil_Batch1024Threads(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  const auto threads = static_cast<int>(state.range(0));
  std::vector<double> margins(kBatch);
  for (auto _ : state) {
    f->predictor->MarginsBatchParallel(f->batch, kBatch, absl::MakeSpan(margins), threads);
    benchmark::ClobberMemory();
  }
  ReportRows(state, *f, kBatch, true);
}

void BM_Xgboost_Batch1024Threads(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  const std::string threads = absl::StrCat(state.range(0));
  if (XGBoosterSetParam(f->booster, "nthread", threads.c_str()) != 0) {
    state.SkipWithError(XgbError("XGBoosterSetParam").c_str());
    return;
  }
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  for (auto _ : state) {
    if (XGBoosterPredictFromDense(f->booster, f->batch_interface.c_str(), kMarginConfig, nullptr,
                                  &shape, &dim, &out) != 0) {
      state.SkipWithError(XgbError("XGBoosterPredictFromDense").c_str());
      break;
    }
    benchmark::DoNotOptimize(*out);
  }
  XGBoosterSetParam(f->booster, "nthread", "1");  // the other benchmarks run one thread
  ReportRows(state, *f, kBatch, true);
}

// SHAP values of one row per call (the explainer has no batch path).
void BM_Vigil_TreeShap(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  if (const std::string& error = CheckShap(*f); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::vector<double> phi(f->shap->output_size());
  size_t i = 0;
  for (auto _ : state) {
    f->shap->Explain(absl::MakeConstSpan(&f->rows[i * f->width], f->width), absl::MakeSpan(phi));
    benchmark::ClobberMemory();
    if (++i == f->n) i = 0;
  }
  ReportRows(state, *f, 1, false);
}

// pred_contribs on kContribsBatch rows per call; items are rows.
void BM_Xgboost_PredContribs(benchmark::State& state, const ModelSpec& spec) {
  Fixture* f = Setup(state, spec);
  if (f == nullptr) return;
  if (const std::string& error = CheckShap(*f); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  size_t b = 0;
  for (auto _ : state) {
    if (XGBoosterPredictFromDMatrix(f->booster, f->contribs_batches[b], kContribsConfig, &shape,
                                    &dim, &out) != 0) {
      state.SkipWithError(XgbError("XGBoosterPredictFromDMatrix").c_str());
      break;
    }
    benchmark::DoNotOptimize(*out);
    if (++b == f->contribs_batches.size()) b = 0;
  }
  ReportRows(state, *f, kContribsBatch, false);
}

BENCHMARK_CAPTURE(BM_Vigil_SingleRow, depth6_trees300, kDepth6);
BENCHMARK_CAPTURE(BM_Xgboost_SingleRow, depth6_trees300, kDepth6);
BENCHMARK_CAPTURE(BM_Vigil_Batch1024, depth6_trees300, kDepth6)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Xgboost_Batch1024, depth6_trees300, kDepth6)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Vigil_Batch1024Threads, depth6_trees300, kDepth6)
    ->Arg(4)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Xgboost_Batch1024Threads, depth6_trees300, kDepth6)
    ->Arg(4)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Vigil_TreeShap, depth6_trees300, kDepth6)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Xgboost_PredContribs, depth6_trees300, kDepth6)->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(BM_Vigil_SingleRow, depth8_trees500, kDepth8);
BENCHMARK_CAPTURE(BM_Xgboost_SingleRow, depth8_trees500, kDepth8);
BENCHMARK_CAPTURE(BM_Vigil_Batch1024, depth8_trees500, kDepth8)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Xgboost_Batch1024, depth8_trees500, kDepth8)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Vigil_Batch1024Threads, depth8_trees500, kDepth8)
    ->Arg(4)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Xgboost_Batch1024Threads, depth8_trees500, kDepth8)
    ->Arg(4)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Vigil_TreeShap, depth8_trees500, kDepth8)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Xgboost_PredContribs, depth8_trees500, kDepth8)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
