// HostPool: a few host threads that run the host side of large GPU batches in parallel —
// gathering the caller's double rows into float32 inputs, turning margins into probabilities —
// since on one core the host, not the device, limits a large batch (docs/gpu.md).
//
// Thread safety: ParallelFor may be called from any number of threads at once; a caller waiting
// for its pieces runs queued pieces (its own or another caller's) meanwhile, so callers never
// wait on each other's work being idle.
#ifndef VIGIL_MODEL_CUDA_HOST_POOL_H_
#define VIGIL_MODEL_CUDA_HOST_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vigil::cuda {

class HostPool {
 public:
  // Starts "workers" threads (0: every ParallelFor runs on its caller alone).
  explicit HostPool(int workers);
  // Joins the workers. REQUIRES: no ParallelFor in progress.
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  int workers() const { return static_cast<int>(workers_.size()); }

  // Runs fn(begin, end) over [0, n) in contiguous pieces of at least min_piece (at most one per
  // worker, plus the caller's own), and returns when every piece is done. n == 0 runs nothing.
  void ParallelFor(size_t n, size_t min_piece, const std::function<void(size_t, size_t)>& fn);

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace vigil::cuda

#endif  // VIGIL_MODEL_CUDA_HOST_POOL_H_
