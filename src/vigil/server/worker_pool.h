// WorkerPool: the threads that run requests which may wait (for the batcher, for an idempotent
// duplicate), so that the I/O threads never do. The queue in front of them is bounded: a task
// that finds it full is refused at once and the caller answers 503, so overload is answered,
// not absorbed.
//
// Thread safety: TrySubmit from any thread; Shutdown from one.
#ifndef VIGIL_SERVER_WORKER_POOL_H_
#define VIGIL_SERVER_WORKER_POOL_H_

#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace vigil {

class WorkerPool {
 public:
  // REQUIRES: threads >= 1, max_queue >= 1.
  WorkerPool(int threads, size_t max_queue);
  ~WorkerPool();  // Shutdown()

  // Queues "task", or returns false (dropping it) when the queue holds max_queue tasks or the
  // pool is shutting down.
  bool TrySubmit(absl::AnyInvocable<void() &&> task);
  // Refuses new tasks, runs every queued one, and joins the threads. Idempotent.
  void Shutdown();

  size_t queued() const;
  size_t busy() const;  // tasks running now

 private:
  void Run();

  const size_t max_queue_;
  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  size_t busy_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_WORKER_POOL_H_
