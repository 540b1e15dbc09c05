#include "vigil/batching/circuit_breaker.h"

#include <atomic>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using State = CircuitBreaker::State;
using ::vigil::testing::FakeClock;

SteadyTime At(int64_t ms) { return SteadyTime{} + milliseconds(ms); }

CircuitBreakerConfig Config() {
  CircuitBreakerConfig c;
  c.failure_threshold = 3;
  c.budget = microseconds(1000);
  c.open_for = milliseconds(100);
  c.probes = 1;
  return c;
}

TEST(CircuitBreaker, OpensAfterConsecutiveFailuresProbesAndCloses) {
  CircuitBreaker b(Config());
  const microseconds fast(100), slow(5000);
  EXPECT_TRUE(b.Allow(At(0)));
  b.Record(At(0), false, fast);  // an error
  b.Record(At(1), true, slow);   // over budget: a failure too
  b.Record(At(2), true, fast);   // a success resets the count
  EXPECT_EQ(b.state(), State::kClosed);
  for (int i = 0; i < 3; ++i) b.Record(At(3 + i), false, fast);
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_EQ(b.openings(), 1u);
  EXPECT_FALSE(b.Allow(At(50)));
  EXPECT_TRUE(b.Allow(At(106)));  // open_for passed: one probe
  EXPECT_EQ(b.state(), State::kHalfOpen);
  EXPECT_FALSE(b.Allow(At(106)));  // only one probe at a time
  b.Record(At(107), false, fast);  // the probe fails: open again, timer restarted
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_FALSE(b.Allow(At(150)));
  EXPECT_TRUE(b.Allow(At(208)));
  b.Record(At(208), true, fast);  // the probe succeeds: closed
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_TRUE(b.Allow(At(209)));
  EXPECT_EQ(b.openings(), 2u);
  EXPECT_EQ(CircuitBreaker::StateName(State::kHalfOpen), "half-open");
}

TEST(CircuitBreaker, WithoutCountingSlowCallsOnlyFailuresOpenIt) {
  CircuitBreakerConfig c = Config();
  c.count_slow_calls = false;
  CircuitBreaker b(c);
  const microseconds fast(100), slow(5000);
  for (int i = 0; i < 10; ++i) b.Record(At(i), true, slow);  // over budget, yet no failure
  EXPECT_EQ(b.state(), State::kClosed);
  for (int i = 0; i < 3; ++i) b.Record(At(20 + i), false, fast);
  EXPECT_EQ(b.state(), State::kOpen);
}

// A model that fails on demand.
class FlakyScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return 1; }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double>, size_t n, absl::Span<double> scores,
                     const ScoreContext&) const override {
    calls.fetch_add(1);
    if (failing.load()) return absl::DeadlineExceededError("late");
    for (size_t i = 0; i < n; ++i) scores[i] = 0.5;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    return std::vector<Reason>{};
  }
  std::atomic<bool> failing{false};
  mutable std::atomic<int> calls{0};

 private:
  std::string version_ = "flaky";
};

TEST(BreakerScorer, AnOpenBreakerAnswersAtOnceWithoutCallingTheModel) {
  auto inner = std::make_shared<FlakyScorer>();
  CircuitBreakerConfig c = Config();
  c.open_for = milliseconds(50);
  FakeClock clock;
  BreakerScorer scorer(inner, c, nullptr, clock);
  const double row = 1;
  double score;
  inner->failing = true;
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(scorer.Score({&row, 1}, 1, {&score, 1}),
                testing::StatusIs(absl::StatusCode::kDeadlineExceeded));
  }
  EXPECT_EQ(scorer.state(), State::kOpen);
  EXPECT_THAT(scorer.Score({&row, 1}, 1, {&score, 1}),
              testing::StatusIs(absl::StatusCode::kUnavailable,
                                ::testing::HasSubstr("circuit breaker is open")));
  EXPECT_EQ(inner->calls.load(), 3);  // not asked while open
  inner->failing = false;
  clock.Advance(milliseconds(49));
  EXPECT_THAT(scorer.Score({&row, 1}, 1, {&score, 1}),
              testing::StatusIs(absl::StatusCode::kUnavailable));  // still open
  EXPECT_EQ(inner->calls.load(), 3);
  clock.Advance(milliseconds(2));
  EXPECT_OK(scorer.Score({&row, 1}, 1, {&score, 1}));  // the probe
  EXPECT_EQ(scorer.state(), State::kClosed);
  EXPECT_EQ(score, 0.5);
}

}  // namespace
}  // namespace vigil
