// `vigil serve` and its audit log, end to end: the real VigilServer in-process over loopback
// HTTP on a temporary data dir. Every decision answered 200 is in the log (GET /v1/audit/verify),
// a restart answers decided ids from the log without recording or counting them again, and a
// failing disk (ServeHooks::store_faults) turns decisions into 503 audit_unavailable and the
// server unready, never into an acknowledgement the log does not hold. Also the audit: keys of
// the configuration.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_export.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/record_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/decision/decision_json.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/store/kv_faults.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::Eventually;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::MetricValue;
using ::vigil::testing::StatusIs;
using ::vigil::testing::TestHttpResponse;
using Millis = std::chrono::milliseconds;

// Every decision states its originator's payments in the last 24 h (all transactions here share
// one timestamp, so that is every payment of the account the features counted): a payment
// counted twice, or lost from the state, shows in the next decision of that account.
constexpr char kCountingPolicy[] = R"(version: "count"
thresholds: {review: 0.5, block: 0.9}
rules:
  - id: count
    when: amount_reporting > 0
    action: review
    reason: "{orig_out_count_24h} sent in 24 h"
)";

std::string Tx(const std::string& id, const std::string& account = "A1") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":")", account, R"(","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":"9000.00","currency":"USD"}})");
}

// The body as a JSON object; an empty one when it is not (a failed exchange, not JSON).
nlohmann::json Object(const TestHttpResponse& r) {
  nlohmann::json j = r.Json();
  return j.is_object() ? j : nlohmann::json::object();
}

// The error code of an error answer; "" for anything else.
std::string ErrorCode(const TestHttpResponse& r) {
  const nlohmann::json j = Object(r);
  const auto e = j.find("error");
  return e != j.end() && e->is_object() ? e->value("code", "") : "";
}

// The count the decision's "count" reason states, -1 when it has none.
int CountOf(const nlohmann::json& decision) {
  if (!decision.is_object() || !decision.contains("reasons") || !decision["reasons"].is_array()) {
    return -1;
  }
  for (const nlohmann::json& reason : decision["reasons"]) {
    if (reason.value("code", "") != "count") continue;
    return std::atoi(reason.value("text", "").c_str());
  }
  return -1;
}

// {1, 2, ..., n}: the counts of n payments of one account, each counted once.
std::multiset<int> OneTo(int n) {
  std::multiset<int> out;
  for (int i = 1; i <= n; ++i) out.insert(i);
  return out;
}

class VigilServerAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_audit_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string source = testing::SourceDir();
    const std::string policy = dir_ + "/count.yaml";
    std::ofstream(policy) << kCountingPolicy;
    config_.host = "127.0.0.1";
    config_.port = 0;
    config_.data_dir = dir_ + "/data";
    config_.model = testing::TestDataPath("models/serve_model.json");
    config_.policy = policy;
    config_.lists = source + "/policies/lists";
    config_.fx_rates = source + "/data/fx_rates.csv";
    config_.log_path = dir_ + "/serve.log";
    config_.worker_threads = 8;
    config_.worker_queue = 256;
    config_.score_budget = Millis(2000);  // the budget is not the subject here
    config_.audit.max_wait = Millis(0);     // nor the log's bound in time (set where it is)
    config_.plaintext = true;
    config_.auth.mode = "none";
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
  // Shuts the server down and starts another on the same data dir, without hooks.
  void Restart() {
    server_.reset();
    StartServer();
  }

  TestHttpResponse Request(const std::string& method, const std::string& target,
                           const std::string& body = "") {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), method, target, body);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }
  TestHttpResponse Score(const std::string& body) { return Request("POST", "/v1/score", body); }
  // The scored decision, which must be 200.
  nlohmann::json Decided(const std::string& body) {
    const TestHttpResponse r = Score(body);
    EXPECT_EQ(r.status, 200) << r.body;
    return Object(r);
  }
  // GET /v1/audit/verify, which must be 200 and intact.
  nlohmann::json VerifyIntact() {
    const TestHttpResponse r = Request("GET", "/v1/audit/verify");
    EXPECT_EQ(r.status, 200) << r.body;
    const nlohmann::json report = Object(r);
    EXPECT_EQ(report.value("intact", false), true) << r.body;
    return report;
  }
  uint64_t LoggedRecords() { return VerifyIntact().value("records", uint64_t{0}); }
  double Metric(const std::string& series) {
    return MetricValue(Request("GET", "/metrics").body, series);
  }
  // What the running server's log holds for "id", as the decision JSON it would answer.
  std::string RecordedDecision(const std::string& id) {
    DecisionRecorder trail(server_->service().audit_log(), {});
    absl::StatusOr<std::optional<audit::AuditRecord>> record = trail.Recorded(id);
    EXPECT_OK(record);
    if (!record.ok() || !record->has_value()) return "<not recorded>";
    return DecisionToJson((*record)->decision);
  }

  std::string dir_;
  ServeConfig config_;
  std::unique_ptr<VigilServer> server_;
};

void ExpectAuditUnavailable(const TestHttpResponse& r) {
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(ErrorCode(r), "audit_unavailable") << r.body;
  EXPECT_THAT(r.body, HasSubstr("\"message\":\"")) << r.body;
}

TEST_F(VigilServerAuditTest, EveryDecisionAnsweredIsInTheLog) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(LoggedRecords(), 0u);
  std::map<std::string, std::string> answered;  // id -> body
  for (int i = 0; i < 4; ++i) {
    const std::string id = absl::StrCat("in-log-", i);
    const TestHttpResponse r = Score(Tx(id, i % 2 == 0 ? "A1" : "A2"));
    ASSERT_EQ(r.status, 200) << r.body;
    answered[id] = r.body;
  }
  // A batch: two decisions and a refused item, which is not a decision.
  const TestHttpResponse batch = Request(
      "POST", "/v1/score/batch",
      absl::StrCat("[", Tx("in-log-b0"), R"(,{"id":"in-log-bad"},)", Tx("in-log-b1", "A2"), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json results = Object(batch).value("results", nlohmann::json::array());
  ASSERT_EQ(results.size(), 3u) << batch.body;
  EXPECT_EQ(results[0].value("transaction_id", ""), "in-log-b0") << batch.body;
  EXPECT_EQ(results[1].value("status", 0), 400) << batch.body;
  EXPECT_EQ(results[2].value("transaction_id", ""), "in-log-b1") << batch.body;
  // Neither a refused transaction nor a repeated one adds a record.
  EXPECT_EQ(Score(R"({"id":"in-log-bad"})").status, 400);
  EXPECT_EQ(Score(Tx("in-log-0")).body, answered["in-log-0"]);

  const nlohmann::json report = VerifyIntact();
  EXPECT_EQ(report.value("records", 0), 6) << report.dump();
  EXPECT_EQ(report.value("records_checked", 0), 6) << report.dump();
  EXPECT_FALSE(report.contains("damage")) << report.dump();
  EXPECT_EQ(Metric("vigil_audit_records"), 6);
  EXPECT_EQ(Metric("vigil_audit_healthy"), 1);
  // And each record holds the decision exactly as it was answered.
  for (const auto& [id, body] : answered) EXPECT_EQ(RecordedDecision(id), body) << id;
  // A batch answers each decision's JSON as it is, between the others.
  EXPECT_THAT(batch.body, HasSubstr(RecordedDecision("in-log-b0")));
  EXPECT_THAT(batch.body, HasSubstr(RecordedDecision("in-log-b1")));
  // From a sequence number on; a bad one is the caller's error.
  const TestHttpResponse from = Request("GET", "/v1/audit/verify?from=4");
  EXPECT_EQ(from.status, 200) << from.body;
  EXPECT_EQ(Object(from).value("records_checked", 0), 2) << from.body;
  const TestHttpResponse bad_from = Request("GET", "/v1/audit/verify?from=four");
  EXPECT_EQ(bad_from.status, 400) << bad_from.body;
  EXPECT_EQ(ErrorCode(bad_from), "invalid_field") << bad_from.body;
  EXPECT_THAT(bad_from.body, HasSubstr("\"field\":\"from\"")) << bad_from.body;
}

// While the disk stalls, a decision waiting for its durable record holds no worker: with one
// worker, a second payment is still decided. Once the oldest has waited past
// audit.max_wait_ms, new payments are refused on arrival; when the disk is back, both waiting
// payments are answered 200 and the refused one is decided on its retry.
TEST_F(VigilServerAuditTest, AStalledDiskHoldsNoWorkerAndTheExcessIsRefusedOnArrival) {
  config_.worker_threads = 1;
  config_.worker_queue = 4;  // room for the second payment while the first is taken
  config_.audit.max_wait = Millis(100);
  auto faults = std::make_shared<KvFaults>();
  ServeHooks hooks;
  hooks.store_faults = faults;
  ASSERT_NO_FATAL_FAILURE(StartServer(std::move(hooks)));
  ASSERT_EQ(Score(Tx("s-0")).status, 200);
  const std::string decided = R"(vigil_stage_latency_seconds_count{stage="total",class="P1"})";
  ASSERT_EQ(Metric(decided), 1);

  faults->set_hold_syncs(true);
  const auto started = std::chrono::steady_clock::now();
  TestHttpResponse first, second;
  std::thread a([&] { first = Score(Tx("s-1", "A1")); });
  std::thread b([&] { second = Score(Tx("s-2", "A2")); });
  EXPECT_TRUE(Eventually([&] { return Metric(decided) == 3; })) << Metric(decided);
  EXPECT_EQ(Metric("vigil_workers_busy"), 0);  // both decided; neither holds the worker
  EXPECT_EQ(Metric("vigil_audit_records"), 1);  // and neither is durable yet
  std::this_thread::sleep_until(started + Millis(150));
  const TestHttpResponse refused = Score(Tx("s-3", "A3"));
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(ErrorCode(refused), "overloaded") << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("audit.max_wait_ms"));
  EXPECT_EQ(refused.Header("Retry-After"), "1");
  EXPECT_EQ(Metric(R"(vigil_shed_total{class="unknown",reason="audit"})"), 1);
  EXPECT_EQ(Metric(decided), 3);  // refused before it was decided

  faults->set_hold_syncs(false);
  a.join();
  b.join();
  EXPECT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(Score(Tx("s-3", "A3")).status, 200);
  EXPECT_EQ(LoggedRecords(), 4u);
}

TEST_F(VigilServerAuditTest, ARestartAnswersDecidedIdsFromTheLogAndCountsNothingTwice) {
  // Two remembered ids: the early ones are answered from the log already before the restart.
  config_.idempotency_capacity = 2;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  std::map<std::string, std::string> answered, account_of;
  for (int i = 0; i < 6; ++i) {
    const std::string id = absl::StrCat("restart-", i);
    account_of[id] = i < 4 ? "A1" : "A2";
    const TestHttpResponse r = Score(Tx(id, account_of[id]));
    ASSERT_EQ(r.status, 200) << r.body;
    answered[id] = r.body;
  }
  EXPECT_EQ(Score(Tx("restart-0", "A1")).body, answered["restart-0"]);  // evicted from memory
  EXPECT_EQ(LoggedRecords(), 6u);

  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(LoggedRecords(), 6u);
  for (const auto& [id, body] : answered) {
    const TestHttpResponse again = Score(Tx(id, account_of[id]));
    EXPECT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(again.body, body) << id << ": not the recorded decision, byte for byte";
  }
  EXPECT_EQ(LoggedRecords(), 6u) << "a repeated id was recorded again";
  EXPECT_EQ(Metric("vigil_audit_records"), 6);
  // The feature state kept every payment, once: A1 sent 4, A2 2.
  EXPECT_EQ(CountOf(Decided(Tx("restart-next-1", "A1"))), 5);
  EXPECT_EQ(CountOf(Decided(Tx("restart-next-2", "A2"))), 3);
  EXPECT_EQ(LoggedRecords(), 8u);
}

// The fault at the file level (its syncs, or its writes), then a restart without it: what was
// answered 200 is in the log, what was refused was never acknowledged, and its retry is counted
// once.
class VigilServerAuditFaultTest : public VigilServerAuditTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(VigilServerAuditFaultTest, AFailingDiskStopsAcknowledgingAndARestartRecoversEveryAnswer) {
  const bool fail_syncs = GetParam();
  auto faults = std::make_shared<KvFaults>();
  ServeHooks hooks;
  hooks.store_faults = faults;
  ASSERT_NO_FATAL_FAILURE(StartServer(std::move(hooks)));
  std::map<std::string, std::string> answered;  // id -> body
  std::map<std::string, std::string> account_of;
  auto tx = [&](const std::string& id) { return Tx(id, account_of[id]); };
  for (int i = 0; i < 6; ++i) {
    const std::string id = absl::StrCat("before-", i);
    account_of[id] = i % 2 == 0 ? "A1" : "A2";
    const TestHttpResponse r = Score(tx(id));
    ASSERT_EQ(r.status, 200) << r.body;
    answered[id] = r.body;
  }
  ASSERT_EQ(Request("GET", "/readyz").status, 200);

  if (fail_syncs) {
    faults->set_fail_syncs(true);
  } else {
    faults->set_fail_writes(true);
  }
  std::vector<std::string> refused = {"during-0", "during-1"};
  account_of["during-0"] = "A1";
  account_of["during-1"] = "A1";
  ExpectAuditUnavailable(Score(tx("during-0")));
  EXPECT_GT(faults->failed(), 0u) << "the fault was never hit";
  // The log stays stopped: nothing more is acknowledged, single or in a batch.
  ExpectAuditUnavailable(Score(tx("during-1")));
  account_of["during-b0"] = "A2";
  account_of["during-b1"] = "A1";
  const TestHttpResponse batch =
      Request("POST", "/v1/score/batch", absl::StrCat("[", tx("during-b0"), ",", tx("during-b1"), "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json items = Object(batch).value("results", nlohmann::json::array());
  EXPECT_EQ(items.size(), 2u) << batch.body;
  for (const nlohmann::json& item : items) {
    EXPECT_EQ(item.value("status", 0), 503) << batch.body;
    EXPECT_THAT(item.dump(), HasSubstr("\"code\":\"audit_unavailable\"")) << batch.body;
  }
  refused.push_back("during-b0");
  refused.push_back("during-b1");
  const TestHttpResponse ready = Request("GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_EQ(ErrorCode(ready), "audit_unavailable") << ready.body;
  EXPECT_EQ(Metric("vigil_audit_healthy"), 0);
  EXPECT_GE(Metric("vigil_audit_refused_records"), 3);
  // A decided id is still answered from memory: it was acknowledged before the fault.
  EXPECT_EQ(Score(tx("before-0")).body, answered["before-0"]);

  // The disk is replaced: a restart without the fault.
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Request("GET", "/readyz").status, 200);
  const uint64_t logged = LoggedRecords();
  // Every answer is there; a group whose sync failed may be too (its bytes reached the OS) but
  // nothing beyond it.
  EXPECT_GE(logged, answered.size());
  EXPECT_LE(logged, answered.size() + refused.size());
  for (const auto& [id, body] : answered) {
    EXPECT_EQ(Score(tx(id)).body, body) << id << ": not the acknowledged decision";
  }
  EXPECT_EQ(LoggedRecords(), logged) << "an acknowledged id was recorded again";
  // The refused ones, retried, are decided (or answered with what the failed group left), and
  // each payment counts once: per account the counts are exactly 1..n.
  std::map<std::string, std::multiset<int>> counts;
  for (const auto& [id, body] : answered) {
    counts[account_of[id]].insert(CountOf(nlohmann::json::parse(body)));
  }
  for (const std::string& id : refused) {
    const nlohmann::json d = Decided(tx(id));
    EXPECT_EQ(d.value("transaction_id", ""), id);
    counts[account_of[id]].insert(CountOf(d));
  }
  EXPECT_EQ(LoggedRecords(), answered.size() + refused.size());
  EXPECT_EQ(counts["A1"], OneTo(6));  // before-0, 2, 4; during-0, 1, b1
  EXPECT_EQ(counts["A2"], OneTo(4));  // before-1, 3, 5; during-b0
  account_of["after"] = "A1";
  EXPECT_EQ(CountOf(Decided(tx("after"))), 7);
}

INSTANTIATE_TEST_SUITE_P(SyncsOrWrites, VigilServerAuditFaultTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "FailingSyncs" : "FailingWrites";
                         });

// A record changed on disk behind the server's back: GET /v1/audit/verify answers 500 with the
// report naming the first damage.
TEST_F(VigilServerAuditTest, WithARecordKekPersonalFieldsAreStoredSealedAndExportedSealed) {
  const audit::TestKek kek = audit::MakeTestKek(dir_ + "/keys", "kek", audit::KekKind::kSm2);
  // The server takes only the public half.
  config_.audit.record_kek = kek.private_pem;
  EXPECT_THAT(VigilServer::Start(config_, *FxRates::LoadFile(config_.fx_rates)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("audit.record_kek"), HasSubstr("-pubout"))));
  config_.audit.record_kek = kek.public_pem;
  config_.audit.record_cipher = "sm4-ctr-hmac-sm3";
  config_.audit.records_per_data_key = 3;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (int i = 0; i < 5; ++i) {
    Decided(Tx(absl::StrCat("sealed-", i), absl::StrCat("ACCT-PERSONAL-", i)));
  }
  EXPECT_EQ(LoggedRecords(), 5u);  // verified without any key

  // Stored: the account ids are not in the record bytes; the key-encryption key's private
  // half opens them, and its data key is one of the log's.
  const audit::AuditLog& log = *server_->service().audit_log();
  auto opener = audit::RecordOpener::ForLog(log, kek.private_key);
  for (uint64_t i = 0; i < 5; ++i) {
    absl::StatusOr<std::string> bytes = log.ReadRecord(i);
    ASSERT_OK(bytes);
    EXPECT_THAT(*bytes, Not(HasSubstr("ACCT-PERSONAL")));
    absl::StatusOr<audit::AuditRecord> record = opener->Decode(*bytes);
    ASSERT_OK(record);
    EXPECT_THAT(record->transaction.originator.account_id, HasSubstr("ACCT-PERSONAL-"));
    EXPECT_EQ(record->transaction.beneficiary.account_id, "Z9");
  }
  absl::StatusOr<std::vector<crypto::WrappedDataKey>> keys = log.DataKeys();
  ASSERT_OK(keys);
  EXPECT_EQ(keys->size(), 2u);  // records 0-2, 3-4
  for (const crypto::WrappedDataKey& k : *keys) {
    EXPECT_EQ(k.kek_id, kek.public_key->key_id());
    EXPECT_EQ(k.suite, crypto::CipherSuite::kSm4CtrHmacSm3);
  }

  // The export endpoint: sealed fields stay sealed, pages carry their data keys.
  TestHttpResponse page = Request("GET", "/v1/audit/export?limit=2");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Header("Content-Type"), "application/x-ndjson");
  EXPECT_EQ(page.Header("X-Vigil-Records"), "2");
  EXPECT_EQ(page.Header("X-Vigil-Next-From"), "2");
  EXPECT_THAT(page.body, Not(HasSubstr("ACCT-PERSONAL")));
  EXPECT_THAT(page.body, HasSubstr("\"data_key\":{"));
  EXPECT_THAT(page.body, HasSubstr("\"account_id\":{\"sealed\":\""));
  page = Request("GET", "/v1/audit/export?from=2&limit=10");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Header("X-Vigil-Records"), "3");
  EXPECT_EQ(page.Header("X-Vigil-Next-From"), "");
  const TestHttpResponse one = Request("GET", "/v1/audit/export?transaction_id=sealed-4");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Header("X-Vigil-Records"), "1");
  EXPECT_THAT(one.body, HasSubstr("\"id\":\"sealed-4\""));
  // Times may be percent-encoded; the window holds every record.
  const TestHttpResponse timed = Request(
      "GET", "/v1/audit/export?since=2000-01-01T00%3A00%3A00Z&until=2999-01-01T00:00:00Z");
  ASSERT_EQ(timed.status, 200) << timed.body;
  EXPECT_EQ(timed.Header("X-Vigil-Records"), "5");

  // The private key opens what the server exported, offline.
  std::istringstream in(timed.body);
  audit::RecordOpener offline(kek.private_key);
  std::string opened;
  ASSERT_OK(audit::OpenExport(in, offline, [&](std::string_view line) {
    opened.append(line);
    opened.push_back('\n');
    return absl::OkStatus();
  }).status());
  for (int i = 0; i < 5; ++i) EXPECT_THAT(opened, HasSubstr(absl::StrCat("ACCT-PERSONAL-", i)));

  // Bad parameters name themselves.
  for (const auto& [target, field] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/audit/export?limit=0", "limit"},
           {"/v1/audit/export?limit=10001", "limit"},
           {"/v1/audit/export?from=x", "from"},
           {"/v1/audit/export?since=yesterday", "since"},
           {"/v1/audit/export?until=2026-01-01T00%3", "until"},
           {"/v1/audit/export?transaction_id=a&from=1", "transaction_id"},
           {"/v1/audit/export?transaction_id=%zz", "transaction_id"}}) {
    const TestHttpResponse bad = Request("GET", target);
    EXPECT_EQ(bad.status, 400) << target;
    EXPECT_EQ(Object(bad)["error"]["field"], field) << target << ": " << bad.body;
  }
  const TestHttpResponse missing = Request("GET", "/v1/audit/export?transaction_id=nope");
  EXPECT_EQ(missing.status, 404) << missing.body;
}

TEST_F(VigilServerAuditTest, VerifyAnswers500WithTheDamage) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Score(Tx(absl::StrCat("damage-", i))).status, 200);
  server_.reset();
  {
    KvStoreOptions options;
    options.path = config_.data_dir + "/features";
    options.create_if_missing = false;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvStore> kv, KvStore::Open(options));
    audit::StoredRecords stored(kv.get());
    ASSERT_OK_AND_ASSIGN(std::string bytes, stored.Read(2));
    bytes.back() ^= 0x01;
    ASSERT_OK(stored.Replace(2, bytes));
  }
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse r = Request("GET", "/v1/audit/verify");
  EXPECT_EQ(r.status, 500) << r.body;
  const nlohmann::json report = Object(r);
  EXPECT_EQ(report.value("intact", true), false) << r.body;
  ASSERT_TRUE(report.contains("damage")) << r.body;
  EXPECT_EQ(report["damage"].value("kind", ""), "modified") << r.body;
  EXPECT_EQ(report["damage"].value("sequence", -1), 2) << r.body;
}

TEST(AuditSection, ReadsEveryAuditKey) {
  auto c = ServeConfig::Parse(R"(plaintext: true
data_dir: d
audit:
  durable_ack: false
  signing_key: keys/audit.pem
  hash: sm3
  tree_head_every: 500
  tree_head_interval_ms: 250
  group_max_records: 64
  group_max_delay_us: 100
  queue: 1000
  compress_records: false
  record_kek: keys/kek.pub.pem
  record_cipher: sm4-ctr-hmac-sm3
  records_per_data_key: 5000
)",
                              "serve.yaml");
  ASSERT_OK(c);
  EXPECT_FALSE(c->audit.durable_ack);
  EXPECT_EQ(c->audit.signing_key, "keys/audit.pem");
  EXPECT_EQ(c->audit.hash, "sm3");
  EXPECT_EQ(c->audit.tree_head_every, 500u);
  EXPECT_EQ(c->audit.tree_head_interval, Millis(250));
  EXPECT_EQ(c->audit.group_max_records, 64u);
  EXPECT_EQ(c->audit.group_max_delay, std::chrono::microseconds(100));
  EXPECT_EQ(c->audit.queue, 1000u);
  EXPECT_FALSE(c->audit.compress_records);
  EXPECT_EQ(c->audit.record_kek, "keys/kek.pub.pem");
  EXPECT_EQ(c->audit.record_cipher, "sm4-ctr-hmac-sm3");
  EXPECT_EQ(c->audit.records_per_data_key, 5000u);
}

TEST(AuditSection, DefaultsAreDurable) {
  auto c = ServeConfig::Parse("plaintext: true\ndata_dir: d\n", "serve.yaml");
  ASSERT_OK(c);
  EXPECT_TRUE(c->audit.durable_ack);  // answered only once recorded
  EXPECT_TRUE(c->audit.signing_key.empty());  // the data dir's own key
  EXPECT_EQ(c->audit.hash, "sha256");
  EXPECT_EQ(c->audit.tree_head_every, 10'000u);
  EXPECT_TRUE(c->audit.compress_records);
  EXPECT_EQ(c->audit.tree_head_interval, Millis(1000));
  EXPECT_EQ(c->audit.group_max_records, 16'384u);
  EXPECT_EQ(c->audit.group_max_delay, std::chrono::microseconds(0));
  EXPECT_EQ(c->audit.queue, 262'144u);
  EXPECT_TRUE(c->audit.record_kek.empty());  // records in the clear unless a key is given
  EXPECT_EQ(c->audit.record_cipher, "aes-256-gcm");
  EXPECT_EQ(c->audit.records_per_data_key, 1'000'000u);
}

TEST(AuditSection, BadAuditValuesNameTheirKey) {
  auto c = ServeConfig::Parse(R"(data_dir: d
audit:
  hash: md5
  durable_ack: maybe
  group_max_records: 0
  queue: -1
  tree_head_intervall_ms: 5
)",
                              "serve.yaml");
  ASSERT_THAT(c.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("serve.yaml:3:9: audit.hash: must be sha256 or sm3"));
  EXPECT_THAT(m, HasSubstr("serve.yaml:4:16: audit.durable_ack: must be true or false"));
  EXPECT_THAT(m, HasSubstr("audit.group_max_records: must be a whole number from 1"));
  EXPECT_THAT(m, HasSubstr("audit.queue: must be a whole number from 1"));
  EXPECT_THAT(m, HasSubstr("unknown key 'tree_head_intervall_ms' in audit (did you mean "
                           "'tree_head_interval_ms'?)"));
  EXPECT_THAT(ServeConfig::Parse("data_dir: d\naudit: sha256\n", "serve.yaml").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("audit: must be a mapping")));
}

// The same hash refused when the configuration is built in code (an embedder, a test): the
// start fails naming the key.
TEST_F(VigilServerAuditTest, AStartWithABadHashNamesTheKey) {
  config_.audit.hash = "md5";
  absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
  ASSERT_OK(fx);
  auto server = VigilServer::Start(config_, *std::move(fx));
  EXPECT_THAT(server.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("audit.hash")));
}

}  // namespace
}  // namespace vigil
