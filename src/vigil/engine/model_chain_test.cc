#include "vigil/engine/model_chain.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/decision/model_registry.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/model_file.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::std::chrono::microseconds;
using ::std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::Pair;
using ::vigil::testing::FakeClock;

constexpr char kRef[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::shared_ptr<const TreeEnsemble> ServeModel() {
  auto model = LoadModelFile(::vigil::testing::TestDataPath("models/serve_model.json"));
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

// Rows of the engine's schema, each column a different value per row.
std::vector<double> Rows(size_t n) {
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> rows(n * width);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = std::fmod(i * 7.3, 1000.0);
  return rows;
}

// Passes calls to "inner"; each call first moves "clock" on by "step" (as a model that slow
// would), and fails while "fail" is set.
class SteppingScorer final : public Scorer {
 public:
  SteppingScorer(std::shared_ptr<const Scorer> inner, FakeClock& clock, microseconds step)
      : inner_(std::move(inner)), clock_(clock), step_(step) {}
  const std::string& model_version() const override { return inner_->model_version(); }
  size_t row_width() const override { return inner_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    clock_.Advance(step_);
    if (fail) return absl::InternalError("model failed");
    return inner_->Score(rows, n, scores, context);
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row,
                                              int k) const override {
    return inner_->Explain(row, k);
  }
  bool latency_bounded() const override { return true; }
  mutable bool fail = false;

 private:
  std::shared_ptr<const Scorer> inner_;
  FakeClock& clock_;
  microseconds step_;
};

TEST(ModelChainOptions, ServeKeepsTheConfiguredTimingAndAllowsTheGpuTimeout) {
  PipelineConfig config;
  config.batcher = BatchPolicyConfig::ComplianceGrade();
  config.breaker.budget = milliseconds(3);
  ModelChainOptions cpu = ModelChainOptions::For(config, PipelineMode::kServe);
  EXPECT_EQ(cpu.batcher.classes[1].max_queue_delay, milliseconds(50));
  EXPECT_EQ(cpu.batcher.classes[1].min_batch, 8u);
  EXPECT_EQ(cpu.breaker.budget, milliseconds(3));

  config.gpu.enabled = true;
  config.gpu.timeout = milliseconds(4);
  config.gpu.min_rows = {1000, 100, 10};
  ModelChainOptions gpu = ModelChainOptions::For(config, PipelineMode::kServe);
  EXPECT_EQ(gpu.breaker.budget, milliseconds(7));
  EXPECT_EQ(gpu.gpu.min_rows[2], 10u);
  EXPECT_EQ(gpu.gpu.timeout, milliseconds(4));
}

TEST(ModelChainOptions, ReplayRemovesEveryWaitButKeepsBatchSizesAndQueues) {
  PipelineConfig config;
  config.batcher = BatchPolicyConfig::ComplianceGrade();
  config.breaker.failure_threshold = 3;
  config.gpu.enabled = true;
  ModelChainOptions o = ModelChainOptions::For(config, PipelineMode::kReplay);
  for (size_t c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(o.batcher.classes[c].max_queue_delay, microseconds(0));
    EXPECT_EQ(o.batcher.classes[c].min_batch, 1u);
    EXPECT_EQ(o.batcher.classes[c].max_batch, config.batcher.classes[c].max_batch);
    EXPECT_EQ(o.batcher.classes[c].max_queue, config.batcher.classes[c].max_queue);
    EXPECT_EQ(o.gpu.min_rows[c], 64u);
  }
  EXPECT_TRUE(o.batcher.inline_when_idle);
  EXPECT_EQ(o.breaker.failure_threshold, 3);
  EXPECT_FALSE(o.breaker.count_slow_calls);
  EXPECT_EQ(o.breaker.budget, config.breaker.budget);  // kept, not consulted
  EXPECT_EQ(o.gpu.timeout, std::chrono::seconds(10));
}

TEST(BuildModelChain, ScoresThroughBatcherAndBreakerAsTheCpuScorerDoes) {
  ModelChainOptions options = ModelChainOptions::For(PipelineConfig{}, PipelineMode::kServe);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ModelDeployment::Model> model,
                             BuildModelChain(ServeModel(), kRef, options));
  EXPECT_EQ(model->ref, kRef);
  EXPECT_EQ(model->version, ModelVersionName(kRef));
  EXPECT_EQ(model->batcher->model_version(), model->version);
  EXPECT_EQ(model->router, nullptr);
  EXPECT_EQ(model->decider, nullptr);  // the caller's, with its policy
  const size_t n = 40;
  const std::vector<double> rows = Rows(n);
  std::vector<double> direct(n), chained(n);
  ASSERT_OK(model->direct->Score(rows, n, absl::MakeSpan(direct)));
  ScoreContext context;
  context.priority = Priority::kP2;
  ASSERT_OK(model->batcher->Score(rows, n, absl::MakeSpan(chained), context));
  EXPECT_EQ(chained, direct);
  EXPECT_EQ(model->breaker->state(), CircuitBreaker::State::kClosed);
}

// A replay's decisions must not depend on how fast the replaying machine is: calls far over
// the breaker's budget leave it closed in replay mode, and open it in serve mode.
TEST(BuildModelChain, OnlyServeCountsSlowCallsAgainstTheBreaker) {
  for (PipelineMode mode : {PipelineMode::kServe, PipelineMode::kReplay}) {
    SCOPED_TRACE(mode == PipelineMode::kServe ? "serve" : "replay");
    FakeClock clock;
    PipelineConfig config;
    config.breaker.failure_threshold = 2;
    ModelChainOptions options = ModelChainOptions::For(config, mode);
    options.clock = &clock;
    options.hooks.wrap_model = [&clock](std::shared_ptr<const Scorer> inner) {
      return std::make_shared<SteppingScorer>(std::move(inner), clock, std::chrono::hours(1));
    };
    std::vector<std::pair<std::string, std::string>> changes;
    options.hooks.on_breaker_change = [&changes](const std::string& version,
                                                 CircuitBreaker::State, CircuitBreaker::State to) {
      changes.emplace_back(version, std::string(CircuitBreaker::StateName(to)));
    };
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<ModelDeployment::Model> model,
                               BuildModelChain(ServeModel(), kRef, options));
    const std::vector<double> rows = Rows(4);
    std::vector<double> scores(4);
    for (int i = 0; i < 3; ++i) {
      (void)model->batcher->Score(rows, 4, absl::MakeSpan(scores), ScoreContext{});
    }
    if (mode == PipelineMode::kServe) {
      EXPECT_EQ(model->breaker->state(), CircuitBreaker::State::kOpen);
      EXPECT_THAT(changes, ElementsAre(Pair(ModelVersionName(kRef), "open")));
    } else {
      EXPECT_EQ(model->breaker->state(), CircuitBreaker::State::kClosed);
      EXPECT_TRUE(changes.empty());
    }
  }
}

// Failures open the breaker in replay too: a backtest sees the rules-only decisions production
// would make while the model fails.
TEST(BuildModelChain, FailuresOpenTheBreakerInReplayAsInServe) {
  FakeClock clock;
  PipelineConfig config;
  config.breaker.failure_threshold = 2;
  ModelChainOptions options = ModelChainOptions::For(config, PipelineMode::kReplay);
  options.clock = &clock;
  std::shared_ptr<SteppingScorer> wrapped;
  options.hooks.wrap_model = [&](std::shared_ptr<const Scorer> inner) {
    wrapped = std::make_shared<SteppingScorer>(std::move(inner), clock, microseconds(1));
    wrapped->fail = true;
    return wrapped;
  };
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ModelDeployment::Model> model,
                             BuildModelChain(ServeModel(), kRef, options));
  const std::vector<double> rows = Rows(1);
  std::vector<double> scores(1);
  EXPECT_FALSE(model->batcher->Score(rows, 1, absl::MakeSpan(scores), ScoreContext{}).ok());
  EXPECT_FALSE(model->batcher->Score(rows, 1, absl::MakeSpan(scores), ScoreContext{}).ok());
  EXPECT_EQ(model->breaker->state(), CircuitBreaker::State::kOpen);
  wrapped->fail = false;
  const absl::Status refused = model->batcher->Score(rows, 1, absl::MakeSpan(scores),
                                                     ScoreContext{});
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
}

TEST(BuildModelChain, AGpuThatCannotScoreIsNamedBySetting) {
  ModelChainOptions options = ModelChainOptions::For(PipelineConfig{}, PipelineMode::kReplay);
  options.gpu.enabled = true;
  options.gpu.device = 4096;  // no host has it
  options.gpu_setting = "--gpu";
  absl::StatusOr<std::shared_ptr<ModelDeployment::Model>> model =
      BuildModelChain(ServeModel(), kRef, options);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(std::string(model.status().message()),
              ::testing::StartsWith("--gpu: the CUDA backend cannot score " +
                                    ModelVersionName(kRef) + ": "));
}

}  // namespace
}  // namespace vigil
