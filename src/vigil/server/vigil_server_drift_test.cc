// End-to-end tests of drift monitoring in `vigil serve`: the real VigilServer in-process (the
// testdata model, the default policy, the FX table) with a small reference profile written by
// each test, spoken to over loopback HTTP. The monitor works on event time, so the payments'
// timestamps drive its windows: no test waits for the wall clock, only for the monitor's thread
// to observe what was decided.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/decision/model_registry.h"
#include "vigil/drift/measured_null.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::Eventually;
using ::vigil::testing::MetricValue;

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::HttpOnce;
using testing::TestHttpResponse;
using Millis = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// A payment at 2022-09-01T08:00:00Z + "second" s of event time.
std::string TxAt(const std::string& id, int second, const std::string& value = "9000.00") {
  return absl::StrFormat(R"({"id":"%s","timestamp":"2022-09-01T08:%02d:%02dZ",)"
                         R"("originator":{"account_id":"A1","bank_id":"B1"},)"
                         R"("beneficiary":{"account_id":"A2","bank_id":"B2"},)"
                         R"("amount":{"value":"%s","currency":"USD"}})",
                         id, second / 60, second % 60, value);
}

// One profile entry (reference_profile.h) of 1000 rows spread evenly over [lo, hi] in ten bins.
nlohmann::json Entry(double lo, double hi) {
  nlohmann::json edges = nlohmann::json::array();
  nlohmann::json counts = nlohmann::json::array();
  nlohmann::json sample = nlohmann::json::array();
  for (int i = 0; i <= 10; ++i) edges.push_back(lo + (hi - lo) * i / 10);
  for (int i = 0; i < 10; ++i) counts.push_back(100);
  for (int i = 0; i <= 20; ++i) sample.push_back(lo + (hi - lo) * i / 20);
  return {{"count", 1000},        {"missing", 0},          {"bin_edges", edges},
          {"bin_counts", counts}, {"mean", (lo + hi) / 2}, {"std", (hi - lo) / 3.5},
          {"sample", sample}};
}

// A profile of the engine's schema that covers amount_reporting (over [lo, hi]) and, with
// "score", the model's score; every other feature is left out, so the monitor lists it as
// unmonitored.
std::string Profile(double lo, double hi, bool score = true) {
  nlohmann::json profile = {{"feature_schema_version", FeatureExtractor::Schema()->version()},
                            {"rows", 1000},
                            {"features", {{"amount_reporting", Entry(lo, hi)}}}};
  if (score) profile["score"] = Entry(0, 1);
  return profile.dump();
}

std::vector<std::string> EventKinds(const nlohmann::json& drift) {
  std::vector<std::string> kinds;
  for (const nlohmann::json& e : drift["events"]) kinds.push_back(e.value("kind", ""));
  return kinds;
}

class VigilServerDriftTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid too: two builds' test runs may share the machine's temporary directory.
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_drift_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = testing::TestServeConfig(dir_);
    config_.worker_threads = 4;
    config_.worker_queue = 64;
    config_.score_budget = Millis(2000);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string WriteProfile(const std::string& path, double lo, double hi, bool score = true) {
    std::ofstream(path) << Profile(lo, hi, score);
    return path;
  }
  // Drift on with "profile", the raw preset's fixed cut-offs (no calibration noise to reason
  // about), windows of 10 s and 20 s sliding by 10 s of event time, evaluated from 5 rows.
  // One pair of accounts from t = 0 (TxAt): the warm-up, the rise dwell and the per-account
  // bounds are off, as before them (the burst tests below keep them on).
  void SmallWindows(const std::string& profile) {
    config_.drift.profile = profile;
    config_.drift.monitor.warmup = std::chrono::seconds(0);
    config_.drift.monitor.min_dwell = std::chrono::seconds(0);
    config_.drift.monitor.min_accounts = 1;
    config_.drift.monitor.account_cap_rows = 1'000'000'000;
    config_.drift.monitor.calibration = drift::DriftCalibration::kRawPreset;
    config_.drift.monitor.windows[0].size = config_.drift.monitor.windows[0].slide =
        std::chrono::seconds(10);
    config_.drift.monitor.windows[1].size = std::chrono::seconds(20);
    config_.drift.monitor.windows[1].slide = std::chrono::seconds(10);
    config_.drift.monitor.min_rows = 5;
  }
  // Scores payments far-<from>..far-<to> at those seconds (amount 9000, far above [0, 10]) and
  // waits until the monitor is frozen.
  void FreezeWithFarPayments() {
    // Seconds 0..9 fill the first pane; the payment at second 10 completes it (an evaluation).
    for (int i = 0; i <= 10; ++i) {
      const TestHttpResponse r = Score(TxAt(absl::StrCat("far-", i), i));
      ASSERT_EQ(r.status, 200) << r.body;
    }
    ASSERT_NO_FATAL_FAILURE(WaitForFreeze());
  }
  // Waits until the monitor is frozen and its ticket stored: the freeze takes effect at once,
  // its events are stored just after (outside the monitor's lock). Sets *state to the last
  // GET /v1/drift.
  void WaitForFreeze(nlohmann::json* state = nullptr) {
    nlohmann::json drift;
    ASSERT_TRUE(Eventually([&] {
      drift = Drift();
      const std::vector<std::string> kinds = EventKinds(drift);
      return drift.value("frozen", false) &&
             std::find(kinds.begin(), kinds.end(), "ticket_opened") != kinds.end();
    })) << drift.dump();
    if (state != nullptr) *state = std::move(drift);
  }

  void StartServer() {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    ASSERT_OK(fx);
    auto server = VigilServer::Start(config_, *std::move(fx));
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  TestHttpResponse Send(const std::string& method, const std::string& target,
                        const std::string& body = "") {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!token_.empty()) headers.push_back({"Authorization", absl::StrCat("Bearer ", token_)});
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), method, target, body, headers);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  TestHttpResponse Score(const std::string& body) { return Send("POST", "/v1/score", body); }
  nlohmann::json Drift() {
    const TestHttpResponse r = Send("GET", "/v1/drift");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json();
  }

  std::string LogText() const {
    std::ifstream log(config_.log_path);
    return std::string((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  }

  std::string dir_;
  ServeConfig config_;
  std::unique_ptr<VigilServer> server_;
  std::string token_;  // sent as a bearer token when set
};

TEST_F(VigilServerDriftTest, IsOffWithoutAProfile) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_EQ(Score(TxAt("off-1", 0)).status, 200);
  const TestHttpResponse r = Send("GET", "/v1/drift");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  EXPECT_EQ(r.Json()["error"].value("code", ""), "drift_off") << r.body;
  EXPECT_THAT(r.Json()["error"].value("message", ""), HasSubstr("drift.profile"));
  const std::string metrics = Send("GET", "/metrics").body;
  EXPECT_FALSE(absl::StrContains(metrics, "vigil_drift_")) << "no drift series while off";
  EXPECT_THAT(ServeApi::Routes(), Contains("GET /v1/drift"));
  std::ifstream log(config_.log_path);
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("drift monitor off"));
}

// drift.enabled false: off, though a profile lies beside the model.
TEST_F(VigilServerDriftTest, CanBeTurnedOffWithAProfileBesideTheModel) {
  std::filesystem::create_directories(dir_ + "/model");
  const std::string model = dir_ + "/model/serve_model.json";
  std::filesystem::copy_file(config_.model, model);
  config_.model = model;
  WriteProfile(dir_ + "/model/reference_profile.json", 0, 20000);
  config_.drift.enabled = false;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_EQ(Score(TxAt("off-1", 0)).status, 200);
  EXPECT_EQ(Send("GET", "/v1/drift").status, 404);
  EXPECT_FALSE(absl::StrContains(Send("GET", "/metrics").body, "vigil_drift_"));
}

// The default profile is reference_profile.json beside the model file.
TEST_F(VigilServerDriftTest, WatchesDecisionsWithTheProfileBesideTheModel) {
  std::filesystem::create_directories(dir_ + "/model");
  const std::string model = dir_ + "/model/serve_model.json";
  std::filesystem::copy_file(config_.model, model);
  config_.model = model;
  WriteProfile(dir_ + "/model/reference_profile.json", 0, 20000);
  // One pair of accounts (TxAt): every row counts in the windows' samples.
  config_.drift.monitor.account_cap_rows = 1'000'000'000;
  ASSERT_NO_FATAL_FAILURE(StartServer());

  constexpr int kPayments = 5;
  for (int i = 0; i < kPayments; ++i) {
    const TestHttpResponse r = Score(TxAt(absl::StrCat("on-", i), i));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Json()["degraded"], false) << r.body;
  }
  ASSERT_EQ(Score(TxAt("on-0", 0)).status, 200);  // a repeat: not observed twice
  nlohmann::json drift;
  ASSERT_TRUE(Eventually([&] {
    drift = Drift();
    return drift.value("rows", 0) >= kPayments;
  })) << drift.dump();
  EXPECT_EQ(drift["rows"], kPayments);
  EXPECT_EQ(drift["level"], "none");
  EXPECT_EQ(drift["frozen"], false);
  EXPECT_EQ(drift["calibration"], "null");
  EXPECT_EQ(drift["dropped_rows"], 0);
  ASSERT_TRUE(drift["events"].is_array()) << drift.dump();
  std::set<std::string> subjects;
  for (const nlohmann::json& s : drift["subjects"]) {
    subjects.insert(s["name"].get<std::string>());
    ASSERT_EQ(s["windows"].size(), 2u) << s.dump();
    EXPECT_EQ(s["windows"][0]["window"], "short");
    EXPECT_EQ(s["windows"][1]["window"], "long");
    // Fewer rows than drift.min_rows (50): not evaluated yet, but the exact statistics of the
    // window's sample are there.
    EXPECT_EQ(s["windows"][0]["evaluated"], false);
    EXPECT_EQ(s["windows"][0]["sample_size"], kPayments) << s.dump();
  }
  EXPECT_EQ(subjects, (std::set<std::string>{"amount_reporting", "model_score"}));
  ASSERT_TRUE(drift["unmonitored"].is_array());
  EXPECT_THAT(drift["unmonitored"].get<std::vector<std::string>>(),
              Contains("cycle_length (not in the reference profile)"));

  const std::string metrics = Send("GET", "/metrics").body;
  for (const char* series :
       {R"(vigil_drift_severity{subject="amount_reporting",window="short"})",
        R"(vigil_drift_score{subject="model_score",window="long"})",
        R"(vigil_drift_level{subject="amount_reporting"})", "vigil_drift_monitor_level",
        "vigil_drift_frozen", "vigil_drift_drifted_share", "vigil_drift_rows_dropped_total",
        "vigil_drift_events_total", R"(vigil_drift_frozen_decisions_total{class="P1"})"}) {
    EXPECT_EQ(MetricValue(metrics, series), 0) << series;
  }
}

// A reference far from the traffic, windows of 10 s of event time and 5 rows: the first
// evaluation puts amount_reporting at L3, which freezes the model.
TEST_F(VigilServerDriftTest, AnL3FreezesTheModelAndDecisionsAreDegraded) {
  SmallWindows(WriteProfile(dir_ + "/far_profile.json", 0, 10));
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(FreezeWithFarPayments());
  nlohmann::json drift = Drift();
  EXPECT_EQ(drift["frozen"], true);
  EXPECT_EQ(drift["level"], "L3");
  EXPECT_FALSE(drift["frozen_since"].is_null());
  EXPECT_EQ(drift["drifted_share"], 1.0);  // the one monitored feature
  const std::vector<std::string> kinds = EventKinds(drift);
  EXPECT_THAT(kinds, Contains("level_change"));
  EXPECT_THAT(kinds, Contains("retrain_requested"));
  EXPECT_THAT(kinds, Contains("freeze"));
  EXPECT_THAT(kinds, Contains("ticket_opened"));

  // Frozen: the rules decide alone, and say so.
  const TestHttpResponse frozen = Score(TxAt("far-11", 11));
  ASSERT_EQ(frozen.status, 200) << frozen.body;
  const nlohmann::json d = frozen.Json();
  EXPECT_EQ(d["degraded"], true) << frozen.body;
  EXPECT_EQ(d["degraded_reason"], "drift_freeze") << frozen.body;
  EXPECT_TRUE(d["score"].is_null()) << frozen.body;
  EXPECT_EQ(d["model_role"], "none") << frozen.body;
  EXPECT_EQ(d["model_version"], "") << frozen.body;
  const TestHttpResponse batch =
      Send("POST", "/v1/score/batch",
           absl::StrCat("[", TxAt("far-12", 12), ",", TxAt("far-13", 13), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  for (const nlohmann::json& item : batch.Json()["results"]) {
    EXPECT_EQ(item["degraded_reason"], "drift_freeze") << batch.body;
  }

  const std::string metrics = Send("GET", "/metrics").body;
  EXPECT_EQ(MetricValue(metrics, "vigil_drift_frozen"), 1);
  EXPECT_EQ(MetricValue(metrics, "vigil_drift_monitor_level"), 3);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_drift_level{subject="amount_reporting"})"), 3);
  EXPECT_EQ(
      MetricValue(metrics, R"(vigil_drift_severity{subject="amount_reporting",window="short"})"),
      1);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_drift_frozen_decisions_total{class="P1"})"), 3);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_degraded_decisions_total{class="P1"})"), 3);
  EXPECT_GE(MetricValue(metrics, "vigil_drift_events_total"), 4);

  // The frozen decisions carry no score, yet the monitor still sees the frozen model's score
  // (else the score's distribution would drift because of the freeze itself): three frozen
  // payments alone in a new pane of the short window leave three scores in its sample.
  for (int i = 20; i < 23; ++i) {
    const TestHttpResponse r = Score(TxAt(absl::StrCat("far-", i), i));
    ASSERT_EQ(r.Json()["degraded_reason"], "drift_freeze") << r.body;
  }
  ASSERT_TRUE(Eventually([&] {
    drift = Drift();
    return drift.value("rows", 0) == 17;
  })) << drift.dump();
  for (const nlohmann::json& subject : drift["subjects"]) {
    EXPECT_EQ(subject["windows"][0]["sample_size"], 3) << subject.dump();
  }

  // The events are stored in the data dir: a restart still lists them (its windows start
  // afresh, so the new monitor is not frozen).
  server_.reset();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  drift = Drift();
  EXPECT_EQ(drift["frozen"], false);
  EXPECT_THAT(EventKinds(drift), Contains("freeze"));
}

// The score watched is the champion's: a challenger's payments count for the features, but its
// scores (another model's) are not compared with the champion's training profile.
TEST_F(VigilServerDriftTest, AChallengersScoresAreNotTakenForTheChampions) {
  WriteProfile(dir_ + "/profile.json", 0, 20000);
  config_.drift.profile = dir_ + "/profile.json";
  config_.drift.monitor.account_cap_rows = 1'000'000'000;  // one pair of accounts (TxAt)
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string copy_path = dir_ + "/copy.json";
  std::ofstream(copy_path) << testing::ReadFile(config_.model) << "\n";
  auto registry = ModelRegistry::Open(config_.data_dir + "/models");
  ASSERT_OK(registry);
  auto copy = registry->Add(copy_path);
  ASSERT_OK(copy);
  const TestHttpResponse activated =
      Send("POST", "/v1/engine/activate",
           absl::StrCat(R"({"model_ref":")", copy->ref, R"(","traffic_weight":0.5})"));
  ASSERT_EQ(activated.status, 200) << activated.body;
  int champion = 0, challenger = 0;
  for (int i = 0; champion < 3 || challenger < 3; ++i) {
    const std::string id = absl::StrCat("split-", i);
    const TestHttpResponse r = Score(TxAt(id, i % 5));
    ASSERT_EQ(r.status, 200) << r.body;
    (r.Json()["model_role"] == "challenger" ? challenger : champion) += 1;
  }
  nlohmann::json drift;
  ASSERT_TRUE(Eventually([&] {
    drift = Drift();
    return drift.value("rows", 0) >= champion + challenger;
  })) << drift.dump();
  std::map<std::string, int> sampled;
  for (const nlohmann::json& s : drift["subjects"]) {
    sampled[s["name"].get<std::string>()] = s["windows"][0]["sample_size"].get<int>();
  }
  EXPECT_EQ(sampled["amount_reporting"], champion + challenger) << drift.dump();
  EXPECT_EQ(sampled["model_score"], champion) << drift.dump();
}

// Leaving L3 releases the freeze: once every window has seen payments like the reference for
// a few evaluations (the hysteresis: 3 below the cut-off), the model decides again.
TEST_F(VigilServerDriftTest, TheFreezeIsReleasedWhenTheTrafficReturnsToTheReference) {
  SmallWindows(WriteProfile(dir_ + "/far_profile.json", 0, 10, /*score=*/false));
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(FreezeWithFarPayments());
  // Panes of ten payments at 0.50, 1.50, ... 9.50 USD: one in each reference bin, exactly the
  // reference's shape. Short windows are below the cut-off from the pane of seconds 20..29,
  // long ones (20 s) from 30..39 on; the payment at second 70 completes the pane of 60..69.
  for (int second = 20; second <= 70; ++second) {
    const TestHttpResponse r =
        Score(TxAt(absl::StrCat("near-", second), second, absl::StrFormat("%d.50", second % 10)));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  nlohmann::json drift;
  ASSERT_TRUE(Eventually([&] {
    drift = Drift();
    return drift.contains("frozen") && !drift["frozen"].get<bool>() && drift.value("rows", 0) == 62;
  })) << drift.dump();
  EXPECT_NE(drift["level"], "L3");
  EXPECT_THAT(EventKinds(drift), Contains("freeze_released"));
  const TestHttpResponse r = Score(TxAt("near-71", 71, "1.50"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["degraded"], false) << r.body;
  EXPECT_EQ(r.Json()["model_role"], "champion") << r.body;
  EXPECT_EQ(MetricValue(Send("GET", "/metrics").body, "vigil_drift_frozen"), 0);
}

// drift_null.json beside the profile joins the calibration (as in `vigil replay`), and one
// measured with other windows than the server's stops the start, naming it.
TEST_F(VigilServerDriftTest, UsesTheMeasuredNullBesideTheProfile) {
  config_.drift.profile = WriteProfile(dir_ + "/reference_profile.json", 0, 20000);
  drift::MeasuredNull null;
  null.feature_schema_version = FeatureExtractor::Schema()->version();
  for (const drift::DriftWindowSpec& w : config_.drift.monitor.windows) {
    null.windows.push_back({w, 100, {{"amount_reporting", {0.01, 0.02, 0.05}}}});
  }
  std::ofstream(dir_ + "/drift_null.json") << null.ToJson();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(Drift()["calibration"], "null+measured");
  server_.reset();

  config_.drift.monitor.windows[0].size = std::chrono::seconds(30);  // not what was measured
  absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  auto server = VigilServer::Start(config_, *std::move(fx));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("drift.measured_null"));
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("drift_null.json"));
}

TEST_F(VigilServerDriftTest, ABadProfileStopsTheStartNamingIt) {
  config_.drift.profile = dir_ + "/missing.json";
  absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  auto server = VigilServer::Start(config_, *std::move(fx));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("drift.profile"));
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("missing.json"));
}

// A payment at 2022-09-01T08:00:00Z + "second" s between accounts "from" and "to".
std::string TxFrom(const std::string& id, int second, const std::string& from,
                   const std::string& to, const std::string& value) {
  return absl::StrFormat(R"({"id":"%s","timestamp":"2022-09-01T08:%02d:%02dZ",)"
                         R"("originator":{"account_id":"%s","bank_id":"B1"},)"
                         R"("beneficiary":{"account_id":"%s","bank_id":"B2"},)"
                         R"("amount":{"value":"%s","currency":"USD"}})",
                         id, second / 60, second % 60, from, to, value);
}

// The default policy with a review threshold so low that the model sends every ordinary
// payment to review: a payment the model raises and the rules alone allow.
std::string LowReviewPolicy(const std::string& dir, const std::string& policy) {
  std::string text = testing::ReadFile(policy);
  const size_t at = text.find("review: 0.15");
  EXPECT_NE(at, std::string::npos) << "the default policy's review threshold moved";
  if (at != std::string::npos) text.replace(at, 12, "review: 0.000001");
  const std::string path = dir + "/low_review.yaml";
  std::ofstream(path) << text;
  return path;
}

std::string ReasonCodes(const nlohmann::json& decision) {
  std::vector<std::string> codes;
  for (const nlohmann::json& r : decision.value("reasons", nlohmann::json::array())) {
    codes.push_back(r.value("code", ""));
  }
  return absl::StrJoin(codes, ",");
}

// The attack seen: 3,000 one-cent payments from one client (one account to one counterparty)
// in well under a second, against a reference whose amounts are far above a cent. The monitor
// counts one row of that account per window, so nothing is evaluated, nothing freezes, and a
// payment the model sends to review is still REVIEW (decided by the model, not degraded).
TEST_F(VigilServerDriftTest, AOneClientBurstFreezesNothingAndAReviewStaysReview) {
  config_.drift.profile = WriteProfile(dir_ + "/profile.json", 100, 20000, /*score=*/false);
  config_.drift.monitor.warmup = std::chrono::seconds(0);  // a warm feature state
  config_.policy = LowReviewPolicy(dir_, config_.policy);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse before = Score(TxFrom("review-0", 0, "C1", "D1", "120.00"));
  ASSERT_EQ(before.status, 200) << before.body;
  ASSERT_EQ(before.Json()["action"], "REVIEW") << before.body;
  ASSERT_EQ(before.Json()["degraded"], false) << before.body;
  // Twelve batches of 250, spread over seconds 1..59 of event time, then one payment at 70
  // that completes the panes.
  for (int b = 0; b < 12; ++b) {
    std::vector<std::string> txs;
    for (int i = 0; i < 250; ++i) {
      const int n = b * 250 + i;
      txs.push_back(TxFrom(absl::StrCat("cent-", n), 1 + n % 59, "A1", "A2", "0.01"));
    }
    const TestHttpResponse r =
        Send("POST", "/v1/score/batch", absl::StrCat("[", absl::StrJoin(txs, ","), "]"));
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  }
  ASSERT_EQ(Score(TxFrom("cent-end", 70, "A1", "A2", "0.01")).status, 200);
  nlohmann::json drift;
  ASSERT_TRUE(Eventually([&] {
    drift = Drift();
    return drift.value("rows", 0) >= 3002;
  })) << drift.dump().substr(0, 2000);
  EXPECT_EQ(drift["frozen"], false);
  EXPECT_EQ(drift["level"], "none");
  EXPECT_GE(drift["capped_rows"].get<int>(), 2 * 2990) << drift.dump().substr(0, 2000);
  const TestHttpResponse after = Score(TxFrom("review-1", 71, "C2", "D2", "120.00"));
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(after.Json()["action"], "REVIEW") << after.body;
  EXPECT_EQ(after.Json()["degraded"], false) << after.body;
  EXPECT_EQ(after.Json()["model_role"], "champion") << after.body;
}

// A freeze from real evidence (far payments from many accounts): the rules decide, but what the
// frozen model would have raised is held for review, with its reason; the freeze is a WARN line,
// an event and a metric; an admin (only an admin) releases it with a reason, and the model
// decides again.
TEST_F(VigilServerDriftTest, AFrozenModelHoldsForReviewWhatItWouldRaiseAndAnAdminReleasesIt) {
  SmallWindows(WriteProfile(dir_ + "/far_profile.json", 0, 10, /*score=*/false));
  config_.drift.monitor.min_accounts = 5;
  config_.drift.monitor.account_cap_rows = 1;
  config_.policy = LowReviewPolicy(dir_, config_.policy);
  config_.auth.mode = "tokens";
  std::filesystem::create_directories(config_.data_dir);
  ASSERT_OK_AND_ASSIGN(const std::string admin,
                       AccessTokens::Create(config_.data_dir, Role::kAdmin, "ops"));
  ASSERT_OK_AND_ASSIGN(const std::string scorer,
                       AccessTokens::Create(config_.data_dir, Role::kScorer, "gateway"));
  token_ = admin;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (int i = 0; i <= 10; ++i) {
    const TestHttpResponse r = Score(TxFrom(absl::StrCat("far-", i), i, absl::StrCat("F", i),
                                            absl::StrCat("G", i), "9000.00"));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  nlohmann::json drift;
  ASSERT_NO_FATAL_FAILURE(WaitForFreeze(&drift));

  // Rules alone would allow it; the frozen model scores it above the review threshold.
  const TestHttpResponse frozen = Score(TxFrom("held-1", 11, "H1", "J1", "5.00"));
  ASSERT_EQ(frozen.status, 200) << frozen.body;
  const nlohmann::json d = frozen.Json();
  EXPECT_EQ(d["degraded_reason"], "drift_freeze") << frozen.body;
  EXPECT_EQ(d["action"], "REVIEW") << frozen.body;
  EXPECT_THAT(ReasonCodes(d), HasSubstr("drift_freeze_floor")) << frozen.body;
  std::string metrics = Send("GET", "/metrics").body;
  EXPECT_EQ(MetricValue(metrics, "vigil_drift_freeze_floor_total"), 1);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_drift_transitions_total{kind="freeze"})"), 1);
  EXPECT_GE(MetricValue(metrics, R"(vigil_drift_transitions_total{kind="level_change"})"), 2);
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(LogText(), R"("level":"warn","msg":"drift froze the model)");
  })) << LogText();
  EXPECT_THAT(LogText(), HasSubstr("amount_reporting (short L3)"));  // the subjects, as evidence

  // Only an admin may release, and must say why.
  token_ = scorer;
  EXPECT_EQ(Send("POST", "/v1/drift/release", R"({"reason":"checked"})").status, 403);
  token_ = admin;
  const TestHttpResponse no_reason = Send("POST", "/v1/drift/release", "{}");
  EXPECT_EQ(no_reason.status, 400) << no_reason.body;
  EXPECT_EQ(no_reason.Json()["error"].value("field", ""), "$.reason") << no_reason.body;
  const TestHttpResponse released =
      Send("POST", "/v1/drift/release", R"({"reason":"the far amounts are a known test"})");
  ASSERT_EQ(released.status, 200) << released.body;
  EXPECT_EQ(released.Json()["frozen"], false) << released.body;
  EXPECT_THAT(released.Json()["event"].value("detail", ""), HasSubstr("token:"));
  drift = Drift();
  EXPECT_EQ(drift["frozen"], false);
  EXPECT_EQ(drift["released_by_operator"], true);
  EXPECT_THAT(EventKinds(drift), Contains("freeze_released"));
  const TestHttpResponse again = Send("POST", "/v1/drift/release", R"({"reason":"twice"})");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.Json()["error"].value("code", ""), "not_frozen") << again.body;
  metrics = Send("GET", "/metrics").body;
  EXPECT_EQ(MetricValue(metrics, R"(vigil_drift_transitions_total{kind="freeze_released"})"), 1);

  // The model decides again.
  const TestHttpResponse after = Score(TxFrom("held-2", 12, "H2", "J2", "5.00"));
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(after.Json()["degraded"], false) << after.body;
  EXPECT_EQ(after.Json()["model_role"], "champion") << after.body;
  EXPECT_EQ(after.Json()["action"], "REVIEW") << after.body;
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(LogText(), R"("msg":"drift freeze released)");
  })) << LogText();

  // Every drift event is a record of the audit log too (an event record, in the chain among
  // the decisions), and the log verifies.
  std::vector<std::string> audited;
  std::string release_detail;
  ASSERT_TRUE(Eventually([&] {
    const TestHttpResponse page = Send("GET", "/v1/audit/export?limit=10000");
    audited.clear();
    for (absl::string_view line : absl::StrSplit(page.body, '\n', absl::SkipEmpty())) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (!j.contains("event")) continue;
      EXPECT_EQ(j["source"], "drift") << line;
      EXPECT_FALSE(j.contains("transaction")) << line;
      audited.push_back(j["event"]["kind"]);
      if (audited.back() == "freeze_released") release_detail = j["event"].value("detail", "");
    }
    return std::find(audited.begin(), audited.end(), "freeze_released") != audited.end();
  })) << ::testing::PrintToString(audited);
  EXPECT_THAT(audited, Contains("level_change"));
  EXPECT_THAT(audited, Contains("freeze"));
  EXPECT_THAT(audited, Contains("ticket_opened"));
  EXPECT_THAT(release_detail, HasSubstr("token:"));
  const TestHttpResponse verified = Send("GET", "/v1/audit/verify");
  EXPECT_EQ(verified.status, 200) << verified.body;
}

}  // namespace
}  // namespace vigil
