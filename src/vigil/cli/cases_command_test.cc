// `vigil cases export-labels` end to end: a real VigilServer scores payments over loopback HTTP
// into cases, analysts close them with outcomes, the server stops, and the command's rows
// read back with the reader `vigil model train` uses, labelled by the outcomes, each row the
// feature row the decision log holds for its alert.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vigil/evaluation/feature_row_reader.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

std::string Payment(const std::string& id, const std::string& account, const std::string& amount,
                    int minute) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:)", minute < 10 ? "0" : "",
                      minute, R"(:00Z","originator":{"account_id":")", account,
                      R"("},"beneficiary":{"account_id":"Z9"},"amount":{"value":")", amount,
                      R"(","currency":"USD"}})");
}

TEST(CasesCommandTest, ClosedCasesBecomeLabelledFeatureRows) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/cases_command_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ServeConfig config = testing::TestServeConfig(dir);
  config.auth.mode = "tokens";
  config.worker_threads = 4;
  config.policy = testing::TestDataPath("policies/cases.yaml");  // REVIEW above 1,000 USD
  config.cases.four_eyes_suspicious = false;
  std::filesystem::create_directories(config.data_dir);
  ASSERT_OK_AND_ASSIGN(const std::string alice,
                       AccessTokens::Create(config.data_dir, Role::kAnalyst, "alice"));
  ASSERT_OK_AND_ASSIGN(const std::string scorer,
                       AccessTokens::Create(config.data_dir, Role::kScorer, "gateway"));
  ASSERT_OK_AND_ASSIGN(FxRates fx, FxRates::LoadFile(config.fx_rates));
  std::vector<Json> decisions;  // the records of the alerts, as the API shows them
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<VigilServer> server,
                         VigilServer::Start(config, std::move(fx)));
    const auto call = [&](const std::string& method, const std::string& path,
                          const std::string& token, const std::string& body = "") {
      absl::StatusOr<testing::TestHttpResponse> r = testing::HttpOnce(
          server->port(), method, path, body, Headers{{"Authorization", "Bearer " + token}});
      EXPECT_OK(r);
      if (r.ok() && r->status != 200) ADD_FAILURE() << method << " " << path << ": " << r->body;
      return r.ok() ? Json::parse(r->body, nullptr, false) : Json::object();
    };
    // A1: two alerts (suspicious); A2: one (false positive); A3: one left open; A4: valuable.
    int minute = 1;
    for (const auto& [id, account] : std::vector<std::pair<std::string, std::string>>{
             {"p1", "A1"}, {"p2", "A1"}, {"p3", "A2"}, {"p4", "A3"}, {"p5", "A4"}}) {
      ASSERT_EQ(call("POST", "/v1/score", scorer, Payment(id, account, "5000.00", minute++))
                    .value("action", ""),
                "REVIEW");
    }
    Json listed = Json::object();
    for (int i = 0; i < 200 && listed.value("total", 0) < 4; ++i) {
      listed = call("GET", "/v1/cases?limit=10", alice);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(listed["total"], 4) << listed.dump();
    // Nothing closed yet (read from the running server's store as a follower): exit 1.
    const std::string early = dir + "/early.out";
    EXPECT_EQ(testing::RunProcess(VIGIL_BINARY,
                                  {"cases", "export-labels", "--data-dir", config.data_dir, "--out",
                                   dir + "/early.csv"},
                                  early),
              1)
        << testing::ReadFile(early);
    EXPECT_TRUE(absl::StrContains(testing::ReadFile(early), "no closed case to export"))
        << testing::ReadFile(early);
    for (const Json& c : listed["cases"]) {
      const std::string id = c["id"], subject = c["subject"];
      if (subject == "A3") continue;
      const std::string outcome = subject == "A1"   ? "suspicious_reported"
                                  : subject == "A2" ? "false_positive"
                                                    : "valuable_alert";
      call("POST", "/v1/cases/" + id + "/claim", alice);
      const Json closed = call("POST", "/v1/cases/" + id + "/close", alice,
                               absl::StrCat(R"({"outcome":")", outcome, R"(","text":"done"})"));
      ASSERT_EQ(closed["case"]["state"], "closed") << closed.dump();
      for (const Json& a : call("GET", "/v1/cases/" + id, alice)["alerts"]) {
        decisions.push_back(call(
            "GET", absl::StrCat("/v1/cases/", id, "/decision?sequence=", a["sequence"].get<int>()),
            alice));
      }
    }
  }
  const std::string out = dir + "/labels.csv";
  const std::string log = dir + "/export.out";
  ASSERT_EQ(testing::RunProcess(
                VIGIL_BINARY,
                {"cases", "export-labels", "--data-dir", config.data_dir, "--out", out}, log),
            0)
      << testing::ReadFile(log);
  EXPECT_TRUE(absl::StrContains(testing::ReadFile(log),
                                "3 rows (2 suspicious, 1 not; 1 "
                                "valuable_alert left out)"))
      << testing::ReadFile(log);
  ASSERT_OK_AND_ASSIGN(evaluation::FeatureRows rows, evaluation::ReadFeatureRows(out));
  ASSERT_EQ(rows.ids.size(), 3u);
  EXPECT_EQ(rows.ids, (std::vector<std::string>{"p1", "p2", "p3"}));  // by event time
  EXPECT_EQ(rows.labels, (std::vector<int8_t>{1, 1, 0}));
  EXPECT_EQ(rows.typologies[2], "case:false_positive");
  EXPECT_EQ(rows.originators[0], "A1");
  // Each row is the recorded feature row, column by column.
  const size_t width = rows.names.size();
  for (const Json& d : decisions) {
    const std::string tx = d["record"]["transaction"]["id"];
    if (tx == "p5") continue;
    const size_t k = std::find(rows.ids.begin(), rows.ids.end(), tx) - rows.ids.begin();
    ASSERT_LT(k, rows.ids.size()) << tx;
    for (size_t j = 0; j < width; ++j) {
      const Json& want = d["record"]["features"][rows.names[j]];
      const double got = rows.values[k * width + j];
      if (want.is_null()) {
        EXPECT_TRUE(std::isnan(got)) << tx << " " << rows.names[j];
      } else {
        EXPECT_EQ(got, want.get<double>()) << tx << " " << rows.names[j];
      }
    }
  }
  // A data dir that holds no store: a usage error (exit 2), naming what --data-dir must be.
  const std::string empty = dir + "/empty";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(testing::RunProcess(
                VIGIL_BINARY,
                {"cases", "export-labels", "--data-dir", empty, "--out", dir + "/none.csv"}, log),
            2)
      << testing::ReadFile(log);
  EXPECT_TRUE(absl::StrContains(testing::ReadFile(log), "no vigil store"))
      << testing::ReadFile(log);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
