// `vigil serve` as a hostile client and an operator meet it, on the real binary: a payment
// dated far ahead must not stop screening for everyone (across restarts too), a data dir
// already poisoned by one is repaired at start, and a transaction id stays bound to its
// payment across restarts whatever bytes carry it.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/common/clock.h"
#include "vigil/core/transaction.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::kCountingPolicy;
using ::vigil::testing::ReadFile;
using ::vigil::testing::ServeProcess;
using ::vigil::testing::TestDataPath;
using ::vigil::testing::TestHttpResponse;

// A JSON payment dated "at" (RFC 3339).
std::string JsonTx(const std::string& id, const std::string& at, const std::string& value) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":")", at, R"(",)",
                      R"("originator":{"account_id":"A1","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":")", value, R"(","currency":"USD"}})");
}

std::string Now(std::chrono::seconds offset = std::chrono::seconds(0)) {
  return FormatUtc(RealClock().Now() + offset);
}

class ServeAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_admission_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << kCountingPolicy;
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  void Start() {
    const std::string source = ::vigil::testing::SourceDir();
    server_.reset();
    absl::StatusOr<std::unique_ptr<ServeProcess>> started = ServeProcess::Start(
        {VIGIL_BINARY, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
         "--data-dir", dir_ + "/data", "--policy", dir_ + "/count.yaml", "--lists",
         source + "/policies/lists", "--fx-rates", source + "/data/fx_rates.csv", "--no-drift",
         "--workers", "4"},
        dir_ + "/serve.stderr");
    ASSERT_OK(started);
    server_ = *std::move(started);
  }
  void Restart() {
    ASSERT_EQ(server_->Stop(SIGTERM), 0) << ReadFile(dir_ + "/serve.stderr");
    Start();
  }

  TestHttpResponse Post(const std::string& body, const std::string& type = "application/json") {
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), "POST", "/v1/score", body, {}, type);
    EXPECT_OK(r);
    return r.ok() ? *std::move(r) : TestHttpResponse{};
  }

  // JSON, MT103 and pacs.008 payments of now: each must be decided.
  void ExpectRealPaymentsDecided(const std::string& round) {
    const TestHttpResponse json = Post(JsonTx("real-" + round, Now(), "500.00"));
    EXPECT_EQ(json.status, 200) << json.body;
    std::string mt103 = ReadFile(TestDataPath("swift_mt/messages/mt103_0002.fin"));
    mt103 = absl::StrReplaceAll(mt103, {{"8403c004", absl::StrCat("8403c0", round.substr(0, 2))}});
    const TestHttpResponse mt = Post(mt103, "application/x-swift-mt");
    EXPECT_EQ(mt.status, 200) << mt.body;
    std::string pacs = ReadFile(TestDataPath("iso20022/messages/mx_pacs.008.001.12_0006.xml"));
    pacs = absl::StrReplaceAll(pacs, {{"8a562c67", absl::StrCat("8a562c", round.substr(0, 2))}});
    const TestHttpResponse mx = Post(pacs, "application/xml");
    EXPECT_EQ(mx.status, 200) << mx.body;
  }

  std::string dir_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(ServeAdmissionTest, APaymentDatedFarAheadIsRefusedAndScreeningGoesOn) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const TestHttpResponse poison = Post(JsonTx("p2099", "2099-01-01T00:00:00Z", "1.00"));
  ASSERT_EQ(poison.status, 422) << poison.body;
  EXPECT_EQ(poison.Json()["error"]["code"], "event_in_future");
  EXPECT_EQ(poison.Json()["error"]["field"], "$.timestamp");
  // A sender's clock 20 minutes fast: refused too (the default bound is 5 minutes).
  EXPECT_EQ(Post(JsonTx("fast", Now(std::chrono::minutes(20)), "1.00")).status, 422);
  ExpectRealPaymentsDecided("10");
  ASSERT_NO_FATAL_FAILURE(Restart());
  ExpectRealPaymentsDecided("20");
}

// A data dir written before event times were bounded: a record dated 2099 applied by a replay
// with the outlier check off, as an older version would have applied it.
TEST_F(ServeAdmissionTest, StartsOnAPoisonedDataDirRepairsItAndSaysSo) {
  const std::string input = dir_ + "/old.jsonl";
  std::ofstream(input) << JsonTx("old-1", Now(-std::chrono::hours(1)), "10.00") << "\n"
                       << JsonTx("old-2099", "2099-01-01T00:00:00Z", "10.00") << "\n";
  ASSERT_EQ(::vigil::testing::RunProcess(VIGIL_BINARY,
                                         {"replay", input, "--data-dir", dir_ + "/data",
                                          "--max-event-lead-hours", "0"},
                                         dir_ + "/replay.out"),
            0)
      << ReadFile(dir_ + "/replay.out");
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string log = ReadFile(dir_ + "/serve.stderr");
  EXPECT_THAT(log, HasSubstr("feature state held events dated past the server's clock"));
  EXPECT_THAT(log, HasSubstr("2099-01-01T00:00:00"));
  ExpectRealPaymentsDecided("30");
  ASSERT_NO_FATAL_FAILURE(Restart());  // repaired for good: nothing to say the second time
  const std::string second = ReadFile(dir_ + "/serve.stderr").substr(log.size());
  EXPECT_THAT(second, ::testing::Not(HasSubstr("dated past the server's clock")));
  ExpectRealPaymentsDecided("40");
}

TEST_F(ServeAdmissionTest, AnIdStaysBoundToItsPaymentAcrossRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string mt103 = ReadFile(TestDataPath("swift_mt/messages/mt103_0002.fin"));
  ASSERT_THAT(mt103, HasSubstr("\r\n"));
  const TestHttpResponse first = Post(mt103, "application/x-swift-mt");
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string j1_at = Now();
  const TestHttpResponse json_first = Post(JsonTx("j1", j1_at, "500.00"));
  ASSERT_EQ(json_first.status, 200) << json_first.body;
  ASSERT_NO_FATAL_FAILURE(Restart());
  // The same MT103 with other line endings is the same payment: the first decision.
  const std::string lf = absl::StrReplaceAll(mt103, {{"\r\n", "\n"}});
  const TestHttpResponse again = Post(lf, "application/x-swift-mt");
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body, first.body);
  // Another amount under the same UETR: refused, naming the id.
  std::string bigger = mt103;
  bigger.replace(bigger.find("USD7138,40"), 10, "USD900000,");
  const TestHttpResponse conflict = Post(bigger, "application/x-swift-mt");
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_EQ(conflict.Json()["error"]["code"], "idempotency_conflict");
  EXPECT_THAT(conflict.body, HasSubstr("8403c004-66b2-40fc-acba-9f11d1a4ad84"));
  // JSON too: another amount or another time is refused, the same payment answered as before.
  EXPECT_EQ(Post(JsonTx("j1", j1_at, "500.0")).body, json_first.body);
  const TestHttpResponse json_conflict = Post(JsonTx("j1", j1_at, "900000.00"));
  EXPECT_EQ(json_conflict.status, 409) << json_conflict.body;
  EXPECT_EQ(Post(JsonTx("j1", "2022-01-01T00:00:00Z", "500.00")).status, 409);
  EXPECT_THAT(ReadFile(dir_ + "/serve.stderr"), HasSubstr("idempotency_conflict"));
  // The refusals changed nothing: the log holds the two first decisions only.
  absl::StatusOr<TestHttpResponse> verify = HttpOnce(server_->port(), "GET", "/v1/audit/verify");
  ASSERT_OK(verify);
  EXPECT_EQ(verify->Json()["records"], 2) << verify->body;
}

}  // namespace
}  // namespace vigil
