// CudaScorer against the CPU backend. Every test but the first two needs a CUDA device and
// skips, naming the runtime's reason, where none answers (no driver, no GPU, a build without
// CUDA); scripts/gpu-check runs them on a GPU host.
#include "vigil/model/cuda/cuda_scorer.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/cuda/forest_layout.h"
#include "vigil/model/cuda/testing_random_forest.h"
#include "vigil/model/cuda/ranked_forest.h"
#include "vigil/model/model_file.h"
#include "vigil/model/tree_shap.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

#if defined(VIGIL_CUDA_BUILT)
#include "vigil/model/cuda/forest_kernels.h"
#include "vigil/model/cuda/testing_forest_kernels.h"
#endif

namespace vigil {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using vigil::testing::StatusIs;

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    const auto device = ProbeCudaDevice();                                     \
    if (!device.ok()) GTEST_SKIP() << device.status().message();               \
  } while (false)

std::shared_ptr<const TreeEnsemble> Random(int trees, int depth, int features, uint64_t seed,
                                           double early_leaf = 0.0) {
  vigil::testing::RandomForestSpec spec;
  spec.trees = trees;
  spec.depth = depth;
  spec.features = features;
  spec.early_leaf = early_leaf;
  spec.seed = seed;
  return std::make_shared<const TreeEnsemble>(vigil::testing::RandomForest(spec));
}

// Without a usable device (or without CUDA in the build), Create says why instead of failing
// later: the server refuses to start with this message when its configuration asks for the GPU.
TEST(CudaScorer, WithoutADeviceCreateSaysWhy) {
  if (ProbeCudaDevice().ok()) GTEST_SKIP() << "a CUDA device is present";
  auto model = Random(3, 3, 4, 1);
  auto scorer = CudaScorer::Create(model, model->feature_names, "m");
  EXPECT_THAT(scorer.status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       AnyOf(HasSubstr("no CUDA device"), HasSubstr("without the CUDA backend"))));
  if (!CudaBackendBuilt()) {
    EXPECT_THAT(scorer.status().message(), HasSubstr("VIGIL_ENABLE_CUDA"));
  }
}

TEST(CudaScorer, OptionsAreValidated) {
  if (!CudaBackendBuilt()) GTEST_SKIP() << "built without CUDA";
  CudaScorerOptions o;
  o.small_batch_rows = 1000;
  EXPECT_THAT(o.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("cuda.small_batch_rows")));
  o = {};
  o.chunk_rows = 512;
  EXPECT_THAT(o.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cuda.chunk_rows")));
  o = {};
  o.timeout = std::chrono::microseconds(0);
  EXPECT_THAT(o.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("timeout")));
}

// GPU margins equal the CPU predictor's bit for bit, and scores equal CpuScorer's, for batches
// that take the graph path (1, 3, 1024) and the chunked path (several chunks, a ragged end).
void ExpectScoresMatchCpu(std::shared_ptr<const TreeEnsemble> model, const std::vector<double>& rows,
                          size_t n, CudaScorerOptions options = {}) {
  const auto& columns = model->feature_names;
  const size_t width = columns.size();
  auto gpu = CudaScorer::Create(model, columns, "m", options);
  ASSERT_OK(gpu);
  auto predictor = CpuPredictor::Create(model, columns, "columns");
  ASSERT_OK(predictor);
  auto schema = FeatureSchema::Create("t.v1", columns);
  ASSERT_OK(schema);
  auto cpu = CpuScorer::Create(model, **schema, "m");
  ASSERT_OK(cpu);
  std::vector<double> want_margins(n), want_scores(n);
  predictor->MarginsBatch(rows, n, absl::MakeSpan(want_margins));
  ASSERT_OK((*cpu)->Score(rows, n, absl::MakeSpan(want_scores)));
  for (size_t batch : {size_t{1}, size_t{3}, size_t{1024}, n}) {
    if (batch > n) continue;
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    std::vector<float> margins(batch, std::nanf(""));
    std::vector<double> scores(batch, -1.0);
    const auto slice = absl::MakeConstSpan(rows).subspan(0, batch * width);
    ASSERT_OK((*gpu)->Margins(slice, batch, absl::MakeSpan(margins)));
    ASSERT_OK((*gpu)->Score(slice, batch, absl::MakeSpan(scores)));
    for (size_t i = 0; i < batch; ++i) {
      ASSERT_EQ(static_cast<double>(margins[i]), want_margins[i]) << "row " << i;
      ASSERT_EQ(scores[i], want_scores[i]) << "row " << i;
    }
  }
}

TEST(CudaScorer, RandomModelsScoreAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  CudaScorerOptions options;
  options.chunk_rows = 4096;  // several chunks below
  for (int depth = 1; depth <= 12; ++depth) {
    SCOPED_TRACE(absl::StrCat("depth ", depth));
    const int trees = depth <= 8 ? 250 * depth : 300;
    auto model = Random(trees, depth, 32, static_cast<uint64_t>(depth), depth > 8 ? 0.3 : 0.1);
    const size_t n = 10000;
    ExpectScoresMatchCpu(model, vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 7), n,
                         options);
  }
}

TEST(CudaScorer, TwoThousandTreesScoreAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(2000, 8, 32, 99, 0.1);
  const size_t n = 5000;
  ExpectScoresMatchCpu(model, vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 8), n);
}

// Large batches run the ranked kernel (rows16ranked) by default, rows4 without ranked nodes or
// where a model's do not fit 4 bytes (the complete depth-12 trees: about 38,000 thresholds an
// input, 16 rank bits, beside 12 offset bits, 6 slot bits and the missing bit); each gives the
// CPU's bits, missing values included.
TEST(CudaScorer, LargeBatchesScoreAsTheCpuDoesWithAndWithoutRankedNodes) {
  const bool device = ProbeCudaDevice().ok();
  struct Case {
    int depth, trees;
    double early_leaf;
    bool fits;
  };
  for (const Case& c : {Case{3, 400, 0.2, true}, Case{8, 400, 0.2, true},
                        Case{10, 150, 0.2, true}, Case{12, 300, 0.0, false}}) {
    const int depth = c.depth;
    auto model = Random(c.trees, depth, 32, static_cast<uint64_t>(100 + depth), c.early_leaf);
    auto layout = cuda::ForestLayout::Build(*model);
    ASSERT_OK(layout);
    ASSERT_EQ(cuda::RankedForest::Build(*layout).ok(), c.fits) << "depth " << depth;
    if (!device) continue;
    const size_t n = 70000;  // past ChoosePredictVariant's row-kernel threshold on any GPU today
    const auto rows = vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 200 + depth);
    for (bool ranked : {true, false}) {
      SCOPED_TRACE(absl::StrCat("depth ", depth, ranked ? ", ranked nodes" : ", without"));
      CudaScorerOptions options;
      options.ranked_nodes = ranked;
      ExpectScoresMatchCpu(model, rows, n, options);
    }
  }
  if (!device) GTEST_SKIP() << "no CUDA device: only the ranked nodes' fit was checked";
}

// Small batches through copies (zero_copy_small off; by default the kernel reads and writes
// pinned host memory) give the same bits.
TEST(CudaScorer, CopiedSmallBatchesScoreAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  CudaScorerOptions options;
  options.zero_copy_small = false;
  auto model = Random(500, 8, 32, 71, 0.1);
  const size_t n = 3000;
  ExpectScoresMatchCpu(model, vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 72), n,
                       options);
}

// Rows too wide to stage in shared memory (300 inputs) are read from global memory.
TEST(CudaScorer, WideRowsScoreAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(100, 6, 300, 61, 0.1);
  const size_t n = 70000;
  ExpectScoresMatchCpu(model, vigil::testing::RandomRows(*model, n, 300, 0.1, 0.05, 62), n);
}

TEST(CudaScorer, TheDemoModelScoresAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  auto model = LoadModelFile(vigil::testing::TestDataPath("models/demo_model.json"));
  ASSERT_OK(model);
  const size_t n = 20000, width = (*model)->feature_names.size();
  ExpectScoresMatchCpu(*model, vigil::testing::ThresholdRows(**model, n, width, 0.05, 11), n);
}

#if defined(VIGIL_CUDA_BUILT)
// Every kernel variant, production's and the comparisons' (testing_forest_kernels.h), launched
// directly on device-resident rows, gives the same bits, for one row, a few and thousands.
void ExpectEveryVariantGivesTheSameMargins(std::shared_ptr<const TreeEnsemble> model,
                                           const std::vector<double>& rows, size_t n) {
  auto gpu = CudaScorer::Create(model, model->feature_names, "m", CudaScorerOptions{});
  ASSERT_OK(gpu);
  // The ranked variant runs its own kernel here, not rows4 in its place.
  ASSERT_NE(CudaScorerTesting::Forest(**gpu).ranked_words, nullptr);
  std::vector<float> want(n);
  ASSERT_OK((*gpu)->Margins(rows, n, absl::MakeSpan(want)));
  // The scorer's own choice already equals the CPU (above); each variant equals it.
  for (const cuda::AnyPredictVariant v : cuda::kAllPredictVariants) {
    for (size_t rows_now : {size_t{1}, size_t{3}, n}) {
      SCOPED_TRACE(absl::StrCat(cuda::PredictVariantName(v), ", ", rows_now, " rows"));
      std::vector<float> got(rows_now, std::nanf(""));
      ASSERT_OK(cuda::MarginsWithVariant(**gpu, rows, rows_now, v, absl::MakeSpan(got)));
      for (size_t i = 0; i < rows_now; ++i) ASSERT_EQ(got[i], want[i]) << "row " << i;
    }
  }
}

TEST(CudaScorer, EveryKernelVariantGivesTheSameMargins) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(300, 8, 32, 5, 0.1);
  const size_t n = 3000;
  ExpectEveryVariantGivesTheSameMargins(
      model, vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 9), n);
  auto demo = LoadModelFile(vigil::testing::TestDataPath("models/demo_model.json"));
  ASSERT_OK(demo);
  const size_t width = (*demo)->feature_names.size();
  ExpectEveryVariantGivesTheSameMargins(
      *demo, vigil::testing::ThresholdRows(**demo, n, width, 0.05, 12), n);
}
#endif

void ExpectShapMatchesCpu(std::shared_ptr<const TreeEnsemble> model, const std::vector<double>& rows,
                          size_t n) {
  const auto& columns = model->feature_names;
  const size_t width = columns.size();
  CudaScorerOptions options;
  options.shap_chunk_rows = 512;  // several device passes
  auto gpu = CudaScorer::Create(model, columns, "m", options);
  ASSERT_OK(gpu);
  auto explainer = TreeShapExplainer::Create(model, columns, "columns");
  ASSERT_OK(explainer);
  ASSERT_EQ((*gpu)->shap_width(), explainer->output_size());
  std::vector<double> got(n * (width + 1), std::nan("")), want(width + 1);
  ASSERT_OK((*gpu)->ShapValues(rows, n, absl::MakeSpan(got)));
  for (size_t i = 0; i < n; ++i) {
    explainer->Explain(absl::MakeConstSpan(rows).subspan(i * width, width), absl::MakeSpan(want));
    for (size_t f = 0; f <= width; ++f) {
      ASSERT_NEAR(got[i * (width + 1) + f], want[f], 1e-5) << "row " << i << " feature " << f;
    }
  }
}

TEST(CudaScorer, RandomModelsExplainAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  for (int depth : {1, 2, 4, 6, 8, 10, 12}) {
    SCOPED_TRACE(absl::StrCat("depth ", depth));
    auto model = Random(depth <= 8 ? 200 : 40, depth, 32, 20 + static_cast<uint64_t>(depth),
                        depth > 8 ? 0.3 : 0.1);
    const size_t n = 1500;
    ExpectShapMatchesCpu(model, vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 3), n);
  }
}

// Rows too wide for the SHAP kernel's shared memory (500 inputs) are explained on the host.
TEST(CudaScorer, WideRowsExplainAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(30, 6, 500, 81, 0.1);
  const size_t n = 100;
  ExpectShapMatchesCpu(model, vigil::testing::RandomRows(*model, n, 500, 0.1, 0.05, 82), n);
}

TEST(CudaScorer, TheDemoModelExplainsAsTheCpuDoes) {
  SKIP_WITHOUT_DEVICE();
  auto model = LoadModelFile(vigil::testing::TestDataPath("models/demo_model.json"));
  ASSERT_OK(model);
  const size_t n = 2000, width = (*model)->feature_names.size();
  ExpectShapMatchesCpu(*model, vigil::testing::ThresholdRows(**model, n, width, 0.05, 12), n);
}

// Many threads, every priority class, mixed sizes at once: every answer is the CPU's.
TEST(CudaScorer, ConcurrentCallsOfEveryClassAreAllRight) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(500, 8, 32, 31, 0.1);
  auto gpu = CudaScorer::Create(model, model->feature_names, "m");
  ASSERT_OK(gpu);
  auto predictor = CpuPredictor::Create(model, model->feature_names, "columns");
  ASSERT_OK(predictor);
  const size_t n = 5000;
  const std::vector<double> rows = vigil::testing::RandomRows(*model, n, 32, 0.1, 0.05, 4);
  std::vector<double> want(n);
  predictor->MarginsBatch(rows, n, absl::MakeSpan(want));
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&, t] {
      ScoreContext context;
      context.priority = static_cast<Priority>(t % 3);
      for (int k = 0; k < 40; ++k) {
        const size_t first = static_cast<size_t>((t * 977 + k * 131) % 3000);
        const size_t count = t % 4 == 3 ? 1800 : static_cast<size_t>(1 + (k * 37) % 300);
        std::vector<float> got(count);
        const auto status = (*gpu)->Margins(absl::MakeConstSpan(rows).subspan(first * 32, count * 32),
                                            count, absl::MakeSpan(got), context);
        if (!status.ok()) {
          ++failed;
          continue;
        }
        for (size_t i = 0; i < count; ++i) {
          if (static_cast<double>(got[i]) != want[first + i]) ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  const CudaScorer::Stats stats = (*gpu)->stats();
  EXPECT_EQ(stats.calls, 12u * 40u);
  EXPECT_GT(stats.graph_launches, 0u);
  EXPECT_GT(stats.chunks, 0u);
}

// A call whose deadline has passed fails as a deadline, is counted, and leaves the scorer whole.
TEST(CudaScorer, APassedDeadlineIsReportedAndCounted) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(2000, 8, 32, 41, 0.0);
  auto gpu = CudaScorer::Create(model, model->feature_names, "m");
  ASSERT_OK(gpu);
  const size_t n = 200000;
  const std::vector<double> rows = vigil::testing::RandomRows(*model, n, 32, 0.0, 0.0, 5);
  std::vector<double> scores(n);
  ScoreContext late;
  late.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  EXPECT_THAT((*gpu)->Score(rows, n, absl::MakeSpan(scores), late),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ((*gpu)->stats().timeouts, 1u);
  // The abandoned buffers come back once the device is done with them.
  ASSERT_OK((*gpu)->Score(rows, 2000, absl::MakeSpan(scores)));
  ASSERT_OK((*gpu)->Score(rows, n, absl::MakeSpan(scores)));
}

TEST(CudaScorer, ExplainGivesTheCpuReasons) {
  SKIP_WITHOUT_DEVICE();
  auto model = Random(50, 6, 8, 51, 0.1);
  auto gpu = CudaScorer::Create(model, model->feature_names, "m");
  ASSERT_OK(gpu);
  auto schema = FeatureSchema::Create("t.v1", model->feature_names);
  ASSERT_OK(schema);
  auto cpu = CpuScorer::Create(model, **schema, "m");
  ASSERT_OK(cpu);
  const std::vector<double> row = vigil::testing::RandomRows(*model, 1, 8, 0.1, 0.1, 6);
  auto want = (*cpu)->Explain(row, 3);
  auto got = (*gpu)->Explain(row, 3);
  ASSERT_OK(want);
  ASSERT_OK(got);
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) EXPECT_EQ((*got)[i].code, (*want)[i].code);
}

TEST(CudaScorer, RefusesModelsWithoutOneProbability) {
  SKIP_WITHOUT_DEVICE();
  auto m = vigil::testing::RandomForest({});
  m.link = ModelLink::kIdentity;
  m.objective = "reg:squarederror";
  auto model = std::make_shared<const TreeEnsemble>(m);
  EXPECT_THAT(CudaScorer::Create(model, model->feature_names, "m").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("one probability")));
}

}  // namespace
}  // namespace vigil
