#include "vigil/server/worker_pool.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

// Polls "done" until it holds or 10 s pass (a generous bound for a loaded machine).
template <typename F>
bool Eventually(F done) {
  const Steady::time_point give_up = Steady::now() + std::chrono::seconds(10);
  while (!done()) {
    if (Steady::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(WorkerPool, RunsEveryTaskOnItsThreads) {
  std::atomic<int> ran{0};
  absl::Notification release;
  {
    WorkerPool pool(4, 100);
    // Four tasks that wait together: they run at once, one per thread.
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(pool.TrySubmit([&] {
        ran.fetch_add(1);
        release.WaitForNotification();
      }));
    }
    EXPECT_TRUE(Eventually([&] { return pool.busy() == 4; }));
    release.Notify();
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
    EXPECT_TRUE(Eventually([&] { return ran.load() == 54; }));
    EXPECT_TRUE(Eventually([&] { return pool.busy() == 0 && pool.queued() == 0; }));
  }
  EXPECT_EQ(ran.load(), 54);
}

TEST(WorkerPool, RefusesTasksBeyondMaxQueue) {
  WorkerPool pool(1, 2);
  absl::Notification started, release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
    ran.fetch_add(1);
  }));
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The only thread is busy: two tasks wait, the third is refused (and dropped).
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_FALSE(pool.TrySubmit([&] { ran.fetch_add(100); }));
  EXPECT_EQ(pool.queued(), 2u);
  EXPECT_EQ(pool.busy(), 1u);
  release.Notify();
  EXPECT_TRUE(Eventually([&] { return pool.queued() == 0 && pool.busy() == 0; }));
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));  // room again
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 4);
}

TEST(WorkerPool, ShutdownRunsTheQueuedTasksThenRefusesMore) {
  WorkerPool pool(1, 1000);
  absl::Notification started, release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  std::thread stopper([&] { pool.Shutdown(); });
  // Shutting down: new tasks are refused (the queue has room: only shutdown refuses them)
  // while the queued ones still wait for the thread. A probe queued before that is a no-op.
  EXPECT_TRUE(Eventually([&] { return !pool.TrySubmit([] {}); }));
  EXPECT_EQ(ran.load(), 0);
  release.Notify();
  stopper.join();
  EXPECT_EQ(ran.load(), 5);
  EXPECT_FALSE(pool.TrySubmit([&] { ran.fetch_add(100); }));
  pool.Shutdown();  // idempotent
  EXPECT_EQ(ran.load(), 5);
}

// Overload is refused by the queue's age, not only its length: once the oldest waiting task
// has waited longer than max_queue_delay, new tasks are refused at once, and accepted again as
// soon as the workers catch up.
TEST(WorkerPool, RefusesTasksWhileTheOldestHasWaitedLongerThanMaxQueueDelay) {
  std::atomic<int64_t> now_ms{0};
  WorkerPool pool(WorkerPoolOptions{
      .threads = 1,
      .max_queue = 1000,
      .max_queue_delay = std::chrono::milliseconds(50),
      .now = [&] { return Steady::time_point(std::chrono::milliseconds(now_ms.load())); }});
  absl::Notification started, release;
  std::atomic<int> ran{0};
  ASSERT_EQ(pool.Submit([&] {
              started.Notify();
              release.WaitForNotification();
            }),
            WorkerPool::Admission::kQueued);
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(pool.Submit([&] { ran.fetch_add(1); }), WorkerPool::Admission::kQueued);  // at 0
  now_ms = 50;  // the oldest has waited exactly the bound: still accepted
  EXPECT_EQ(pool.Submit([&] { ran.fetch_add(1); }), WorkerPool::Admission::kQueued);
  now_ms = 51;
  EXPECT_EQ(pool.Submit([&] { ran.fetch_add(100); }), WorkerPool::Admission::kQueueTooSlow);
  EXPECT_FALSE(pool.TrySubmit([&] { ran.fetch_add(100); }));
  EXPECT_EQ(pool.queued(), 2u);
  release.Notify();
  EXPECT_TRUE(Eventually([&] { return pool.queued() == 0 && pool.busy() == 0; }));
  EXPECT_EQ(pool.Submit([&] { ran.fetch_add(1); }), WorkerPool::Admission::kQueued);
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace vigil
