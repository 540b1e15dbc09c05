// What an operator of `vigil serve` must be able to rely on, end to end (the real VigilServer
// in-process over loopback HTTP on a temporary data dir):
//
//  - without a model the server decides on the rules alone and /readyz says `model: none`;
//    with model.required it is not ready (503 model_required) and decides nothing until a
//    model is activated;
//  - no answer of any route, errors included, names a file of the server (its data dir, model,
//    policy, lists), nor an internal detail of a failing disk;
//  - an amount beyond what vigil represents is refused on $.amount.value, naming the limit;
//  - plain HTTP or auth none beyond loopback is a WARN at start saying what is exposed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/common/sha256.h"
#include "vigil/decision/model_registry.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/store/kv_faults.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::TestHttpResponse;

std::string Tx(const std::string& id, const std::string& amount = R"("9000.00")") {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                      R"("originator":{"account_id":"A1","bank_id":"B1"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2"},)",
                      R"("amount":{"value":)", amount, R"(,"currency":"USD"}})");
}

nlohmann::json ErrorOf(const TestHttpResponse& r) {
  const nlohmann::json j = r.Json();
  return j.is_object() && j.contains("error") ? j["error"] : nlohmann::json::object();
}

class VigilServerOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_ops_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = testing::TestServeConfig(dir_);
    config_.worker_threads = 4;
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  void StartServer(ServeHooks hooks = {}) {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    ASSERT_OK(fx);
    auto server = VigilServer::Start(config_, *std::move(fx), std::move(hooks));
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  TestHttpResponse Request(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           const std::string& content_type = "application/json") {
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), method, target, body, {}, content_type);
    EXPECT_OK(r);
    return r.ok() ? *r : TestHttpResponse{};
  }

  // The log's lines at level "warn" (JSON lines, flushed at shutdown).
  std::vector<nlohmann::json> Warnings() {
    if (server_ != nullptr) {
      EXPECT_OK(server_->Shutdown());
    }
    std::vector<nlohmann::json> out;
    std::ifstream in(config_.log_path);
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("level", "") == "warn") out.push_back(j);
    }
    return out;
  }
  bool Warned(const std::string& words) {
    for (const nlohmann::json& w : Warnings()) {
      if (absl::StrContains(w.dump(), words)) return true;
    }
    return false;
  }

  std::string dir_;
  ServeConfig config_;
  std::unique_ptr<VigilServer> server_;
};

TEST_F(VigilServerOpsTest, WithoutAModelReadyzSaysModelNoneAndTheRulesDecide) {
  config_.model.clear();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse ready = Request("GET", "/readyz");
  ASSERT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.Json()["model"], "none") << ready.body;
  EXPECT_EQ(ready.Json()["model_version"], "") << ready.body;
  const TestHttpResponse scored = Request("POST", "/v1/score", Tx("rules-only-1"));
  ASSERT_EQ(scored.status, 200) << scored.body;
  EXPECT_EQ(scored.Json()["model_version"], "") << scored.body;
}

TEST_F(VigilServerOpsTest, WithAModelReadyzNamesIt) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse ready = Request("GET", "/readyz");
  ASSERT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.Json()["model"], server_->deployment().Current()->champion->version);
}

// model.required: without a model nothing is decided and the server is not ready; activating
// one makes it ready.
TEST_F(VigilServerOpsTest, ARequiredModelThatIsMissingMeansNotReady) {
  config_.model.clear();
  config_.model_required = true;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse ready = Request("GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_EQ(ErrorOf(ready).value("code", ""), "model_required") << ready.body;
  const TestHttpResponse scored = Request("POST", "/v1/score", Tx("required-1"));
  EXPECT_EQ(scored.status, 503) << scored.body;
  EXPECT_EQ(ErrorOf(scored).value("code", ""), "model_required") << scored.body;

  auto registry = ModelRegistry::Open(config_.data_dir + "/models");
  ASSERT_OK(registry);
  auto added = registry->Add(testing::TestDataPath("models/serve_model.json"));
  ASSERT_OK(added);
  const TestHttpResponse activated =
      Request("POST", "/v1/engine/activate",
              absl::StrCat(R"({"model_ref":")", added->ref, R"(","traffic_weight":1})"));
  ASSERT_EQ(activated.status, 200) << activated.body;
  EXPECT_EQ(Request("GET", "/readyz").status, 200);
  EXPECT_EQ(Request("POST", "/v1/score", Tx("required-2")).status, 200);
  EXPECT_TRUE(Warned("model.required is true and no model is active"));
}

TEST(ServeConfigModel, TakesAFileARefAndRequired) {
  auto c = ServeConfig::Parse("model: {file: m.json, required: true}\n", "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->model, "m.json");
  EXPECT_TRUE(c->model_required);
  c = ServeConfig::Parse("model: m.json\n", "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->model, "m.json");
  EXPECT_FALSE(c->model_required);
  c = ServeConfig::Parse("model: {ref: abcdef12}\n", "serve.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->model_ref, "abcdef12");
  EXPECT_THAT(ServeConfig::Parse("model: {required: maybe}\n", "serve.yaml").status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("model.required: must be true or false")));
  EXPECT_THAT(ServeConfig::Parse("model: {requierd: true}\n", "serve.yaml").status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("required")));
}

// Every route, and the errors a caller can provoke, answered without a path of the server: not
// the data dir, the model's file or folder, the policy or the lists, not the temporary folder
// they all live in, and no internal detail of a failing disk.
TEST_F(VigilServerOpsTest, NoAnswerNamesAFileOfTheServer) {
  auto faults = std::make_shared<KvFaults>();
  ServeHooks hooks;
  hooks.store_faults = faults;
  ASSERT_NO_FATAL_FAILURE(StartServer(std::move(hooks)));
  // A file in the registry under its own SHA-256 that is not a model: its activation fails in
  // the loader, whose message names the file.
  const std::string junk = "{\"not\": \"a model\"}";
  const std::string junk_ref = Sha256Hex(junk);
  std::ofstream(config_.data_dir + "/models/" + junk_ref + ".model") << junk;

  std::vector<std::pair<std::string, TestHttpResponse>> answers;
  const auto ask = [&](const std::string& what, const std::string& method,
                       const std::string& target, const std::string& body = "",
                       const std::string& type = "application/json") {
    answers.emplace_back(what, Request(method, target, body, type));
  };
  ask("healthz", "GET", "/healthz");
  ask("readyz", "GET", "/readyz");
  ask("score", "POST", "/v1/score", Tx("paths-1"));
  ask("score invalid", "POST", "/v1/score", "{\"id\":");
  ask("batch", "POST", "/v1/score/batch", absl::StrCat("[", Tx("paths-2"), ",{}]"));
  ask("activate unknown ref", "POST", "/v1/engine/activate",
      R"({"model_ref":"0123456789abcdef","traffic_weight":1})");
  ask("activate short ref", "POST", "/v1/engine/activate", R"({"model_ref":"abc"})");
  ask("activate not a model", "POST", "/v1/engine/activate",
      absl::StrCat(R"({"model_ref":")", junk_ref, R"(","traffic_weight":1})"));
  ask("policy with an unknown list", "POST", "/v1/policy/ingest",
      "version: x\nthresholds: {review: 0.5, block: 0.9}\nrules:\n  - id: r\n    when: "
      "orig_country in no_such_list\n    action: review\n    reason: r\n",
      "text/yaml");
  ask("policy not yaml", "POST", "/v1/policy/ingest", "{{{", "text/yaml");
  ask("drift", "GET", "/v1/drift");
  ask("audit verify", "GET", "/v1/audit/verify");
  ask("audit export", "GET", "/v1/audit/export?transaction_id=nope");
  ask("unknown route", "GET", "/etc/passwd");
  // The disk fails: the decision is refused, and the server unready.
  faults->set_fail_syncs(true);
  ask("score on a failing disk", "POST", "/v1/score", Tx("paths-3"));
  ask("batch on a failing disk", "POST", "/v1/score/batch", absl::StrCat("[", Tx("paths-4"), "]"));
  ask("readyz on a failing disk", "GET", "/readyz");
  ask("activate on a failing disk", "POST", "/v1/engine/activate",
      R"({"model_ref":"0123456789abcdef","traffic_weight":1})");

  const std::string model_dir =
      std::filesystem::path(config_.model).parent_path().string();
  for (const auto& [what, r] : answers) {
    ASSERT_NE(r.status, 0) << what;
    for (const std::string& secret :
         {config_.data_dir, dir_, ::testing::TempDir(), config_.model, model_dir,
          config_.policy, config_.lists, std::string("IO error"), std::string("RocksDB")}) {
      EXPECT_THAT(r.body, Not(HasSubstr(secret))) << what << " (" << r.status << ")";
    }
    if (r.status >= 400) {
      EXPECT_TRUE(ErrorOf(r).contains("code")) << what << ": " << r.body;
    }
  }
  // The errors still say what is wrong.
  const auto answer = [&](const std::string& what) {
    for (const auto& [w, r] : answers) {
      if (w == what) return r;
    }
    return TestHttpResponse{};
  };
  EXPECT_EQ(answer("activate unknown ref").status, 404);
  EXPECT_THAT(ErrorOf(answer("activate unknown ref")).value("message", ""),
              HasSubstr("no such model"));
  EXPECT_EQ(answer("activate not a model").status, 400);
  EXPECT_EQ(ErrorOf(answer("readyz on a failing disk")).value("code", ""), "audit_unavailable");
  EXPECT_EQ(ErrorOf(answer("score on a failing disk")).value("code", ""), "audit_unavailable");
}

// An amount vigil cannot hold is refused on $.amount.value with the limit, whether it does not
// fit the fixed point at all (a number beyond 64 bits, 20 digits) or is beyond what the
// features track (2^42-1 cents of the reporting currency).
TEST_F(VigilServerOpsTest, AnAmountBeyondTheRangeIsRefusedOnItsValue) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  struct Case {
    const char* amount;
    int status;
    const char* message;
    const char* why;
  };
  const Case cases[] = {
      {"99999999999999999999", 400, "at most 9223372036854775807", "a number beyond 2^64"},
      {R"("99999999999999999999")", 400, "at most 9223372036854775807", "as a string"},
      {"18446744073709551615", 400, "at most 9223372036854775807", "fits uint64, not int64"},
      {R"("92233720368547758.08")", 400, "at most 92233720368547758.07", "2 decimals"},
      {"1e400", 400, "invalid character 'e'", "beyond a double"},
      {"1e30", 400, "invalid character 'e'", "an exponent"},
      {R"("50000000000.00")", 422, "43980465111.03 USD", "beyond what the features track"},
      {R"("10000000000000.00")", 422, "at most 9223372036854.775807 USD",
       "beyond the reporting currency's fixed point"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const TestHttpResponse r =
        Request("POST", "/v1/score", Tx(absl::StrCat("big-", n++), c.amount));
    EXPECT_EQ(r.status, c.status) << c.why << ": " << r.body;
    EXPECT_EQ(ErrorOf(r).value("field", ""), "$.amount.value") << c.why << ": " << r.body;
    EXPECT_THAT(ErrorOf(r).value("message", ""), HasSubstr(c.message)) << c.why << ": " << r.body;
  }
  // The largest amount the features track is decided.
  EXPECT_EQ(Request("POST", "/v1/score", Tx("big-max", R"("43980465111.03")")).status, 200);
  // In a batch, the item says the same.
  const TestHttpResponse batch = Request(
      "POST", "/v1/score/batch", absl::StrCat("[", Tx("big-b", "99999999999999999999"), "]"));
  EXPECT_THAT(batch.body, HasSubstr("$.amount.value")) << batch.body;
}

TEST_F(VigilServerOpsTest, PlainHttpAndNoAuthBeyondLoopbackAreWarnedAbout) {
  config_.host = "0.0.0.0";
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::vector<nlohmann::json> warnings = Warnings();
  std::string all;
  for (const nlohmann::json& w : warnings) all += w.dump() + "\n";
  EXPECT_THAT(all, HasSubstr("plain HTTP on a non-loopback address")) << all;
  EXPECT_THAT(all, HasSubstr("bearer tokens, payments")) << all;
  EXPECT_THAT(all, HasSubstr("authentication is off (auth: none) on a non-loopback address"))
      << all;
  EXPECT_THAT(all, HasSubstr("0.0.0.0:")) << all;
}

TEST_F(VigilServerOpsTest, PlainHttpOnLoopbackIsNotWarnedAbout) {
  config_.host = "127.0.0.1";
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::vector<nlohmann::json> warnings = Warnings();
  std::string all;
  for (const nlohmann::json& w : warnings) all += w.dump() + "\n";
  EXPECT_THAT(all, Not(HasSubstr("plain HTTP"))) << all;
  EXPECT_THAT(all, Not(HasSubstr("non-loopback"))) << all;
}

}  // namespace
}  // namespace vigil
