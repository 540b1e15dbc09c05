#include "vigil/common/clock.h"

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

}  // namespace vigil
