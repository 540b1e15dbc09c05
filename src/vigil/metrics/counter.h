// Counter: a monotonically increasing count (decisions made, parse errors, fallbacks taken),
// exported as a Prometheus counter.
//
//   Counter* fallbacks = *registry.AddCounter("vigil_rules_only_fallbacks_total", "...");
//   fallbacks->Increment();
//
// Thread safety: safe for concurrent use, lock-free (one relaxed atomic add). Each Counter sits on
// its own cache line so that hot counters of different stages do not share one.
#ifndef VIGIL_METRICS_COUNTER_H_
#define VIGIL_METRICS_COUNTER_H_

#include <atomic>
#include <cstdint>

namespace vigil {

class alignas(64) Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace vigil

#endif  // VIGIL_METRICS_COUNTER_H_
