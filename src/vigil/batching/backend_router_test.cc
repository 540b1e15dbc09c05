#include "vigil/batching/backend_router.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/testing_models.h"
#include "vigil/model/xgboost_json.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using testing::StatusIs;
using ::testing::HasSubstr;

std::shared_ptr<const CpuScorer> RealCpuScorer(const std::string& version = "m@1") {
  auto model = LoadXgboostJson(testing::kXgboostTwoTrees, "m.json");
  auto schema = FeatureSchema::Create("t.v1", {"a", "b"});
  auto scorer = CpuScorer::Create(std::make_shared<const TreeEnsemble>(*model), **schema, version);
  return std::shared_ptr<const CpuScorer>(std::move(*scorer));
}

// The GPU side of these tests: the real CPU scorer's answers (no GPU here), reported as the
// GPU's, with faults the test injects (an error, a stall until the deadline, busy buffers).
class FaultyGpu final : public Scorer {
 public:
  enum class Fault { kNone, kError, kStall, kBusy };
  explicit FaultyGpu(std::shared_ptr<const Scorer> real) : real_(std::move(real)) {}
  const std::string& model_version() const override { return real_->model_version(); }
  size_t row_width() const override { return real_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    ++calls;
    last_deadline = context.deadline;
    switch (fault) {
      case Fault::kError: return absl::InternalError("CUDA cudaGraphLaunch: cudaErrorIllegalAddress");
      case Fault::kBusy: return absl::ResourceExhaustedError("all GPU buffers busy");
      case Fault::kStall:
        std::this_thread::sleep_until(*context.deadline);
        return absl::DeadlineExceededError("the GPU did not answer before the call's deadline");
      case Fault::kNone: break;
    }
    ScoreContext inner = context;
    inner.backend = nullptr;
    if (context.backend != nullptr) *context.backend = ScoreBackend::kGpu;
    return real_->Score(rows, n, scores, inner);
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return real_->Explain(row, k);
  }
  Fault fault = Fault::kNone;
  mutable int calls = 0;
  mutable std::optional<std::chrono::steady_clock::time_point> last_deadline;

 private:
  std::shared_ptr<const Scorer> real_;
};

struct Routed {
  absl::Status status;
  std::vector<double> scores;
  ScoreBackend backend = ScoreBackend::kNone;
};

Routed ScoreVia(const Scorer& s, size_t n, Priority p,
           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
  std::vector<double> rows;
  for (size_t i = 0; i < n; ++i) {
    rows.push_back(i % 3 == 0 ? 1.0 : 2.0);
    rows.push_back(i % 2 == 0 ? -1.0 : 7.0);
  }
  Routed r;
  r.scores.assign(n, -1);
  ScoreContext context;
  context.priority = p;
  context.deadline = deadline;
  context.backend = &r.backend;
  r.status = s.Score(rows, n, absl::MakeSpan(r.scores), context);
  return r;
}

std::vector<double> CpuScores(size_t n) { return ScoreVia(*RealCpuScorer(), n, Priority::kP1).scores; }

BackendRouterConfig Config() {
  BackendRouterConfig c;
  c.gpu_min_rows = {BackendRouterConfig::kNever, 16, 4};
  c.gpu_timeout = milliseconds(20);
  c.breaker = {3, milliseconds(20), milliseconds(50), 1};
  return c;
}

TEST(BackendRouter, SinglesStayOnTheCpuAndBatchesAboveTheClassThresholdGoToTheGpu) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, Config());
  ASSERT_OK(router);
  Routed p0 = ScoreVia(**router, 100, Priority::kP0);  // P0 never goes to the GPU
  ASSERT_OK(p0.status);
  EXPECT_EQ(p0.backend, ScoreBackend::kCpu);
  Routed small = ScoreVia(**router, 15, Priority::kP1);
  EXPECT_EQ(small.backend, ScoreBackend::kCpu);
  Routed big = ScoreVia(**router, 16, Priority::kP1);
  EXPECT_EQ(big.backend, ScoreBackend::kGpu);
  Routed bulk = ScoreVia(**router, 4, Priority::kP2);
  EXPECT_EQ(bulk.backend, ScoreBackend::kGpu);
  EXPECT_EQ(big.scores, CpuScores(16));
  EXPECT_EQ(gpu->calls, 2);
  const BackendRouter::Stats s = (*router)->stats();
  EXPECT_EQ(s.cpu_batches, 2u);
  EXPECT_EQ(s.cpu_rows, 115u);
  EXPECT_EQ(s.gpu_batches, 2u);
  EXPECT_EQ(s.gpu_rows, 20u);
  EXPECT_TRUE((*router)->WouldUseGpu(Priority::kP2, 4));
  EXPECT_FALSE((*router)->WouldUseGpu(Priority::kP0, 100000));
  EXPECT_EQ(ScoreBackendName(big.backend), "gpu");
  EXPECT_EQ(ScoreBackendName(ScoreBackend::kCpuFallback), "cpu-fallback");
}

TEST(BackendRouter, AGpuErrorFallsBackToTheCpuAndIsCounted) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  gpu->fault = FaultyGpu::Fault::kError;
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, Config());
  ASSERT_OK(router);
  Routed r = ScoreVia(**router, 32, Priority::kP1);
  ASSERT_OK(r.status);  // the decision is still the model's
  EXPECT_EQ(r.backend, ScoreBackend::kCpuFallback);
  EXPECT_EQ(r.scores, CpuScores(32));
  EXPECT_EQ((*router)->stats().fallback_error, 1u);
  EXPECT_EQ((*router)->stats().cpu_batches, 1u);
}

TEST(BackendRouter, ALateGpuFallsBackWithinTheDeadline) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  gpu->fault = FaultyGpu::Fault::kStall;
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, Config());
  ASSERT_OK(router);
  // The GPU gets at most gpu_timeout (20 ms) even with a distant deadline...
  auto start = std::chrono::steady_clock::now();
  Routed r = ScoreVia(**router, 32, Priority::kP1, start + std::chrono::seconds(10));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.backend, ScoreBackend::kCpuFallback);
  EXPECT_LE(*gpu->last_deadline, start + milliseconds(21));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
  // ...and no more than the batch's own deadline allows.
  start = std::chrono::steady_clock::now();
  r = ScoreVia(**router, 32, Priority::kP1, start + milliseconds(5));
  ASSERT_OK(r.status);
  EXPECT_LE(*gpu->last_deadline, start + milliseconds(5));
  EXPECT_EQ((*router)->stats().fallback_timeout, 2u);
  EXPECT_EQ(r.scores, CpuScores(32));
  gpu->fault = FaultyGpu::Fault::kStall;
  // A deadline already passed: straight to the CPU, the GPU not asked.
  const int asked = gpu->calls;
  r = ScoreVia(**router, 32, Priority::kP1, std::chrono::steady_clock::now() - milliseconds(1));
  EXPECT_EQ(r.backend, ScoreBackend::kCpu);
  EXPECT_EQ(gpu->calls, asked);
}

// The CPU side, 2 ms a call (so the router measures its cost per row): the real scorer, slowed.
class SlowCpu final : public Scorer {
 public:
  explicit SlowCpu(std::shared_ptr<const Scorer> real) : real_(std::move(real)) {}
  const std::string& model_version() const override { return real_->model_version(); }
  size_t row_width() const override { return real_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    std::this_thread::sleep_for(milliseconds(2));
    return real_->Score(rows, n, scores, context);
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return real_->Explain(row, k);
  }
  bool latency_bounded() const override { return true; }

 private:
  std::shared_ptr<const Scorer> real_;
};

// The GPU's time leaves room for the CPU's own time for the batch; when the deadline is nearer
// than that, the CPU cannot make it either, and the GPU, the faster, gets what is left.
TEST(BackendRouter, TheGpuLeavesTheCpuItsTimeUnlessTheCpuCannotMakeIt) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  auto router = BackendRouter::Create(std::make_shared<SlowCpu>(RealCpuScorer()), gpu, Config());
  ASSERT_OK(router);
  gpu->fault = FaultyGpu::Fault::kError;
  ASSERT_OK(ScoreVia(**router, 32, Priority::kP1).status);  // the CPU: >= 2 ms for 32 rows
  gpu->fault = FaultyGpu::Fault::kNone;
  // Room for the CPU (twice its 2 ms and more) before a 100 ms deadline: the GPU ends earlier.
  // (Far off, so that a loaded machine, where the measured 2 ms call takes several times that,
  // still leaves room.)
  auto deadline = std::chrono::steady_clock::now() + milliseconds(100);
  EXPECT_EQ(ScoreVia(**router, 32, Priority::kP1, deadline).backend, ScoreBackend::kGpu);
  EXPECT_LE(*gpu->last_deadline, deadline - milliseconds(4));
  // No room (3 ms left): the GPU gets all of it.
  deadline = std::chrono::steady_clock::now() + milliseconds(3);
  EXPECT_EQ(ScoreVia(**router, 32, Priority::kP1, deadline).backend, ScoreBackend::kGpu);
  EXPECT_EQ(*gpu->last_deadline, deadline);
}

TEST(BackendRouter, BusyGpuBuffersFallBackWithoutOpeningTheBreaker) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  gpu->fault = FaultyGpu::Fault::kBusy;
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, Config());
  ASSERT_OK(router);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(ScoreVia(**router, 32, Priority::kP1).backend, ScoreBackend::kCpuFallback);
  }
  EXPECT_EQ((*router)->stats().fallback_busy, 10u);
  EXPECT_EQ((*router)->stats().breaker, CircuitBreaker::State::kClosed);
  EXPECT_EQ(gpu->calls, 10);
}

TEST(BackendRouter, AFailingGpuIsSkippedUntilTheBreakerProbesIt) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  gpu->fault = FaultyGpu::Fault::kError;
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, Config());
  ASSERT_OK(router);
  for (int i = 0; i < 3; ++i) ScoreVia(**router, 32, Priority::kP1);
  EXPECT_EQ((*router)->stats().breaker, CircuitBreaker::State::kOpen);
  EXPECT_FALSE((*router)->WouldUseGpu(Priority::kP1, 32));
  Routed r = ScoreVia(**router, 32, Priority::kP1);
  EXPECT_EQ(r.backend, ScoreBackend::kCpu);  // skipped, not a fallback
  EXPECT_EQ((*router)->stats().breaker_skips, 1u);
  EXPECT_EQ(gpu->calls, 3);
  // The GPU recovers; after open_for a probe finds it and closes the breaker.
  gpu->fault = FaultyGpu::Fault::kNone;
  std::this_thread::sleep_for(milliseconds(60));
  EXPECT_EQ(ScoreVia(**router, 32, Priority::kP1).backend, ScoreBackend::kGpu);
  EXPECT_EQ((*router)->stats().breaker, CircuitBreaker::State::kClosed);
}

TEST(BackendRouter, WithoutAGpuEverythingRunsOnTheCpu) {
  auto router = BackendRouter::Create(RealCpuScorer(), nullptr, Config());
  ASSERT_OK(router);
  EXPECT_EQ(ScoreVia(**router, 1000, Priority::kP2).backend, ScoreBackend::kCpu);
  EXPECT_FALSE((*router)->WouldUseGpu(Priority::kP2, 1000));
}

TEST(BackendRouter, ConfigAndPairingAreChecked) {
  BackendRouterConfig c = Config();
  c.gpu_timeout = microseconds(0);
  EXPECT_THAT(BackendRouter::Create(RealCpuScorer(), nullptr, c).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpu.timeout")));
  c = Config();
  c.gpu_min_rows[1] = 0;
  EXPECT_THAT(BackendRouter::Create(RealCpuScorer(), nullptr, c).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpu.min_rows.P1")));
  auto other = std::make_shared<FaultyGpu>(RealCpuScorer("m@2"));
  EXPECT_THAT(BackendRouter::Create(RealCpuScorer(), other, Config()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("same model")));
}

// Behind the batcher, each caller learns the backend of the batch its rows went in.
TEST(BackendRouter, TheBatcherPassesTheBackendToEachCaller) {
  auto gpu = std::make_shared<FaultyGpu>(RealCpuScorer());
  BackendRouterConfig c = Config();
  c.gpu_min_rows = {BackendRouterConfig::kNever, 1, 1};
  auto router = BackendRouter::Create(RealCpuScorer(), gpu, c);
  ASSERT_OK(router);
  BatchPolicyConfig policy = BatchPolicyConfig::Fast();
  policy.inline_when_idle = false;
  auto batcher = BatchingScorer::Create(std::shared_ptr<const Scorer>(std::move(*router)), policy);
  ASSERT_OK(batcher);
  Routed p0 = ScoreVia(**batcher, 1, Priority::kP0);
  ASSERT_OK(p0.status);
  EXPECT_EQ(p0.backend, ScoreBackend::kCpu);
  Routed p1 = ScoreVia(**batcher, 3, Priority::kP1, std::chrono::steady_clock::now() + std::chrono::seconds(1));
  ASSERT_OK(p1.status);
  EXPECT_EQ(p1.backend, ScoreBackend::kGpu);
  // The batch carried its member's deadline to the router.
  ASSERT_TRUE(gpu->last_deadline.has_value());
  gpu->fault = FaultyGpu::Fault::kError;
  Routed fallback = ScoreVia(**batcher, 3, Priority::kP2);
  ASSERT_OK(fallback.status);
  EXPECT_EQ(fallback.backend, ScoreBackend::kCpuFallback);
  EXPECT_EQ(fallback.scores, CpuScores(3));
}

}  // namespace
}  // namespace vigil
