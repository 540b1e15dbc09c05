#include "vigil/server/worker_pool.h"

#include <utility>

#include "vigil/common/check.h"

namespace vigil {

WorkerPool::WorkerPool(WorkerPoolOptions options)
    : max_queue_(options.max_queue),
      max_queue_delay_(options.max_queue_delay),
      now_(std::move(options.now)) {
  VIGIL_CHECK(options.threads >= 1 && options.max_queue >= 1);
  threads_.reserve(static_cast<size_t>(options.threads));
  for (int i = 0; i < options.threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

WorkerPool::Admission WorkerPool::Submit(absl::AnyInvocable<void() &&> task) {
  const Steady::time_point now = Now();
  absl::MutexLock lock(&mu_);
  if (stopping_) return Admission::kStopping;
  if (queue_.size() >= max_queue_) return Admission::kQueueFull;
  // In microseconds: the default (microseconds::max()) would overflow in nanoseconds.
  if (!queue_.empty() &&
      std::chrono::duration_cast<std::chrono::microseconds>(now - queue_.front().first) >
          max_queue_delay_) {
    return Admission::kQueueTooSlow;
  }
  queue_.emplace_back(now, std::move(task));
  return Admission::kQueued;
}

void WorkerPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

size_t WorkerPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t WorkerPool::busy() const {
  absl::MutexLock lock(&mu_);
  return busy_;
}

void WorkerPool::Run() {
  absl::MutexLock lock(&mu_);
  const auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || stopping_;
  };
  while (true) {
    mu_.Await(absl::Condition(&ready));
    if (queue_.empty()) return;  // stopping, and nothing left to run
    absl::AnyInvocable<void() &&> task = std::move(queue_.front().second);
    queue_.pop_front();
    ++busy_;
    mu_.Unlock();
    std::move(task)();
    mu_.Lock();
    --busy_;
  }
}

}  // namespace vigil
