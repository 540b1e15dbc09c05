// A Clock that moves only when the test says so.
//
// Thread safety: safe for concurrent use; Advance() is seen by every later Now()/Monotonic().
#ifndef VIGIL_TESTING_FAKE_CLOCK_H_
#define VIGIL_TESTING_FAKE_CLOCK_H_

#include <atomic>
#include <chrono>

#include "vigil/common/clock.h"

namespace vigil::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(UtcTime start = FromUnixMicros(1'661'990'400'000'000))  // 2022-09-01Z
      : micros_(ToUnixMicros(start)) {}

  UtcTime Now() const override { return FromUnixMicros(micros_.load()); }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::time_point(std::chrono::microseconds(micros_.load()));
  }
  void Advance(std::chrono::microseconds d) { micros_ += d.count(); }
  // Moves wall time only (simulates an NTP step); Monotonic() moves with it here, which tests
  // of backwards steps must keep in mind.
  void Set(UtcTime t) { micros_ = ToUnixMicros(t); }

 private:
  std::atomic<int64_t> micros_;
};

}  // namespace vigil::testing

#endif  // VIGIL_TESTING_FAKE_CLOCK_H_
