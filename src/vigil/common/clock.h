// Injectable clocks.
//
// Code that needs the time takes a `Clock&` (or `const Clock&`) instead of calling
// std::chrono::system_clock directly, so tests can use testing/fake_clock.h and advance time
// explicitly. Event time (when a payment happened) is data carried by the Transaction, never a
// clock reading; clocks are for processing time (latencies, timeouts, id generation).
//
// Thread safety: implementations are safe for concurrent use.
#ifndef VIGIL_COMMON_CLOCK_H_
#define VIGIL_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace vigil {

// A point in UTC with microsecond resolution (Unix epoch, no leap seconds).
using UtcTime = std::chrono::sys_time<std::chrono::microseconds>;

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time in UTC; may jump (NTP).
  virtual UtcTime Now() const = 0;
  // Monotonic time for measuring intervals; never jumps backwards.
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;
};

// The process's real clock. The returned reference is valid for the program's lifetime.
Clock& RealClock();

// CPU time the calling thread has consumed, in seconds: what a piece of work cost its thread,
// whatever else the machine ran meanwhile (not injectable: it measures, it does not decide).
double ThreadCpuSeconds();

// Microseconds since the Unix epoch.
inline int64_t ToUnixMicros(UtcTime t) { return t.time_since_epoch().count(); }
inline UtcTime FromUnixMicros(int64_t us) { return UtcTime(std::chrono::microseconds(us)); }

}  // namespace vigil

#endif  // VIGIL_COMMON_CLOCK_H_
