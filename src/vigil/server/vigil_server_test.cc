// End-to-end tests of `vigil serve`: the real VigilServer in-process (the testdata model, the
// default policy, the FX table), spoken to over loopback HTTP. Faults (a slow model) are
// injected through ServeHooks::wrap_model.
#include "vigil/server/vigil_server.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/batching/backend_router.h"
#include "vigil/decision/model_registry.h"
#include "vigil/model/cuda/cuda_scorer.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::vigil::testing::Eventually;
using ::vigil::testing::MetricValue;
using ::vigil::testing::ReadFile;

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::HttpOnce;
using testing::StatusIs;
using testing::TestHttpClient;
using testing::TestHttpResponse;
using Millis = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

std::string Tx(const std::string& id, const std::string& value = "9000.00",
               const std::string& account = "A1") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":")", account, R"(","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"A2","bank_id":"B2"},)",
                      R"("amount":{"value":")", value, R"(","currency":"USD"}})");
}

// "text" with its top-level `version:` line replaced.
std::string WithVersion(const std::string& text, const std::string& version) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (std::string& line : lines) {
    if (absl::StartsWith(line, "version:")) {
      line = absl::StrCat("version: \"", version, "\"");
      break;
    }
  }
  return absl::StrJoin(lines, "\n");
}

// A model that is slow on demand: while `slow` is set each call first waits `delay` (or until
// `slow` is cleared), then scores with the real model.
struct SlowControl {
  std::atomic<bool> slow{false};
  std::atomic<int64_t> delay_ms{100};
  std::atomic<int> slowed{0};  // calls that found `slow` set
};

class SlowScorer final : public Scorer {
 public:
  SlowScorer(std::shared_ptr<const Scorer> inner, std::shared_ptr<SlowControl> control)
      : inner_(std::move(inner)), control_(std::move(control)) {}
  const std::string& model_version() const override { return inner_->model_version(); }
  size_t row_width() const override { return inner_->row_width(); }
  using Scorer::Score;
  absl::Status Score(absl::Span<const double> rows, size_t n, absl::Span<double> scores,
                     const ScoreContext& context) const override {
    if (control_->slow.load()) {
      control_->slowed.fetch_add(1);
      const Steady::time_point until = Steady::now() + Millis(control_->delay_ms.load());
      while (control_->slow.load() && Steady::now() < until) std::this_thread::sleep_for(Millis(1));
    }
    return inner_->Score(rows, n, scores, context);
  }
  absl::StatusOr<std::vector<Reason>> Explain(absl::Span<const double> row, int k) const override {
    return inner_->Explain(row, k);
  }

 private:
  std::shared_ptr<const Scorer> inner_;
  std::shared_ptr<SlowControl> control_;
};

// Counts the transaction's payments in the originator's last 24 h: every decision names it, so
// a payment counted twice shows.
constexpr char kCountingPolicy[] = R"(version: "count"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: amount_reporting > 0
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

class VigilServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid too: two builds' test runs may share the machine's temporary directory.
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = testing::TestServeConfig(dir_);
    config_.worker_threads = 8;
    config_.worker_queue = 256;
    // Generous: the budget runs from a request's arrival, and a loaded CI machine can stall a
    // thread for a few hundred ms; the tests about the budget set their own.
    config_.score_budget = Millis(2000);
    config_.worker_max_queue_delay = Millis(2000);
    config_.limits.request_timeout = Millis(5000);
    config_.limits.idle_timeout = Millis(5000);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer(ServeHooks hooks = {}) {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    ASSERT_OK(fx);
    auto server = VigilServer::Start(config_, *std::move(fx), std::move(hooks));
    ASSERT_OK(server);
    server_ = *std::move(server);
  }
  // Starts with the model wrapped by a SlowScorer under control_.
  void StartSlowServer() {
    ServeHooks hooks;
    hooks.wrap_model = [control = control_](std::shared_ptr<const Scorer> inner) {
      return std::shared_ptr<const Scorer>(std::make_shared<SlowScorer>(std::move(inner), control));
    };
    StartServer(std::move(hooks));
  }

  uint16_t port() const { return server_->port(); }

  // POST /v1/score of Tx("<prefix>-<i>") from n clients at once, each on its own connection
  // (all connected before any sends); an exchange that failed leaves its answer empty.
  std::vector<TestHttpResponse> ScoreAtOnce(int n, const std::string& prefix) {
    std::vector<TestHttpResponse> answers(static_cast<size_t>(n));
    std::atomic<int> ready{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < n; ++i) {
      clients.emplace_back([&, i] {
        TestHttpClient client(port());
        ready.fetch_add(1);
        while (ready.load() < n) std::this_thread::yield();
        absl::StatusOr<TestHttpResponse> r =
            client.Request("POST", "/v1/score", Tx(absl::StrCat(prefix, "-", i)));
        if (r.ok()) answers[static_cast<size_t>(i)] = *std::move(r);
      });
    }
    for (std::thread& t : clients) t.join();
    return answers;
  }

  // POST /v1/score on a fresh connection; a failed exchange fails the test.
  TestHttpResponse Score(const std::string& body, const Headers& headers = {}) {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(port(), "POST", "/v1/score", body, headers);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  TestHttpResponse Post(const std::string& target, const std::string& body,
                        absl::string_view content_type = "application/json") {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(port(), "POST", target, body, {}, content_type);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  TestHttpResponse Get(const std::string& target) {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(port(), "GET", target);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  double Metric(const std::string& series) { return MetricValue(Get("/metrics").body, series); }
  // Score, sent again (a few times) when it was shed for waiting its whole budget for a worker:
  // with a short budget a stalled test machine does that, and it is not what these tests test.
  TestHttpResponse ScoreDespiteStalls(const std::string& body) {
    TestHttpResponse r;
    for (int attempt = 0; attempt < 5; ++attempt) {
      r = Score(body);
      if (r.status != 503 || !absl::StrContains(r.body, "for a worker")) break;
    }
    return r;
  }

  std::string ActivePolicyTag() { return Get("/readyz").Json().value("policy_version", ""); }

  std::string dir_;
  ServeConfig config_;
  std::shared_ptr<SlowControl> control_ = std::make_shared<SlowControl>();
  std::unique_ptr<VigilServer> server_;
};

// Expects a JSON error answer with that status, code and (when given) field.
void ExpectError(const TestHttpResponse& r, int status, const std::string& code,
                 const std::string& field = "") {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  const nlohmann::json j = r.Json();
  ASSERT_TRUE(j.is_object()) << r.body;
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_EQ(j["error"].value("code", ""), code) << r.body;
  if (!field.empty()) {
    EXPECT_EQ(j["error"].value("field", ""), field) << r.body;
  }
  EXPECT_FALSE(j["error"].value("message", "").empty()) << r.body;
}

TEST_F(VigilServerTest, ScoresATransaction) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string champion = server_->deployment().Current()->champion->version;
  const TestHttpResponse r = Score(Tx("e2e-1"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  const nlohmann::json d = r.Json();
  EXPECT_EQ(d["transaction_id"], "e2e-1");
  EXPECT_THAT(d["action"].get<std::string>(), AnyOf("ALLOW", "REVIEW", "BLOCK"));
  ASSERT_TRUE(d["score"].is_number()) << r.body;
  EXPECT_GE(d["score"].get<double>(), 0.0);
  EXPECT_LE(d["score"].get<double>(), 1.0);
  EXPECT_EQ(d["model_role"], "champion");
  EXPECT_EQ(d["model_version"], champion);
  EXPECT_THAT(d["policy_version"].get<std::string>(), StartsWith("default-2026.12.1@"));
  EXPECT_EQ(d["degraded"], false);
  const std::string traceparent = d["traceparent"].get<std::string>();
  EXPECT_TRUE(std::regex_match(traceparent, std::regex("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]")))
      << traceparent;
  EXPECT_EQ(r.Header("traceparent"), traceparent);
  ASSERT_TRUE(d["latency_us"].is_object());
  EXPECT_TRUE(d["latency_us"].contains("total")) << r.body;
  EXPECT_TRUE(d["latency_us"].contains("model")) << r.body;

  // The same id again: the first decision, byte for byte.
  EXPECT_EQ(Score(Tx("e2e-1")).body, r.body);
  // The same id with another payment: refused, never the first payment's decision.
  const TestHttpResponse conflict = Score(Tx("e2e-1", "900000.00"));
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_EQ(conflict.Json()["error"]["code"], "idempotency_conflict");
  EXPECT_EQ(conflict.Json()["error"]["field"], "$.id");
  EXPECT_THAT(conflict.Json()["error"]["message"].get<std::string>(), HasSubstr("e2e-1"));
  EXPECT_EQ(Score(Tx("e2e-1")).body, r.body);
  // In a batch too: that item is refused, and the log says so although the batch is a 200.
  const TestHttpResponse batch = Post(
      "/v1/score/batch", absl::StrCat("[", Tx("e2e-1", "900000.00"), ",", Tx("e2e-3"), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json results = batch.Json()["results"];
  EXPECT_EQ(results[0]["status"], 409) << batch.body;
  EXPECT_EQ(results[0]["error"]["code"], "idempotency_conflict") << batch.body;
  EXPECT_EQ(results[1]["transaction_id"], "e2e-3") << batch.body;
  bool logged = false;
  for (absl::string_view line : absl::StrSplit(ReadFile(config_.log_path), '\n')) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("msg", "").find("idempotency conflicts") == std::string::npos) {
      continue;
    }
    logged = true;
    EXPECT_EQ(j.value("level", ""), "warn") << line;
    EXPECT_EQ(j.value("transaction_ids", ""), "e2e-1") << line;
    EXPECT_EQ(j.value("count", ""), "1") << line;
  }
  EXPECT_TRUE(logged) << ReadFile(config_.log_path);

  // A caller's trace context: the trace id is kept, with a span of our own.
  const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const TestHttpResponse traced = Score(Tx("e2e-2"), {{"traceparent", parent}});
  ASSERT_EQ(traced.status, 200) << traced.body;
  const std::string ours = traced.Header("traceparent");
  EXPECT_THAT(ours, StartsWith("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
  EXPECT_NE(ours, parent);
  EXPECT_EQ(traced.Json()["traceparent"], ours);
}

TEST_F(VigilServerTest, AnswersBadRequestsWithJsonErrors) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  std::string bad_amount = Tx("bad-1");
  bad_amount.replace(bad_amount.find("9000.00"), 7, "1,5");
  ExpectError(Score(bad_amount), 400, "invalid_amount", "$.amount.value");
  ExpectError(Score("{\"id\":"), 400, "invalid_json");
  ExpectError(Post("/v1/score", Tx("bad-2"), "application/yaml"), 415, "unsupported_media_type",
              "Content-Type");
  // text/plain is a SWIFT MT message: JSON is not one.
  ExpectError(Post("/v1/score", Tx("bad-2"), "text/plain"), 400, "invalid_message", "$");
  ExpectError(Get("/no/such/route"), 404, "not_found");
  const TestHttpResponse get_score = Get("/v1/score");
  ExpectError(get_score, 405, "method_not_allowed");
  EXPECT_EQ(get_score.Header("Allow"), "POST");
  for (const char* budget : {"0", "801", "ten", "5ms", "-1"}) {
    ExpectError(Score(Tx("budget"), {{"X-Vigil-Budget-Ms", budget}}), 400, "invalid_field",
                "X-Vigil-Budget-Ms");
  }
  const TestHttpResponse budgeted = Score(Tx("budget"), {{"X-Vigil-Budget-Ms", "500"}});
  EXPECT_EQ(budgeted.status, 200) << budgeted.body;
  // A refused transaction is not remembered: corrected, the same id is decided.
  EXPECT_EQ(Score(Tx("bad-1")).status, 200);
}

TEST_F(VigilServerTest, ScoresBatches) {
  config_.limits.batch_size = 3;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  std::string bad = Tx("batch-2");
  bad.replace(bad.find("9000.00"), 7, "1,5");
  const TestHttpResponse r =
      Post("/v1/score/batch", absl::StrCat("[", Tx("batch-1"), ",", bad, ",", Tx("batch-3"), "]"));
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json j = r.Json();
  ASSERT_EQ(j["results"].size(), 3u) << r.body;
  EXPECT_EQ(j["results"][0]["transaction_id"], "batch-1");
  EXPECT_EQ(j["results"][0]["model_role"], "champion");
  EXPECT_EQ(j["results"][1]["index"], 1);
  EXPECT_EQ(j["results"][1]["status"], 400);
  EXPECT_EQ(j["results"][1]["error"]["field"], "$.amount.value") << r.body;
  EXPECT_EQ(j["results"][2]["transaction_id"], "batch-3");
  // Decided in the batch: the same id alone gets the same decision.
  EXPECT_EQ(nlohmann::json::parse(Score(Tx("batch-3")).body), j["results"][2]);

  ExpectError(Post("/v1/score/batch", Tx("batch-4")), 400, "invalid_field", "$");
  ExpectError(Post("/v1/score/batch", "[]"), 400, "invalid_field", "$");
  ExpectError(Post("/v1/score/batch", "[{"), 400, "invalid_json", "$");
  ExpectError(Post("/v1/score/batch", absl::StrCat("[", Tx("b5"), ",", Tx("b6"), ",", Tx("b7"),
                                                   ",", Tx("b8"), "]")),
              413, "batch_too_large", "$");
}

// SWIFT MT and ISO 20022 bodies: scored like JSON; a refused message names what is wrong.
TEST_F(VigilServerTest, ScoresSwiftMtAndIso20022Messages) {
  config_.limits.batch_size = 3;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string mt103 =
      ReadFile(::vigil::testing::TestDataPath("swift_mt/messages/mt103_0002.fin"));
  const TestHttpResponse mt = Post("/v1/score", mt103, "application/x-swift-mt");
  ASSERT_EQ(mt.status, 200) << mt.body;
  EXPECT_EQ(mt.Json()["transaction_id"], "8403c004-66b2-40fc-acba-9f11d1a4ad84");
  // text/plain is the same format; the same UETR is the same payment.
  EXPECT_EQ(Post("/v1/score", mt103, "text/plain").body, mt.body);

  const std::string pacs008 =
      ReadFile(::vigil::testing::TestDataPath("iso20022/messages/mx_pacs.008.001.12_0006.xml"));
  const TestHttpResponse mx = Post("/v1/score", pacs008, "application/xml");
  ASSERT_EQ(mx.status, 200) << mx.body;
  EXPECT_EQ(mx.Json()["transaction_id"], "8a562c67-ca16-48ba-b074-65581be6f001");

  ExpectError(Post("/v1/score",
                   ReadFile(::vigil::testing::TestDataPath("swift_mt/messages/mt205_0001.fin")),
                   "application/x-swift-mt"),
              422, "unsupported_message_type");
  std::string bad_amount = mt103;
  bad_amount.replace(bad_amount.find("USD7138,40"), 10, "USD7138.40");
  const TestHttpResponse bad = Post("/v1/score", bad_amount, "application/x-swift-mt");
  ExpectError(bad, 400, "invalid_message", "$");
  EXPECT_THAT(bad.Json()["error"]["message"].get<std::string>(), HasSubstr(":32A:"));
  ExpectError(Post("/v1/score", "<Document/>", "application/xml"), 400, "invalid_message");

  // Two transactions in one pacs.008: a batch, not a single score.
  std::string two = pacs008;
  const size_t begin = two.find("<CdtTrfTxInf>");
  const size_t end = two.find("</CdtTrfTxInf>") + std::string("</CdtTrfTxInf>").size();
  std::string second = two.substr(begin, end - begin);
  second.replace(second.find("8a562c67"), 8, "9b562c67");
  two.insert(end, second);
  two.replace(two.find("<NbOfTxs>1</NbOfTxs>"), 20, "<NbOfTxs>2</NbOfTxs>");
  ExpectError(Post("/v1/score", two, "application/xml"), 400, "invalid_message");
  const TestHttpResponse batch = Post("/v1/score/batch", two, "application/xml");
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json results = batch.Json()["results"];
  ASSERT_EQ(results.size(), 2u) << batch.body;
  EXPECT_EQ(results[0]["transaction_id"], "8a562c67-ca16-48ba-b074-65581be6f001");
  EXPECT_EQ(results[1]["transaction_id"], "9b562c67-ca16-48ba-b074-65581be6f001");
  EXPECT_EQ(results[0], mx.Json());  // decided before: the first decision

  // SWIFT MT messages one after the other: one item each; a bad one is that item's error.
  const std::string mt202 =
      ReadFile(::vigil::testing::TestDataPath("swift_mt/messages/mt202_0005.fin"));
  const TestHttpResponse mts =
      Post("/v1/score/batch", mt103 + "\n" + bad_amount + "\n$\n" + mt202, "text/plain");
  ASSERT_EQ(mts.status, 200) << mts.body;
  const nlohmann::json items = mts.Json()["results"];
  ASSERT_EQ(items.size(), 3u) << mts.body;
  EXPECT_EQ(items[0], mt.Json());
  EXPECT_EQ(items[1]["status"], 400);
  EXPECT_EQ(items[1]["error"]["code"], "invalid_message");
  EXPECT_FALSE(items[2].contains("status")) << mts.body;
  EXPECT_FALSE(items[2]["transaction_id"].get<std::string>().empty());
}

TEST_F(VigilServerTest, ReportsHealthReadinessAndMetrics) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse health = Get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.Json()["status"], "ok");
  const TestHttpResponse ready = Get("/readyz");
  ASSERT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.Json()["status"], "ready");
  EXPECT_THAT(ready.Json()["policy_version"].get<std::string>(), StartsWith("default-2026.12.1@"));
  EXPECT_EQ(ready.Json()["model_version"], server_->deployment().Current()->champion->version);

  for (int i = 0; i < 3; ++i) ASSERT_EQ(Score(Tx(absl::StrCat("m-", i))).status, 200);
  EXPECT_EQ(Score("not json").status, 400);
  EXPECT_EQ(Get("/nope").status, 404);
  const TestHttpResponse metrics = Get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.Header("Content-Type"), StartsWith("text/plain"));
  const std::string& text = metrics.body;
  EXPECT_EQ(MetricValue(text, R"(vigil_http_requests_total{route="score",status="200"})"), 3);
  EXPECT_EQ(MetricValue(text, R"(vigil_http_requests_total{route="score",status="400"})"), 1);
  EXPECT_EQ(MetricValue(text, R"(vigil_http_requests_total{route="other",status="404"})"), 1);
  EXPECT_EQ(MetricValue(text, R"(vigil_http_requests_total{route="readyz",status="200"})"), 1);
  EXPECT_EQ(MetricValue(text, R"(vigil_breaker_state{role="champion"})"), 0);
  EXPECT_EQ(MetricValue(text, R"(vigil_breaker_state{role="challenger"})"), -1);
  EXPECT_EQ(MetricValue(text, R"(vigil_http_request_duration_seconds_count{route="score"})"), 4);
}

TEST_F(VigilServerTest, IngestsAndActivatesPolicies) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string old_tag = ActivePolicyTag();
  const std::string text = testing::ReadFile(config_.policy);
  ASSERT_FALSE(text.empty());

  const TestHttpResponse added =
      Post("/v1/policy/ingest", WithVersion(text, "e2e-2"), "application/yaml");
  ASSERT_EQ(added.status, 200) << added.body;
  const nlohmann::json a = added.Json();
  EXPECT_EQ(a["version"], "e2e-2");
  EXPECT_EQ(a["active"], true);
  const std::string new_tag = a["tag"].get<std::string>();
  EXPECT_THAT(new_tag, StartsWith("e2e-2@"));
  EXPECT_EQ(Score(Tx("pol-1")).Json()["policy_version"], new_tag);
  EXPECT_EQ(ActivePolicyTag(), new_tag);

  // Stored, not activated.
  const TestHttpResponse parked =
      Post("/v1/policy/ingest?activate=false", WithVersion(text, "e2e-3"), "text/yaml");
  ASSERT_EQ(parked.status, 200) << parked.body;
  EXPECT_EQ(parked.Json()["active"], false);
  EXPECT_EQ(Score(Tx("pol-2")).Json()["policy_version"], new_tag);
  EXPECT_EQ(ActivePolicyTag(), new_tag);

  // Invalid: 422 with every problem; nothing changes.
  const TestHttpResponse invalid = Post("/v1/policy/ingest", R"(version: "broken"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: r1
    when: no_such_feature > 1
    action: review
    reason: "x"
)",
                                        "application/yaml");
  ExpectError(invalid, 422, "policy_invalid");
  const nlohmann::json details = invalid.Json()["error"]["details"];
  ASSERT_TRUE(details.is_array()) << invalid.body;
  EXPECT_GE(details.size(), 1u);
  EXPECT_THAT(invalid.body, HasSubstr("no_such_feature"));
  ExpectError(Post("/v1/policy/ingest", WithVersion(text, "e2e-4"), "text/plain"), 415,
              "unsupported_media_type");
  ExpectError(Post("/v1/policy/ingest?activate=maybe", WithVersion(text, "e2e-4"),
                   "application/yaml"),
              400, "invalid_field", "activate");
  EXPECT_EQ(Score(Tx("pol-3")).Json()["policy_version"], new_tag);
  EXPECT_NE(old_tag, new_tag);
}

// Four clients score without pause while the policy is swapped: no request fails, each decision
// names the old or the new version, and every request sent after the swap returned has the new.
TEST_F(VigilServerTest, SwapsThePolicyUnderLoad) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string old_tag = ActivePolicyTag();
  const std::string text = WithVersion(testing::ReadFile(config_.policy), "e2e-swap");
  struct Result {
    Steady::time_point sent;
    int status;
    std::string policy_version;
  };
  constexpr int kClients = 4;
  std::vector<std::vector<Result>> results(kClients);
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      TestHttpClient client(port());
      for (int n = 0; !stop.load(); ++n) {
        const Steady::time_point sent = Steady::now();
        absl::StatusOr<TestHttpResponse> r =
            client.Request("POST", "/v1/score", Tx(absl::StrCat("swap-", c, "-", n)));
        Result result{sent, r.ok() ? r->status : -1, ""};
        if (r.ok()) result.policy_version = r->Json().value("policy_version", "");
        results[static_cast<size_t>(c)].push_back(std::move(result));
        done.fetch_add(1);
        if (!r.ok()) return;
      }
    });
  }
  const Steady::time_point start = Steady::now();
  EXPECT_TRUE(Eventually([&] { return Steady::now() - start > Millis(600) && done.load() >= 20; }));
  const TestHttpResponse swapped = Post("/v1/policy/ingest", text, "application/yaml");
  const Steady::time_point swap_returned = Steady::now();
  const int done_at_swap = done.load();
  EXPECT_TRUE(Eventually(
      [&] { return Steady::now() - start > Millis(1500) && done.load() >= done_at_swap + 20; }));
  stop.store(true);
  for (std::thread& t : clients) t.join();

  ASSERT_EQ(swapped.status, 200) << swapped.body;
  const std::string new_tag = swapped.Json()["tag"].get<std::string>();
  ASSERT_NE(new_tag, old_tag);
  int before = 0, after = 0, total = 0;
  for (const std::vector<Result>& client : results) {
    for (const Result& r : client) {
      ++total;
      ASSERT_EQ(r.status, 200);
      ASSERT_THAT(r.policy_version, AnyOf(old_tag, new_tag));
      if (r.sent > swap_returned) {
        ASSERT_EQ(r.policy_version, new_tag) << "a request sent after the swap returned";
        ++after;
      }
      before += r.policy_version == old_tag;
    }
  }
  EXPECT_GT(before, 0);
  EXPECT_GT(after, 0);
  EXPECT_GE(total, 40);
}

// A byte-different copy of the model (same trees, another ref) as a canary, then as a shadow.
TEST_F(VigilServerTest, SplitsTrafficToACanaryAndScoresAShadow) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const auto champion = server_->deployment().Current()->champion;
  const std::string copy_path = dir_ + "/copy.json";
  std::ofstream(copy_path) << testing::ReadFile(config_.model) << "\n";
  auto registry = ModelRegistry::Open(config_.data_dir + "/models");
  ASSERT_OK(registry);
  auto copy = registry->Add(copy_path);
  ASSERT_OK(copy);
  ASSERT_NE(copy->ref, champion->ref);
  const std::string copy_version = "model@" + copy->ref.substr(0, 12);

  const TestHttpResponse activated = Post(
      "/v1/engine/activate",
      absl::StrCat(R"({"model_ref":")", copy->ref.substr(0, 12), R"(","traffic_weight":0.5})"));
  ASSERT_EQ(activated.status, 200) << activated.body;
  const nlohmann::json a = activated.Json();
  EXPECT_EQ(a["champion"]["ref"], champion->ref);
  EXPECT_EQ(a["challenger"]["ref"], copy->ref);
  EXPECT_EQ(a["challenger"]["model_version"], copy_version);
  EXPECT_EQ(a["challenger"]["traffic_weight"], 0.5);
  EXPECT_TRUE(a["shadow"].is_null());

  int to_challenger = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string id = absl::StrCat("canary-", i);
    const bool challenger = ModelDeployment::RoutesToChallenger(id, 0.5);
    const nlohmann::json d = Score(Tx(id)).Json();
    EXPECT_EQ(d["model_role"], challenger ? "challenger" : "champion") << id;
    EXPECT_EQ(d["model_version"], challenger ? copy_version : champion->version) << id;
    to_challenger += challenger;
  }
  EXPECT_GT(to_challenger, 0);
  EXPECT_LT(to_challenger, 40);
  EXPECT_EQ(Metric(R"(vigil_breaker_state{role="challenger"})"), 0);

  // Weight 0 naming the champion: back to the champion alone.
  const TestHttpResponse cleared =
      Post("/v1/engine/activate",
           absl::StrCat(R"({"model_ref":")", champion->ref, R"(","traffic_weight":0})"));
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_TRUE(cleared.Json()["challenger"].is_null());

  const TestHttpResponse shadowed = Post(
      "/v1/engine/activate", absl::StrCat(R"({"model_ref":")", copy->ref, R"(","shadow":true})"));
  ASSERT_EQ(shadowed.status, 200) << shadowed.body;
  EXPECT_EQ(shadowed.Json()["shadow"]["ref"], copy->ref);
  constexpr int kShadowed = 10;
  for (int i = 0; i < kShadowed; ++i) {
    const TestHttpResponse r = Score(Tx(absl::StrCat("shadow-", i)));
    ASSERT_EQ(r.status, 200) << r.body;
    const nlohmann::json d = r.Json();
    EXPECT_EQ(d["model_role"], "champion");
    ASSERT_TRUE(d.contains("shadow")) << r.body;
    EXPECT_EQ(d["shadow"]["model_version"], copy_version);
    EXPECT_EQ(d["shadow"]["score"], d["score"]) << r.body;  // the same trees
  }
  const std::string metrics = Get("/metrics").body;
  EXPECT_EQ(MetricValue(metrics, R"(vigil_shadow_agreement_total{agree="true"})"), kShadowed);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_shadow_agreement_total{agree="false"})"), 0);

  ExpectError(Post("/v1/engine/activate",
                   R"({"model_ref":"0123456789abcdef","traffic_weight":0.5})"),
              404, "model_not_found", "$.model_ref");
  ExpectError(Post("/v1/engine/activate",
                   absl::StrCat(R"({"model_ref":")", copy->ref, R"(","traffic_weight":2})")),
              400, "invalid_field", "$.traffic_weight");
  ExpectError(Post("/v1/engine/activate", R"({"traffic_weight":0.5})"), 400, "invalid_field",
              "$.model_ref");
}

// Without gpu.enabled (the default) nothing of the GPU exists: the CPU scores every batch, and
// no GPU series is exported.
TEST_F(VigilServerTest, WithoutGpuTheCpuScoresAndNoGpuMetricsAreExported) {
  ASSERT_FALSE(config_.gpu.enabled);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(server_->deployment().Current()->champion->router, nullptr);
  const TestHttpResponse r = Score(Tx("cpu-1"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["model_backend"], "cpu") << r.body;
  const std::string metrics = Get("/metrics").body;
  EXPECT_FALSE(absl::StrContains(metrics, "vigil_gpu_")) << metrics;
  EXPECT_FALSE(absl::StrContains(metrics, "vigil_model_batches_total")) << metrics;
  server_->log().Flush();
  EXPECT_THAT(ReadFile(config_.log_path), HasSubstr(R"("gpu":"off")"));
}

// gpu.enabled on a host or build without a usable GPU: the start fails before anything is
// bound or loaded, naming the key and the CUDA runtime's reason; it never falls back to the
// CPU in silence.
TEST_F(VigilServerTest, RefusesToStartWithGpuEnabledAndNoUsableGpu) {
  if (ProbeCudaDevice(0).ok()) GTEST_SKIP() << "a usable GPU is present";
  config_.gpu.enabled = true;
  absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  const absl::StatusOr<std::unique_ptr<VigilServer>> server =
      VigilServer::Start(config_, *std::move(fx));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable) << server.status();
  const std::string message(server.status().message());
  EXPECT_THAT(message, StartsWith("gpu.enabled: the CUDA backend cannot start: ")) << message;
  if (CudaBackendBuilt()) {
    EXPECT_THAT(message, HasSubstr("no CUDA device")) << message;  // the runtime's reason
  } else {
    EXPECT_THAT(message, HasSubstr("VIGIL_ENABLE_CUDA")) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(config_.data_dir));  // nothing loaded or created

  // A device ordinal the host does not have is named as gpu.device (on a host with devices)
  // or fails as above (without).
  config_.gpu.device = 1000;
  fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  const absl::StatusOr<std::unique_ptr<VigilServer>> other =
      VigilServer::Start(config_, *std::move(fx));
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()),
              AnyOf(StartsWith("gpu.enabled: "), StartsWith("gpu.device: ")));
}

// With a GPU: batches of a class's gpu.min_rows go to the GPU, P0 singles stay on the CPU, the
// router's counts are exported, and a model activated later gets a router of its own.
TEST_F(VigilServerTest, ScoresLargeBatchesOnTheGpuWhenEnabled) {
  if (!ProbeCudaDevice(0).ok()) GTEST_SKIP() << "no usable GPU here";
  config_.gpu.enabled = true;
  // A device the host does not have: the start fails naming gpu.device.
  config_.gpu.device = 1000;
  absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  const absl::StatusOr<std::unique_ptr<VigilServer>> absent =
      VigilServer::Start(config_, *std::move(fx));
  EXPECT_THAT(absent.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                        StartsWith("gpu.device: the CUDA backend cannot start "
                                                   "on device 1000: ")));
  config_.gpu.device = 0;
  config_.gpu.min_rows = {BackendRouterConfig::kNever, 4, 4};
  config_.gpu.timeout = Millis(200);  // generous: the subject is routing, not speed
  config_.limits.batch_size = 8;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const auto champion = server_->deployment().Current()->champion;
  ASSERT_NE(champion->router, nullptr);
  server_->log().Flush();
  EXPECT_THAT(ReadFile(config_.log_path), HasSubstr(R"("gpu":"on: device 0 )"));

  std::vector<std::string> txs;
  for (int i = 0; i < 8; ++i) {
    txs.push_back(Tx(absl::StrCat("gpu-", i), "9000.00", absl::StrCat("G", i)));
  }
  const TestHttpResponse batch =
      Post("/v1/score/batch", absl::StrCat("[", absl::StrJoin(txs, ","), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json results = batch.Json()["results"];
  ASSERT_EQ(results.size(), 8u) << batch.body;
  for (const nlohmann::json& d : results) {
    EXPECT_EQ(d["model_backend"], "gpu") << d.dump();
    EXPECT_EQ(d["degraded"], false) << d.dump();
  }
  std::string urgent = Tx("gpu-p0");
  urgent.insert(urgent.size() - 1, R"(,"priority":"P0")");
  const TestHttpResponse single = Score(urgent);
  ASSERT_EQ(single.status, 200) << single.body;
  EXPECT_EQ(single.Json()["model_backend"], "cpu") << single.body;

  const std::string metrics = Get("/metrics").body;
  EXPECT_GE(MetricValue(metrics, R"(vigil_model_batches_total{backend="gpu"})"), 1);
  EXPECT_GE(MetricValue(metrics, R"(vigil_model_rows_total{backend="gpu"})"), 8);
  EXPECT_GE(MetricValue(metrics, R"(vigil_model_batches_total{backend="cpu"})"), 1);
  for (const char* cause : {"timeout", "error", "busy"}) {
    EXPECT_EQ(MetricValue(metrics, absl::StrCat(R"(vigil_gpu_fallbacks_total{cause=")", cause,
                                                R"("})")),
              0)
        << cause;
  }
  EXPECT_EQ(MetricValue(metrics, "vigil_gpu_breaker_skips_total"), 0);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_gpu_breaker_state{role="champion"})"), 0);
  EXPECT_EQ(MetricValue(metrics, R"(vigil_gpu_breaker_state{role="challenger"})"), -1);

  // A model activated later (a canary here) is loaded with its own CUDA scorer and router.
  const std::string copy_path = dir_ + "/copy.json";
  std::ofstream(copy_path) << testing::ReadFile(config_.model) << "\n";
  auto registry = ModelRegistry::Open(config_.data_dir + "/models");
  ASSERT_OK(registry);
  auto copy = registry->Add(copy_path);
  ASSERT_OK(copy);
  const TestHttpResponse activated = Post(
      "/v1/engine/activate",
      absl::StrCat(R"({"model_ref":")", copy->ref.substr(0, 12), R"(","traffic_weight":0.5})"));
  ASSERT_EQ(activated.status, 200) << activated.body;
  const auto challenger = server_->deployment().Current()->challenger;
  ASSERT_NE(challenger, nullptr);
  ASSERT_NE(challenger->router, nullptr);
  EXPECT_NE(challenger->router, champion->router);
  EXPECT_EQ(MetricValue(Get("/metrics").body, R"(vigil_gpu_breaker_state{role="challenger"})"),
            0);
}

TEST_F(VigilServerTest, TheBreakerOpensOnASlowModelAndClosesWhenItRecovers) {
  config_.breaker.failure_threshold = 3;
  config_.breaker.budget = Millis(2);
  config_.breaker.open_for = Millis(300);
  config_.score_budget = Millis(60);
  control_->delay_ms = 100;
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;

  // Slow: degraded at the budget; after three slow calls the breaker opens.
  int n = 0;
  auto score = [&] {
    const TestHttpResponse r = ScoreDespiteStalls(Tx(absl::StrCat("brk-", n++)));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json();
  };
  const nlohmann::json first = score();
  EXPECT_EQ(first["degraded"], true);
  EXPECT_THAT(first.value("degraded_reason", ""), HasSubstr("deadline"));
  ASSERT_TRUE(Eventually([&] {
    const nlohmann::json d = score();
    EXPECT_EQ(d["degraded"], true);
    return absl::StrContains(d.value("degraded_reason", ""), "circuit breaker");
  }));
  const Steady::time_point opened = Steady::now();
  // Open: rules only at once, without waiting out the budget.
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json d = score();
    EXPECT_EQ(d["degraded"], true);
    EXPECT_THAT(d.value("degraded_reason", ""), HasSubstr("circuit breaker"));
    EXPECT_LT(d["latency_us"].value("total", int64_t{1'000'000}), 60'000) << d.dump();
  }
  EXPECT_EQ(Metric(R"(vigil_breaker_state{role="champion"})"), 1);
  EXPECT_GE(Metric("vigil_breaker_openings_total"), 1);
  EXPECT_GE(Metric(R"(vigil_degraded_decisions_total{class="P1"})"), 4);

  // Recovered: after open_for a probe closes the breaker.
  control_->slow = false;
  nlohmann::json recovered;
  ASSERT_TRUE(Eventually([&] {
    recovered = score();
    return recovered["degraded"] == false;
  }));
  EXPECT_GE(Steady::now() - opened, Millis(250));  // not before open_for (less timer slack)
  EXPECT_TRUE(recovered["score"].is_number());
  EXPECT_EQ(Metric(R"(vigil_breaker_state{role="champion"})"), 0);
}

// The budget holds for every class: an urgent (P0) payment, which the fast preset never holds
// back, is decided on rules alone at its budget when a model that was fast turns slow, not when
// the model answers.
TEST_F(VigilServerTest, AnUrgentPaymentIsDecidedWithinItsBudgetWhenTheModelIsSlow) {
  config_.score_budget = Millis(60);
  config_.breaker.failure_threshold = 1000;
  control_->delay_ms = 1000;
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  auto urgent = [](const std::string& id) {
    std::string tx = Tx(id);
    tx.insert(tx.size() - 1, R"(,"priority":"P0")");
    return tx;
  };
  // A model that was fast so far...
  for (int i = 0; i < 3; ++i) {
    const TestHttpResponse r = ScoreDespiteStalls(urgent(absl::StrCat("p0-fast-", i)));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  // ...turns slow.
  control_->slow = true;
  const Steady::time_point start = Steady::now();
  const TestHttpResponse r = ScoreDespiteStalls(urgent("p0-slow"));
  const Steady::duration took = Steady::now() - start;
  control_->slow = false;
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json d = r.Json();
  EXPECT_EQ(d["degraded"], true) << r.body;
  EXPECT_THAT(d.value("degraded_reason", ""), HasSubstr("deadline"));
  EXPECT_LT(took, Millis(800)) << "waited for the slow model, not the 60 ms budget";
}

// Every request refused for overload is counted in vigil_shed_total (by where it was shed) and
// told in one "requests shed" line at warn, not in an error line per request.
TEST_F(VigilServerTest, EveryShedIsCountedAndLoggedOnceAtWarnNotPerRequest) {
  config_.worker_threads = 1;
  config_.worker_queue = 1;
  config_.breaker.failure_threshold = 1000;  // slowness is not the subject here
  control_->delay_ms = 300;
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;
  constexpr int kClients = 8;
  const std::vector<TestHttpResponse> answers = ScoreAtOnce(kClients, "load");
  control_->slow = false;
  int shed = 0;
  for (const TestHttpResponse& r : answers) {
    ASSERT_THAT(r.status, AnyOf(200, 503)) << r.body;
    if (r.status != 503) continue;
    ++shed;
    ExpectError(r, 503, "overloaded");
    EXPECT_EQ(r.Header("Retry-After"), "1");
  }
  // One running, one queued: the rest are refused at once.
  EXPECT_GE(shed, kClients - 2);
  EXPECT_EQ(Metric(R"(vigil_shed_total{class="unknown",reason="workers"})"), shed);
  EXPECT_EQ(Metric(R"(vigil_shed_total{class="P1",reason="batcher"})"), 0);
  // The log: no line per shed request; one summary at warn (the first of the burst at once).
  int summaries = 0;
  for (absl::string_view line : absl::StrSplit(ReadFile(config_.log_path), '\n')) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    EXPECT_NE(j.value("status", 0), 503) << line;
    if (j.value("msg", "") != "requests shed") continue;
    ++summaries;
    EXPECT_EQ(j.value("level", ""), "warn") << line;
    EXPECT_EQ(j.value("workers", ""), "1") << line;
  }
  EXPECT_EQ(summaries, 1);
}

// A full batcher queue sheds with 503 overloaded + Retry-After; the refused payments, retried,
// are decided once each, on the features counted the first time.
TEST_F(VigilServerTest, ShedsWhenTheBatcherQueueIsFullAndRetriesAreDecidedOnce) {
  const std::string policy = dir_ + "/count.yaml";
  std::ofstream(policy) << kCountingPolicy;
  config_.policy = policy;
  for (ClassPolicy& c : config_.batcher.classes) c.max_queue = 2;
  config_.breaker.failure_threshold = 1000;  // slowness is not the subject here
  config_.score_budget = Millis(2000);
  config_.worker_threads = 16;
  control_->delay_ms = 50;
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;

  constexpr int kClients = 16;
  const std::vector<TestHttpResponse> first = ScoreAtOnce(kClients, "shed");
  control_->slow = false;

  std::vector<nlohmann::json> decisions;
  int shed = 0;
  for (int i = 0; i < kClients; ++i) {
    const TestHttpResponse& r = first[static_cast<size_t>(i)];
    ASSERT_THAT(r.status, AnyOf(200, 503)) << r.body;
    if (r.status == 503) {
      ++shed;
      ExpectError(r, 503, "overloaded");
      EXPECT_EQ(r.Header("Retry-After"), "1");
      const TestHttpResponse retry = Score(Tx(absl::StrCat("shed-", i)));
      ASSERT_EQ(retry.status, 200) << retry.body;
      decisions.push_back(retry.Json());
    } else {
      decisions.push_back(r.Json());
    }
  }
  EXPECT_GT(shed, 0);
  EXPECT_LT(shed, kClients);
  EXPECT_EQ(Metric(R"(vigil_shed_total{class="P1",reason="batcher"})"), shed);
  // Each payment counted once: the counts are exactly 1..16.
  std::multiset<std::string> counts;
  for (const nlohmann::json& d : decisions) {
    for (const nlohmann::json& reason : d["reasons"]) {
      if (reason.value("code", "") == "count") counts.insert(reason.value("text", ""));
    }
  }
  std::multiset<std::string> expected;
  for (int i = 1; i <= kClients; ++i) expected.insert(absl::StrCat(i, " sent in 24 h"));
  EXPECT_EQ(counts, expected);
  // And the next payment is the 17th.
  const nlohmann::json next = Score(Tx("shed-next")).Json();
  EXPECT_THAT(next.dump(), HasSubstr("17 sent in 24 h"));
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(VigilServerTest, AFullWorkerPoolIs503) {
  config_.worker_threads = 1;
  config_.worker_queue = 1;
  config_.score_budget = Millis(10000);
  config_.breaker.failure_threshold = 1000;
  control_->delay_ms = 10000;  // until released
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;
  TestHttpResponse a, b;
  std::thread ta([&] { a = Score(Tx("wp-a")); });
  ASSERT_TRUE(Eventually([&] { return control_->slowed.load() >= 1; }));  // the worker is busy
  std::thread tb([&] { b = Score(Tx("wp-b")); });
  EXPECT_TRUE(Eventually([&] { return Metric("vigil_workers_queued") == 1; }));  // b waits
  const TestHttpResponse c = Score(Tx("wp-c"));
  ExpectError(c, 503, "overloaded");
  EXPECT_EQ(c.Header("Retry-After"), "1");
  control_->slow = false;
  ta.join();
  tb.join();
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(Score(Tx("wp-c")).status, 200);  // nothing of it was kept
  EXPECT_EQ(Metric(R"(vigil_http_requests_total{route="score",status="503"})"), 1);
}

// The budget runs from the request's arrival: one that spent all of it waiting for a worker
// is shed (503) rather than decided late, and nothing of it is kept.
TEST_F(VigilServerTest, AScoreThatWaitedItsWholeBudgetForAWorkerIsShed) {
  config_.worker_threads = 1;
  config_.score_budget = Millis(100);
  config_.breaker.failure_threshold = 1000;
  control_->delay_ms = 5000;  // until released
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;
  // a holds the only worker for its own budget (800 ms, from its header); b, with the default
  // 100 ms, waits behind it longer than that.
  TestHttpResponse a;
  std::thread ta([&] { a = Score(Tx("wait-a"), {{"X-Vigil-Budget-Ms", "800"}}); });
  ASSERT_TRUE(Eventually([&] { return control_->slowed.load() >= 1; }));
  const TestHttpResponse b = Score(Tx("wait-b"));
  control_->slow = false;
  ta.join();
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.Json()["degraded"], true) << a.body;  // the model missed a's 800 ms
  ExpectError(b, 503, "overloaded");
  EXPECT_EQ(b.Header("Retry-After"), "1");
  // Not decided: the same id now gets a decision of its own.
  const TestHttpResponse again = Score(Tx("wait-b"));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["transaction_id"], "wait-b");
}

TEST_F(VigilServerTest, ShutdownAnswersARequestInFlight) {
  config_.score_budget = Millis(5000);
  config_.breaker.failure_threshold = 1000;
  control_->delay_ms = 300;
  ASSERT_NO_FATAL_FAILURE(StartSlowServer());
  control_->slow = true;
  const uint16_t bound = port();
  TestHttpResponse r;
  std::thread client([&] { r = Score(Tx("in-flight")); });
  ASSERT_TRUE(Eventually([&] { return control_->slowed.load() >= 1; }));
  EXPECT_OK(server_->Shutdown());
  client.join();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["transaction_id"], "in-flight");
  EXPECT_FALSE(TestHttpClient(bound).connected());  // no longer listening
  EXPECT_OK(server_->Shutdown());                   // idempotent
}

}  // namespace
}  // namespace vigil
