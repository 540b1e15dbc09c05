#include "vigil/batching/batch_policy.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const SteadyTime kT0{};  // the epoch of the made-up clock
SteadyTime At(int64_t us) { return kT0 + microseconds(us); }

BatchRequest Req(uint64_t id, Priority p, int64_t arrival_us, int64_t deadline_us) {
  return {id, p, At(arrival_us), At(deadline_us)};
}

std::vector<uint64_t> Ids(const std::vector<BatchRequest>& batch) {
  std::vector<uint64_t> ids;
  for (const BatchRequest& r : batch) ids.push_back(r.id);
  return ids;
}

// One class under test: waits up to 500 us, batches of 2 to 4, queue of 6; scoring takes 50 us.
BatchPolicyConfig Config() {
  BatchPolicyConfig c;
  c.classes[0] = {microseconds(0), 1, 4, 8, true};
  c.classes[1] = {microseconds(500), 2, 4, 6, false};
  c.classes[2] = {microseconds(2000), 1, 8, 8, false};
  c.scoring_time = microseconds(50);
  return c;
}

TEST(BatchPolicy, WaitsForTheDelayOrAFullBatch) {
  BatchPolicy p(Config());
  ASSERT_TRUE(p.Enqueue(Req(1, Priority::kP1, 0, 100'000)));
  EXPECT_THAT(p.NextBatch(At(499)), IsEmpty());  // one request: below min_batch
  EXPECT_THAT(p.NextBatch(At(600)), IsEmpty());  // delay passed, still below min_batch
  ASSERT_TRUE(p.Enqueue(Req(2, Priority::kP1, 600, 100'000)));
  EXPECT_THAT(Ids(p.NextBatch(At(600))), ElementsAre(1, 2));  // oldest waited 600 >= 500
  for (uint64_t id = 3; id <= 7; ++id) ASSERT_TRUE(p.Enqueue(Req(id, Priority::kP1, 700, 100'000)));
  EXPECT_THAT(Ids(p.NextBatch(At(700))), ElementsAre(3, 4, 5, 6));  // full batch: no wait
  EXPECT_EQ(p.queued(Priority::kP1), 1u);
  EXPECT_THAT(p.NextBatch(At(701)), IsEmpty());
}

TEST(BatchPolicy, EarliestDeadlineFirstWithinAClassArrivalBreaksTies) {
  BatchPolicy p(Config());
  ASSERT_TRUE(p.Enqueue(Req(1, Priority::kP2, 0, 9'000)));
  ASSERT_TRUE(p.Enqueue(Req(2, Priority::kP2, 1, 5'000)));
  ASSERT_TRUE(p.Enqueue(Req(3, Priority::kP2, 2, 7'000)));
  ASSERT_TRUE(p.Enqueue(Req(4, Priority::kP2, 3, 5'000)));
  EXPECT_THAT(Ids(p.NextBatch(At(2000))), ElementsAre(2, 4, 3, 1));
}

TEST(BatchPolicy, HigherClassesGoFirstAndAPreemptingArrivalFlushesLowerOnes) {
  BatchPolicy p(Config());
  ASSERT_TRUE(p.Enqueue(Req(1, Priority::kP2, 0, 100'000)));
  ASSERT_TRUE(p.Enqueue(Req(2, Priority::kP1, 0, 100'000)));
  ASSERT_TRUE(p.Enqueue(Req(3, Priority::kP1, 0, 100'000)));
  EXPECT_THAT(p.NextBatch(At(10)), IsEmpty());                 // nobody waited long enough
  ASSERT_TRUE(p.Enqueue(Req(4, Priority::kP0, 10, 100'000)));  // preempts
  EXPECT_THAT(Ids(p.NextBatch(At(10))), ElementsAre(4));       // P0 first
  EXPECT_THAT(Ids(p.NextBatch(At(10))), ElementsAre(2, 3));    // then the flushed P1 batch
  EXPECT_THAT(Ids(p.NextBatch(At(10))), ElementsAre(1));       // and the flushed P2 one
  EXPECT_THAT(p.NextBatch(At(10)), IsEmpty());
}

TEST(BatchPolicy, UrgentDeadlinesAreDueAndHopelessOnesExpire) {
  BatchPolicy p(Config());
  ASSERT_TRUE(p.Enqueue(Req(1, Priority::kP1, 0, 1'000)));
  ASSERT_TRUE(p.Enqueue(Req(2, Priority::kP1, 0, 100'000)));
  ASSERT_TRUE(p.Enqueue(Req(3, Priority::kP2, 0, 120)));
  // At 80 us request 3 has 40 us left, less than the 50 us scoring takes: expired.
  EXPECT_THAT(Ids(p.TakeExpired(At(80))), ElementsAre(3));
  EXPECT_THAT(p.NextBatch(At(80)), IsEmpty());
  // The slack rule alone: a lone P2 request (P2 waits up to 2 ms) becomes due when its
  // deadline is two scoring times (100 us) away.
  BatchPolicy q(Config());
  ASSERT_TRUE(q.Enqueue(Req(5, Priority::kP2, 0, 1'000)));  // P2 waits up to 2 ms
  EXPECT_THAT(q.NextBatch(At(800)), IsEmpty());             // 200 us of slack
  EXPECT_THAT(Ids(q.NextBatch(At(900))), ElementsAre(5));   // 100 us: due
}

TEST(BatchPolicy, FullQueuesRefuseAndQueuesStayBounded) {
  BatchPolicy p(Config());
  for (uint64_t id = 1; id <= 6; ++id) ASSERT_TRUE(p.Enqueue(Req(id, Priority::kP1, 0, 1e9)));
  EXPECT_FALSE(p.Enqueue(Req(7, Priority::kP1, 0, 1e9)));
  EXPECT_EQ(p.queued(Priority::kP1), 6u);
  EXPECT_TRUE(p.Enqueue(Req(8, Priority::kP2, 0, 1e9)));  // other classes have their own bound
  EXPECT_EQ(p.queued(), 7u);
}

TEST(BatchPolicy, NextWakeupIsTheEarliestTimeSomethingBecomesDue) {
  BatchPolicy p(Config());
  EXPECT_EQ(p.NextWakeup(), std::nullopt);
  ASSERT_TRUE(p.Enqueue(Req(1, Priority::kP2, 100, 1'000'000)));
  EXPECT_EQ(p.NextWakeup(), At(2100));  // P2's delay
  ASSERT_TRUE(p.Enqueue(Req(2, Priority::kP1, 200, 700)));
  EXPECT_EQ(p.NextWakeup(), At(600));  // request 2's deadline minus two scoring times
  // Walking the made-up clock to each wakeup drains everything, in order.
  std::vector<uint64_t> order;
  for (int guard = 0; guard < 10 && p.queued() > 0; ++guard) {
    const SteadyTime now = *p.NextWakeup();
    for (const BatchRequest& r : p.NextBatch(now)) order.push_back(r.id);
  }
  EXPECT_THAT(order, ElementsAre(2, 1));
}

TEST(BatchPolicyConfig, PresetsValidateAndBadValuesAreNamed) {
  EXPECT_OK(BatchPolicyConfig::Fast().Validate());
  EXPECT_OK(BatchPolicyConfig::ComplianceGrade().Validate());
  EXPECT_EQ(BatchPolicyConfig::ComplianceGrade().classes[1].max_queue_delay, milliseconds(50));
  BatchPolicyConfig c = Config();
  c.classes[1].min_batch = 5;
  EXPECT_THAT(c.Validate(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                              ::testing::HasSubstr("class P1: min_batch 5")));
  c = Config();
  c.classes[2].max_queue = 0;
  EXPECT_THAT(c.Validate(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                              ::testing::HasSubstr("class P2: max_queue")));
}

}  // namespace
}  // namespace vigil
