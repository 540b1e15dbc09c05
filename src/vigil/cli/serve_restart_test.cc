// `vigil serve` restarted: a model activated through POST /v1/engine/activate outlives the
// process (a clean stop and a kill -9 alike), and the --model on the command line, the initial
// value, does not silently win over it: the start log says which model decides and why.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/cli/testing_serve_process.h"
#include "vigil/decision/model_registry.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::kCountingPolicy;
using ::vigil::testing::ServeProcess;
using ::vigil::testing::TestHttpResponse;

class ServeRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_restart_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/count.yaml") << kCountingPolicy;
    model_a_ = ::vigil::testing::TestDataPath("models/serve_model.json");
    // The same trees, other bytes: another ref.
    model_b_ = dir_ + "/model_b.json";
    std::ofstream(model_b_) << ::vigil::testing::ReadFile(model_a_) << "\n";
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  void Start(const std::string& model) {
    const std::string source = ::vigil::testing::SourceDir();
    std::vector<std::string> argv = {
        VIGIL_BINARY, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
        "--data-dir", dir_ + "/data", "--policy", dir_ + "/count.yaml", "--lists",
        source + "/policies/lists", "--fx-rates", source + "/data/fx_rates.csv", "--log",
        dir_ + "/serve.log", "--no-drift", "--workers", "4"};
    if (!model.empty()) {
      argv.push_back("--model");
      argv.push_back(model);
    }
    absl::StatusOr<std::unique_ptr<ServeProcess>> started =
        ServeProcess::Start(std::move(argv), dir_ + "/serve.stderr");
    ASSERT_OK(started);
    server_ = *std::move(started);
  }

  TestHttpResponse Request(const std::string& method, const std::string& target,
                           const std::string& body = "") {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), method, target, body);
    EXPECT_OK(r);
    return r.ok() ? *r : TestHttpResponse{};
  }
  std::string ReadyModel() {
    return Request("GET", "/readyz").Json().value("model_version", "");
  }

  // The ref the registry gives "path" (adding it is idempotent: the same bytes, the same name).
  std::string RefOf(const std::string& path) {
    auto registry = ModelRegistry::Open(dir_ + "/data/models");
    EXPECT_OK(registry);
    auto entry = registry->Add(path);
    EXPECT_OK(entry);
    return entry.ok() ? entry->ref : "";
  }

  // The log's "vigil serve ready" lines, one per start (complete once the server stopped).
  std::vector<nlohmann::json> ReadyLines() {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ + "/serve.log");
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("msg", "") == "vigil serve ready") out.push_back(j);
    }
    return out;
  }

  std::string dir_, model_a_, model_b_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(ServeRestartTest, AnActivatedModelSurvivesARestartAndWinsOverModel) {
  ASSERT_NO_FATAL_FAILURE(Start(model_a_));
  const std::string a = RefOf(model_a_);
  const std::string b = RefOf(model_b_);
  ASSERT_NE(a, b);
  const std::string version_a = "model@" + a.substr(0, 12);
  const std::string version_b = "model@" + b.substr(0, 12);
  EXPECT_EQ(ReadyModel(), version_a);

  const TestHttpResponse activated =
      Request("POST", "/v1/engine/activate",
              absl::StrCat(R"({"model_ref":")", b.substr(0, 12), R"(","traffic_weight":1})"));
  ASSERT_EQ(activated.status, 200) << activated.body;
  EXPECT_EQ(ReadyModel(), version_b);

  // Killed, not stopped: the activation was durable when it was answered.
  EXPECT_EQ(server_->Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_NO_FATAL_FAILURE(Start(model_a_));
  EXPECT_EQ(ReadyModel(), version_b) << "the restart brought back --model, not the activation";
  const TestHttpResponse scored =
      Request("POST", "/v1/score", ::vigil::testing::Tx("after-restart", "A1"));
  ASSERT_EQ(scored.status, 200) << scored.body;
  EXPECT_EQ(scored.Json().value("model_version", ""), version_b);

  // A clean stop and a start without --model: the activation still decides.
  EXPECT_EQ(server_->Stop(SIGTERM), 0);
  ASSERT_NO_FATAL_FAILURE(Start(""));
  EXPECT_EQ(ReadyModel(), version_b);
  EXPECT_EQ(server_->Stop(SIGTERM), 0);

  // The start log says which model decides and why.
  const std::vector<nlohmann::json> ready = ReadyLines();
  ASSERT_EQ(ready.size(), 3u);
  EXPECT_EQ(ready[0].value("model", ""), version_a);
  EXPECT_EQ(ready[0].value("model_from", ""), "--model (no activation stored yet)");
  for (size_t i : {1, 2}) {
    EXPECT_EQ(ready[i].value("model", ""), version_b) << ready[i].dump();
    EXPECT_THAT(ready[i].value("model_from", ""),
                HasSubstr("the activation stored in the data dir"));
  }
  EXPECT_THAT(::vigil::testing::ReadFile(dir_ + "/serve.log"),
              HasSubstr("the model on the command line is not the champion"));
}

// The policy likewise: one activated through POST /v1/policy/ingest outlives a kill -9, and
// the --policy file of a later start is stored but does not silently win over it.
TEST_F(ServeRestartTest, AnActivatedPolicySurvivesARestartAndWinsOverPolicy) {
  ASSERT_NO_FATAL_FAILURE(Start(model_a_));
  const auto policy = [&] { return Request("GET", "/readyz").Json().value("policy_version", ""); };
  EXPECT_THAT(policy(), ::testing::StartsWith("count@"));
  std::string other = kCountingPolicy;
  other.replace(other.find("\"count\""), 7, "\"other\"");
  absl::StatusOr<TestHttpResponse> ingested =
      HttpOnce(server_->port(), "POST", "/v1/policy/ingest", other, {}, "application/yaml");
  ASSERT_OK(ingested);
  ASSERT_EQ(ingested->status, 200) << ingested->body;
  EXPECT_THAT(policy(), ::testing::StartsWith("other@"));

  EXPECT_EQ(server_->Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_NO_FATAL_FAILURE(Start(model_a_));  // --policy count.yaml again
  EXPECT_THAT(policy(), ::testing::StartsWith("other@"))
      << "the restart brought back --policy, not the activation";
  EXPECT_EQ(server_->Stop(SIGTERM), 0);

  const std::vector<nlohmann::json> ready = ReadyLines();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].value("policy_from", ""), "--policy");
  EXPECT_THAT(ready[1].value("policy_from", ""),
              HasSubstr("the version activated in the data dir by "));
  EXPECT_THAT(::vigil::testing::ReadFile(dir_ + "/serve.log"),
              HasSubstr("the policy file on the command line is stored but not activated"));
}

// The start refuses a stored activation it cannot honour, rather than deciding with another
// model (or none) in silence.
TEST_F(ServeRestartTest, AStoredActivationOfAModelThatIsGoneStopsTheStart) {
  ASSERT_NO_FATAL_FAILURE(Start(model_a_));
  const std::string b = RefOf(model_b_);
  ASSERT_EQ(Request("POST", "/v1/engine/activate",
                    absl::StrCat(R"({"model_ref":")", b, R"(","traffic_weight":1})"))
                .status,
            200);
  EXPECT_EQ(server_->Stop(SIGTERM), 0);
  std::filesystem::remove(dir_ + "/data/models/" + b + ".model");
  const std::string source = ::vigil::testing::SourceDir();
  absl::StatusOr<std::unique_ptr<ServeProcess>> started = ServeProcess::Start(
      {VIGIL_BINARY, "serve", "--listen", "127.0.0.1:0", "--plaintext", "--auth", "none",
       "--data-dir", dir_ + "/data", "--policy", dir_ + "/count.yaml", "--lists",
       source + "/policies/lists", "--fx-rates", source + "/data/fx_rates.csv", "--no-drift",
       "--model", model_a_},
      dir_ + "/serve2.stderr");
  ASSERT_FALSE(started.ok());
  const std::string said = ::vigil::testing::ReadFile(dir_ + "/serve2.stderr");
  EXPECT_THAT(said, HasSubstr(absl::StrCat(b.substr(0, 12), " the champion, which cannot be "
                                           "loaded")));
  EXPECT_THAT(said, HasSubstr("deployment.json"));
}

}  // namespace
}  // namespace vigil
