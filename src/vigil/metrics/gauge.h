// Gauge: a value that goes up and down (queue depth, in-flight requests, the last drift score),
// exported as a Prometheus gauge.
//
// Thread safety: safe for concurrent use, lock-free. Set and value are single relaxed atomic
// operations; Add is a compare-and-swap loop (std::atomic<double>::fetch_add).
#ifndef VIGIL_METRICS_GAUGE_H_
#define VIGIL_METRICS_GAUGE_H_

#include <atomic>

namespace vigil {

class alignas(64) Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void Increment() { Add(1.0); }
  void Decrement() { Add(-1.0); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

}  // namespace vigil

#endif  // VIGIL_METRICS_GAUGE_H_
