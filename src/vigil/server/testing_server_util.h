// Helpers shared by the server's integration tests (TESTONLY): the configuration they start
// from, reading one series from the Prometheus text, and polling for what a background thread
// makes true.
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
#include "vigil/server/serve_config.h"
#include "vigil/testing/testdata.h"

namespace vigil::testing {

// A server on a free loopback port with its data and log under "dir", the test model, the
// default policy and the repository's lists and FX rates, over plain HTTP without
// authentication (the tests of transport security and access set those); tests set the rest.
inline ServeConfig TestServeConfig(const std::string& dir) {
  const std::string source = SourceDir();
  ServeConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  config.data_dir = dir + "/data";
  config.model = TestDataPath("models/serve_model.json");
  config.policy = source + "/policies/default.yaml";
  config.lists = source + "/policies/lists";
  config.fx_rates = source + "/data/fx_rates.csv";
  config.log_path = dir + "/serve.log";
  config.plaintext = true;
  config.auth.mode = "none";
  // The audit log's admission bound in time is not the subject of most tests, and a loaded
  // test machine's fsync alone can pass its 50 ms: off (the tests of overload set it).
  config.audit.max_wait = std::chrono::milliseconds(0);
  return config;
}

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
