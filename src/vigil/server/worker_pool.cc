#include "vigil/server/worker_pool.h"

#include <utility>

#include "vigil/common/check.h"

namespace vigil {

WorkerPool::WorkerPool(int threads, size_t max_queue) : max_queue_(max_queue) {
  VIGIL_CHECK(threads >= 1 && max_queue >= 1);
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TrySubmit(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queue_) return false;
  queue_.push_back(std::move(task));
  return true;
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
    absl::AnyInvocable<void() &&> task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    mu_.Unlock();
    std::move(task)();
    mu_.Lock();
    --busy_;
  }
}

}  // namespace vigil
