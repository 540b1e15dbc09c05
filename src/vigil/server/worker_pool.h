// WorkerPool: the threads that run requests which may wait (for the batcher, for an admin
// write), so that the I/O threads never do. (A decision waiting for its durable audit record
// holds no worker: it is answered from the log's completion, DecisionService::ScoreThen.)
// What waits in front of them is bounded twice, so that overload is answered, not absorbed:
//  - by count: a task that finds max_queue tasks waiting is refused;
//  - by time: a task that finds the oldest waiting task queued for longer than max_queue_delay
//    is refused. Whatever slows the workers (a model, a busy CPU) lengthens that wait, so the
//    excess over what the workers can do is refused at once while the queue stays full
//    enough to keep every worker busy.
// A refused task is dropped and the caller answers 503 with Retry-After.
//
// Thread safety: TrySubmit from any thread; Shutdown from one.
#ifndef VIGIL_SERVER_WORKER_POOL_H_
#define VIGIL_SERVER_WORKER_POOL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace vigil {

struct WorkerPoolOptions {
  int threads = 1;        // >= 1
  size_t max_queue = 1;   // >= 1: tasks that may wait for a thread
  // The longest the oldest waiting task may have waited for a new one to be accepted. The
  // default never refuses by time. Keep it well below the requests' budget: a request that
  // waited long is decided with little of its budget left (more rules-only decisions).
  std::chrono::microseconds max_queue_delay = std::chrono::microseconds::max();
  // The clock the queue delay is read from; null: std::chrono::steady_clock (tests inject one).
  std::function<std::chrono::steady_clock::time_point()> now;
};

class WorkerPool {
 public:
  using Steady = std::chrono::steady_clock;
  // REQUIRES: threads >= 1, max_queue >= 1.
  WorkerPool(int threads, size_t max_queue)
      : WorkerPool(WorkerPoolOptions{.threads = threads, .max_queue = max_queue}) {}
  explicit WorkerPool(WorkerPoolOptions options);
  ~WorkerPool();  // Shutdown()

  // What TrySubmit says.
  enum class Admission { kQueued, kQueueFull, kQueueTooSlow, kStopping };
  // Queues "task", or refuses it (dropping it): the queue holds max_queue tasks, or its oldest
  // has waited longer than max_queue_delay, or the pool is shutting down.
  Admission Submit(absl::AnyInvocable<void() &&> task);
  bool TrySubmit(absl::AnyInvocable<void() &&> task) {
    return Submit(std::move(task)) == Admission::kQueued;
  }
  // Refuses new tasks, runs every queued one, and joins the threads. Idempotent.
  void Shutdown();

  size_t queued() const;
  size_t busy() const;  // tasks running now

 private:
  void Run();
  Steady::time_point Now() const { return now_ ? now_() : Steady::now(); }

  const size_t max_queue_;
  const std::chrono::microseconds max_queue_delay_;
  const std::function<Steady::time_point()> now_;
  mutable absl::Mutex mu_;
  // Each task with when it was queued.
  std::deque<std::pair<Steady::time_point, absl::AnyInvocable<void() &&>>> queue_
      ABSL_GUARDED_BY(mu_);
  size_t busy_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_WORKER_POOL_H_
