#include "vigil/common/clock.h"

#include <time.h>

namespace vigil {
namespace {

class SystemClock final : public Clock {
 public:
  UtcTime Now() const override {
    return std::chrono::time_point_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now());
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock* clock = new SystemClock();  // never destroyed: usable during shutdown
  return *clock;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace vigil
