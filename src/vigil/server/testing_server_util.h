// Helpers shared by the server's integration tests (TESTONLY): reading one series from the
// Prometheus text, and polling for what a background thread makes true.
#ifndef VIGIL_SERVER_TESTING_SERVER_UTIL_H_
#define VIGIL_SERVER_TESTING_SERVER_UTIL_H_

#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace vigil::testing {

// The value of one series ("name{labels}") in Prometheus text; NaN when absent.
inline double MetricValue(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.size() > series.size() && absl::StartsWith(line, series) &&
        line[series.size()] == ' ') {
      double v = 0;
      if (absl::SimpleAtod(line.substr(series.size() + 1), &v)) return v;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Polls "done" until it holds or 15 s pass (generous: the CI machine is small and shared).
template <typename F>
bool Eventually(F done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace vigil::testing

#endif  // VIGIL_SERVER_TESTING_SERVER_UTIL_H_
