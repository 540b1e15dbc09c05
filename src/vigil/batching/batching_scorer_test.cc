#include "vigil/batching/batching_scorer.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using testing::StatusIs;

// Scores a row as twice its first value; counts calls and rows; can be held closed.
class RecordingScorer final : public Scorer {
 public:
  const std::string& model_version() const override { return version_; }
  size_t row_width() const override { return 2; }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext&) const override {
    if (gate != nullptr) gate->WaitForNotification();
    calls.fetch_add(1);
    max_rows = std::max<size_t>(max_rows.load(), n);
    for (size_t i = 0; i < n; ++i) scores[i] = rows[i * 2] * 2;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double>, int) const override {
    return std::vector<Reason>{};
  }
  bool latency_bounded() const override { return bounded; }
  bool bounded = true;
  absl::Notification* gate = nullptr;
  mutable std::atomic<int> calls{0};
  mutable std::atomic<size_t> max_rows{0};

 private:
  std::string version_ = "rec@1";
};

BatchPolicyConfig Waiting(microseconds delay, size_t max_batch, size_t max_queue = 1024) {
  BatchPolicyConfig c = BatchPolicyConfig::Fast();
  for (ClassPolicy& p : c.classes) {
    p = {delay, 1, max_batch, max_queue, false};
  }
  c.scoring_time = microseconds(100);
  c.inline_when_idle = false;  // these tests exercise the queue
  return c;
}

TEST(BatchingScorer, ConcurrentCallsAreBatchedAndEachGetsItsOwnScores) {
  auto inner = std::make_shared<RecordingScorer>();
  auto batcher = BatchingScorer::Create(inner, Waiting(milliseconds(20), 64));
  ASSERT_OK(batcher);
  EXPECT_EQ((*batcher)->model_version(), "rec@1");
  constexpr int kThreads = 16;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<double> row = {static_cast<double>(t), 0};
      double score = -1;
      const absl::Status s = (*batcher)->Score(row, 1, absl::MakeSpan(&score, 1));
      if (!s.ok() || score != 2.0 * t) wrong.fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // 16 calls within a 20 ms window: far fewer model calls than calls.
  EXPECT_LT(inner->calls.load(), kThreads);
  EXPECT_GT(inner->max_rows.load(), 1u);
  const BatchingScorer::Stats stats = (*batcher)->stats();
  EXPECT_EQ(stats.calls, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(stats.batches, static_cast<uint64_t>(inner->calls.load()));
}

TEST(BatchingScorer, ACallThatCannotBeScoredInTimeReturnsAtItsDeadline) {
  auto inner = std::make_shared<RecordingScorer>();
  absl::Notification gate;
  inner->gate = &gate;  // the model is stuck
  auto batcher = BatchingScorer::Create(inner, Waiting(microseconds(0), 1));
  ASSERT_OK(batcher);
  const std::vector<double> row = {1, 0};
  double score;
  // The first call occupies the model; the second waits in the queue and expires there.
  std::thread first([&] { (void)(*batcher)->Score(row, 1, absl::MakeSpan(&score, 1)); });
  while (inner->calls.load() == 0 && (*batcher)->stats().batches == 0) std::this_thread::yield();
  ScoreContext context;
  context.deadline = std::chrono::steady_clock::now() + milliseconds(30);
  const auto start = std::chrono::steady_clock::now();
  double late;
  EXPECT_THAT((*batcher)->Score(row, 1, absl::MakeSpan(&late, 1), context),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  gate.Notify();
  first.join();
}

TEST(BatchingScorer, AFullQueueRefusesAtOnce) {
  auto inner = std::make_shared<RecordingScorer>();
  absl::Notification gate;
  inner->gate = &gate;
  auto batcher = BatchingScorer::Create(inner, Waiting(microseconds(0), 1, /*max_queue=*/1));
  ASSERT_OK(batcher);
  const std::vector<double> row = {1, 0};
  std::vector<std::thread> waiting;
  std::atomic<int> ok{0};
  // One call in the model, one in the queue; a third finds the queue full.
  for (int i = 0; i < 2; ++i) {
    waiting.emplace_back([&] {
      double s;
      if ((*batcher)->Score(row, 1, absl::MakeSpan(&s, 1)).ok()) ok.fetch_add(1);
    });
    while ((*batcher)->stats().calls < static_cast<uint64_t>(i + 1)) std::this_thread::yield();
    while (i == 0 && (*batcher)->stats().batches == 0) std::this_thread::yield();
  }
  double s;
  EXPECT_THAT(
      (*batcher)->Score(row, 1, absl::MakeSpan(&s, 1)),
      StatusIs(absl::StatusCode::kResourceExhausted, ::testing::HasSubstr("P1 queue is full")));
  EXPECT_EQ((*batcher)->stats().rejected, 1u);
  gate.Notify();
  for (std::thread& t : waiting) t.join();
  EXPECT_EQ(ok.load(), 2);
}

TEST(BatchingScorer, ShuttingDownReleasesWaitingCalls) {
  auto inner = std::make_shared<RecordingScorer>();
  // Nothing is ever due: a huge delay and batch size.
  auto batcher = BatchingScorer::Create(inner, Waiting(std::chrono::hours(1), 1000));
  ASSERT_OK(batcher);
  std::unique_ptr<BatchingScorer> owned = *std::move(batcher);
  absl::Status result;
  std::thread caller([&] {
    const std::vector<double> row = {1, 0};
    double s;
    result = owned->Score(row, 1, absl::MakeSpan(&s, 1));
  });
  while (owned->stats().calls == 0) std::this_thread::yield();
  owned.reset();
  caller.join();
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kUnavailable));
}

TEST(BatchingScorer, AnIdleNoWaitCallIsScoredOnTheCallersThread) {
  auto inner = std::make_shared<RecordingScorer>();
  BatchPolicyConfig config = Waiting(microseconds(0), 64);
  config.inline_when_idle = true;
  auto batcher = BatchingScorer::Create(inner, config);
  ASSERT_OK(batcher);
  const std::vector<double> rows = {3, 0};
  std::vector<double> scores(1);
  ScoreContext context;
  context.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  ASSERT_OK((*batcher)->Score(rows, 1, absl::MakeSpan(scores), context));
  EXPECT_EQ(scores[0], 6);
  EXPECT_EQ((*batcher)->stats().inline_calls, 1u);
  EXPECT_EQ((*batcher)->stats().batches, 0u);
  // A waiting class never inlines.
  config.classes[2].max_queue_delay = microseconds(100);
  auto waiting = BatchingScorer::Create(inner, config);
  ASSERT_OK(waiting);
  context.priority = Priority::kP2;
  ASSERT_OK((*waiting)->Score(rows, 1, absl::MakeSpan(scores), context));
  EXPECT_EQ((*waiting)->stats().inline_calls, 0u);
  EXPECT_EQ((*waiting)->stats().batches, 1u);
  // A scorer that may stall is never run on the caller's thread.
  auto stalling = std::make_shared<RecordingScorer>();
  stalling->bounded = false;
  auto queued = BatchingScorer::Create(stalling, config);
  ASSERT_OK(queued);
  context.priority = Priority::kP0;
  ASSERT_OK((*queued)->Score(rows, 1, absl::MakeSpan(scores), context));
  EXPECT_EQ((*queued)->stats().inline_calls, 0u);
  EXPECT_EQ((*queued)->stats().batches, 1u);
}

TEST(BatchingScorer, AfterASlowCallATightDeadlineQueuesInsteadOfInlining) {
  auto inner = std::make_shared<RecordingScorer>();
  BatchPolicyConfig config = Waiting(microseconds(0), 64);
  config.inline_when_idle = true;
  auto batcher = BatchingScorer::Create(inner, config);
  ASSERT_OK(batcher);
  const std::vector<double> rows = {1, 0};
  std::vector<double> scores(1);
  // A slow first call (held for 30 ms by the gate) teaches the batcher the model's speed.
  absl::Notification gate;
  inner->gate = &gate;
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.Notify();
  });
  ASSERT_OK((*batcher)->Score(rows, 1, absl::MakeSpan(scores)));
  opener.join();
  inner->gate = nullptr;
  EXPECT_EQ((*batcher)->stats().inline_calls, 1u);
  // Now a call with 5 ms left does not bet on the model inline: it goes through the queue.
  ScoreContext context;
  context.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  (*batcher)->Score(rows, 1, absl::MakeSpan(scores), context).IgnoreError();
  EXPECT_EQ((*batcher)->stats().inline_calls, 1u);
  EXPECT_EQ((*batcher)->stats().calls, 2u);
}

}  // namespace
}  // namespace vigil
