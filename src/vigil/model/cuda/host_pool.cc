#include "vigil/model/cuda/host_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace vigil::cuda {

HostPool::HostPool(int workers) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
}

HostPool::~HostPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void HostPool::ParallelFor(size_t n, size_t min_piece,
                           const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  const size_t pieces =
      std::clamp<size_t>(n / std::max<size_t>(min_piece, 1), 1, workers_.size() + 1);
  if (pieces == 1) {
    fn(0, n);
    return;
  }
  auto left = std::make_shared<std::atomic<size_t>>(pieces - 1);
  {
    std::lock_guard lock(mu_);
    for (size_t p = 1; p < pieces; ++p) {
      tasks_.push_back([&fn, left, this, begin = n * p / pieces, end = n * (p + 1) / pieces] {
        fn(begin, end);
        if (left->fetch_sub(1) == 1) {
          std::lock_guard done_lock(mu_);
          done_.notify_all();
        }
      });
    }
  }
  wake_.notify_all();
  fn(0, n / pieces);
  std::unique_lock lock(mu_);
  while (left->load() > 0) {
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    } else {
      done_.wait(lock);
    }
  }
}

void HostPool::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (stop_) return;
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace vigil::cuda
