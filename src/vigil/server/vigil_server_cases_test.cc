// The /v1/cases routes of `vigil serve` end to end: the real VigilServer in-process with
// auth.mode tokens (analyst, supervisor and scorer tokens made in its data dir), payments
// scored over loopback HTTP becoming cases, worked by two analysts, across a restart.
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
#include "vigil/cases/case_book.h"
#include "vigil/common/sha256.h"
#include "vigil/server/access_tokens.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/testing_http_client.h"
#include "vigil/server/testing_server_util.h"
#include "vigil/server/vigil_server.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::vigil::testing::HttpOnce;
using ::vigil::testing::TestHttpResponse;
using Headers = std::vector<std::pair<std::string, std::string>>;
using Json = nlohmann::json;

std::string Payment(const std::string& id, const std::string& account, const std::string& amount,
                    int minute) {
  return absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:)", minute < 10 ? "0" : "",
                      minute, R"(:00Z",)", R"("originator":{"account_id":")", account,
                      R"(","bank_id":"B1","name":"Payer"},)",
                      R"("beneficiary":{"account_id":"Z9","bank_id":"B2","name":"Payee"},)",
                      R"("amount":{"value":")", amount, R"(","currency":"USD"}})");
}

class VigilServerCasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/vigil_server_cases_", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_ = testing::TestServeConfig(dir_);
    config_.auth.mode = "tokens";
    config_.worker_threads = 4;
    // REVIEW above 1,000 USD, BLOCK above 50,000.
    config_.policy = testing::TestDataPath("policies/cases.yaml");
    std::filesystem::create_directories(config_.data_dir);
    const auto token = [&](Role role, const std::string& who) {
      absl::StatusOr<std::string> t = AccessTokens::Create(config_.data_dir, role, who);
      EXPECT_OK(t);
      return t.ok() ? *t : std::string();
    };
    alice_ = token(Role::kAnalyst, "alice");
    bob_ = token(Role::kAnalyst, "bob");
    sue_ = token(Role::kSupervisor, "sue");
    scorer_ = token(Role::kScorer, "gateway");
    StartServer();
  }
  void TearDown() override {
    server_.reset();
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }
  void StartServer() {
    absl::StatusOr<FxRates> fx = FxRates::LoadFile(config_.fx_rates);
    ASSERT_OK(fx);
    absl::StatusOr<std::unique_ptr<VigilServer>> server =
        VigilServer::Start(config_, *std::move(fx));
    ASSERT_OK(server);
    server_ = *std::move(server);
  }

  // The answer to "method path" with "token"'s credential.
  TestHttpResponse Call(const std::string& method, const std::string& path,
                        const std::string& token, const std::string& body = "") {
    absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), method, path, body,
                                                  Headers{{"Authorization", "Bearer " + token}});
    EXPECT_OK(r);
    return r.ok() ? *r : TestHttpResponse{};
  }
  Json Body(const TestHttpResponse& r) { return Json::parse(r.body, nullptr, false); }

  // The cases of the queue once the book has applied "alerts" alerts.
  Json AwaitCases(size_t count) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Json listed;
    do {
      listed = Body(Call("GET", "/v1/cases?limit=100", alice_));
      if (listed.value("total", 0u) >= count) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < until);
    return listed;
  }

  std::string dir_;
  ServeConfig config_;
  std::string alice_, bob_, sue_, scorer_;
  std::unique_ptr<VigilServer> server_;
};

TEST_F(VigilServerCasesTest, ScoredAlertsAreWorkedIntoClosedCasesAcrossARestart) {
  EXPECT_THAT(ServeApi::Routes(), Contains("POST /v1/cases/{case_id}/claim"));
  // Two REVIEWs of A1 (one case), a BLOCK of A2, an ALLOW of A3 (no case).
  const std::vector<std::string> payments = {
      Payment("p1", "A1", "5000.00", 1), Payment("p2", "A1", "7000.00", 2),
      Payment("p3", "A2", "90000.00", 3), Payment("p4", "A3", "10.00", 4)};
  for (const std::string& p : payments) {
    ASSERT_EQ(Call("POST", "/v1/score", scorer_, p).status, 200);
  }
  const Json listed = AwaitCases(2);
  ASSERT_EQ(listed["total"], 2) << listed.dump();
  // Priority first: the BLOCK of 90,000 USD before the two REVIEWs.
  EXPECT_EQ(listed["cases"][0]["subject"], "A2");
  EXPECT_EQ(listed["cases"][0]["blocks"], 1);
  EXPECT_EQ(listed["cases"][0]["max_severity"], 60);  // the policy's severity of "huge"
  EXPECT_EQ(listed["cases"][1]["max_severity"], 50);  // a rule without one: 50
  EXPECT_EQ(listed["cases"][1]["subject"], "A1");
  EXPECT_EQ(listed["cases"][1]["alerts"], 2);
  EXPECT_GT(listed["cases"][0]["priority"].get<double>(),
            listed["cases"][1]["priority"].get<double>());
  const std::string blocked = listed["cases"][0]["id"];
  const std::string reviewed = listed["cases"][1]["id"];

  // A scorer token reads no case; an unknown case is 404; a bad filter names itself.
  EXPECT_EQ(Call("GET", "/v1/cases", scorer_).status, 403);
  EXPECT_EQ(Call("GET", "/v1/cases/case-999", alice_).status, 404);
  const TestHttpResponse bad = Call("GET", "/v1/cases?state=lost", alice_);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Body(bad)["error"]["field"], "state") << bad.body;

  // Take next: alice gets the BLOCK; bob cannot claim it (409) and takes the other.
  const TestHttpResponse next = Call("POST", "/v1/cases/next", alice_);
  ASSERT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(Body(next)["case"]["id"], blocked);
  EXPECT_EQ(Body(next)["case"]["state"], "in_review");
  const TestHttpResponse taken = Call("POST", "/v1/cases/" + blocked + "/claim", bob_);
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_THAT(taken.body, HasSubstr("release or reassign it first"));
  ASSERT_EQ(Call("POST", "/v1/cases/" + reviewed + "/claim", bob_).status, 200);

  // An analyst cannot assign (403); a supervisor can.
  EXPECT_EQ(Call("POST", "/v1/cases/" + reviewed + "/assign", bob_, R"({"assignee":"x"})").status,
            403);

  // Alice's closing of the BLOCK case awaits a second analyst; bob approves it.
  ASSERT_EQ(Call("POST", "/v1/cases/" + blocked + "/note", alice_,
                 R"({"text":"customer sent the contract"})")
                .status,
            200);
  const TestHttpResponse no_outcome =
      Call("POST", "/v1/cases/" + blocked + "/close", alice_, R"({"text":"fine"})");
  EXPECT_EQ(no_outcome.status, 400) << no_outcome.body;
  EXPECT_EQ(Body(no_outcome)["error"]["field"], "outcome");
  const TestHttpResponse unknown_field =
      Call("POST", "/v1/cases/" + blocked + "/close", alice_, R"({"verdict":"fine"})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_EQ(Body(unknown_field)["error"]["field"], "verdict");
  const TestHttpResponse proposed =
      Call("POST", "/v1/cases/" + blocked + "/close", alice_,
           R"({"outcome":"false_positive","text":"a property purchase, contract on file"})");
  ASSERT_EQ(proposed.status, 200) << proposed.body;
  EXPECT_EQ(Body(proposed)["case"]["state"], "awaiting_approval");
  EXPECT_EQ(Call("POST", "/v1/cases/" + blocked + "/approve", alice_).status, 409);
  const TestHttpResponse approved = Call("POST", "/v1/cases/" + blocked + "/approve", bob_);
  ASSERT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(Body(approved)["case"]["state"], "closed");
  EXPECT_EQ(Body(approved)["case"]["outcome"], "false_positive");

  // The case with its alerts and timeline; every action is in the verified audit log.
  const Json one = Body(Call("GET", "/v1/cases/" + blocked, sue_));
  ASSERT_EQ(one["alerts"].size(), 1u) << one.dump();
  EXPECT_EQ(one["alerts"][0]["transaction_id"], "p3");
  EXPECT_EQ(one["alerts"][0]["action"], "BLOCK");
  ASSERT_EQ(one["timeline"].size(), 4u) << one.dump();
  EXPECT_EQ(one["timeline"][0]["kind"], "claim");
  EXPECT_EQ(one["timeline"][1]["text"], "customer sent the contract");
  EXPECT_EQ(one["timeline"][2]["kind"], "propose_close");
  EXPECT_EQ(one["timeline"][3]["kind"], "approve_close");
  EXPECT_NE(one["timeline"][0]["actor"], one["timeline"][3]["actor"]);
  absl::StatusOr<std::string> auditor = AccessTokens::Create(config_.data_dir, Role::kAuditor, "");
  ASSERT_OK(auditor);
  // The running server reads the token file again within a second or so.
  TestHttpResponse verify;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    verify = Call("GET", "/v1/audit/verify", *auditor);
  } while (verify.status == 401 && std::chrono::steady_clock::now() < until);
  ASSERT_EQ(verify.status, 200) << verify.body;
  EXPECT_EQ(Body(verify)["intact"], true);

  // After a restart: the same cases, states and timeline.
  const std::string before = Call("GET", "/v1/cases?limit=100&order=opened", sue_).body;
  server_.reset();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Json after = Body(Call("GET", "/v1/cases?limit=100&order=opened", sue_));
  const Json was = Json::parse(before);
  ASSERT_EQ(after["total"], was["total"]);
  for (size_t k = 0; k < was["cases"].size(); ++k) {
    Json a = after["cases"][k], b = was["cases"][k];
    a.erase("priority");  // grows with the cases' age
    b.erase("priority");
    EXPECT_EQ(a, b);
  }
  EXPECT_EQ(Body(Call("GET", "/v1/cases/" + blocked, alice_))["timeline"].size(), 4u);
  // Reopened by the supervisor only.
  EXPECT_EQ(
      Call("POST", "/v1/cases/" + blocked + "/reopen", alice_, R"({"text":"new facts"})").status,
      403);
  const TestHttpResponse reopened =
      Call("POST", "/v1/cases/" + blocked + "/reopen", sue_, R"({"text":"new facts"})");
  ASSERT_EQ(reopened.status, 200) << reopened.body;
  EXPECT_EQ(Body(reopened)["case"]["state"], "open");
}

TEST_F(VigilServerCasesTest, AnAlertsDecisionItsAttributionProofAndTheDashboard) {
  ASSERT_EQ(Call("POST", "/v1/score", scorer_, Payment("p1", "A1", "5000.00", 1)).status, 200);
  ASSERT_EQ(Call("POST", "/v1/score", scorer_, Payment("p2", "A2", "6000.00", 2)).status, 200);
  const Json listed = AwaitCases(2);
  ASSERT_EQ(listed["total"], 2) << listed.dump();
  const std::string id = listed["cases"][0]["id"];
  const Json detail = Body(Call("GET", "/v1/cases/" + id, alice_));
  const uint64_t seq = detail["alerts"][0]["sequence"];

  // The decision as recorded, and every feature's TreeSHAP value summing to the margin.
  const TestHttpResponse d =
      Call("GET", absl::StrCat("/v1/cases/", id, "/decision?sequence=", seq), alice_);
  ASSERT_EQ(d.status, 200) << d.body;
  const Json decision = Body(d);
  EXPECT_EQ(decision["record"]["sequence"], seq);
  EXPECT_EQ(decision["record"]["transaction"]["id"], detail["alerts"][0]["transaction_id"]);
  const Json& a = decision["attribution"];
  ASSERT_TRUE(a.is_object()) << d.body;
  double sum = a["bias"].get<double>();
  for (const Json& f : a["features"]) sum += f["contribution"].get<double>();
  EXPECT_NEAR(sum, a["margin"].get<double>(), 1e-6);
  EXPECT_NEAR(a["score"].get<double>(), decision["record"]["decision"]["score"].get<double>(),
              1e-6);
  EXPECT_EQ(a["model_version"], decision["record"]["decision"]["model_version"]);
  EXPECT_GT(a["features"].size(), 10u);

  // The payment against its account's history: the recorded row's values.
  const Json series = Body(Call("GET", "/v1/cases/" + id + "/series", alice_));
  ASSERT_EQ(series["points"].size(), 1u) << series.dump();
  ASSERT_EQ(series["features"][0], "orig_amount_ewma_mean");
  const Json& recorded = decision["record"]["features"]["orig_amount_ewma_mean"];
  EXPECT_EQ(series["points"][0]["values"][0], recorded) << series.dump();
  EXPECT_EQ(series["points"][0]["amount_reporting"].get<double>(),
            detail["alerts"][0]["amount_reporting_micros"].get<double>() / 1e6);
  EXPECT_EQ(Call("GET", "/v1/cases/" + id + "/series?features=nope", alice_).status, 400);

  // Only the case's own alerts: another record, a bad or missing sequence.
  const uint64_t other = Body(Call("GET", "/v1/cases/" + std::string(listed["cases"][1]["id"]),
                                   alice_))["alerts"][0]["sequence"];
  EXPECT_EQ(
      Call("GET", absl::StrCat("/v1/cases/", id, "/decision?sequence=", other), alice_).status,
      404);
  const TestHttpResponse missing = Call("GET", "/v1/cases/" + id + "/decision", alice_);
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(Body(missing)["error"]["field"], "sequence");
  EXPECT_EQ(Call("GET", "/v1/cases/" + id + "/decision?sequence=x", alice_).status, 400);
  EXPECT_EQ(Call("GET", absl::StrCat("/v1/cases/", id, "/decision?sequence=", seq), scorer_).status,
            403);

  // The proof bundle, once a signed tree head covers the record (one is signed within a
  // second or so).
  TestHttpResponse proof;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  do {
    proof = Call("GET", absl::StrCat("/v1/cases/", id, "/proof?sequence=", seq), alice_);
    if (proof.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < until);
  ASSERT_EQ(proof.status, 200) << proof.body;
  EXPECT_EQ(Body(proof)["record"]["sequence"], seq);
  EXPECT_THAT(proof.Header("Content-Disposition"), HasSubstr(".proof.json"));

  // The dashboard: after a closing as a false positive, the rule's rate is 1.
  ASSERT_EQ(Call("POST", "/v1/cases/" + id + "/claim", alice_).status, 200);
  ASSERT_EQ(Call("POST", "/v1/cases/" + id + "/close", alice_,
                 R"({"outcome":"false_positive","text":"payroll"})")
                .status,
            200);
  const Json stats = Body(Call("GET", "/v1/cases/stats", alice_));
  EXPECT_EQ(stats["cases"], 2);
  EXPECT_EQ(stats["states"]["closed"], 1);
  EXPECT_EQ(stats["states"]["open"], 1);
  EXPECT_EQ(stats["outcomes"]["false_positive"], 1);
  ASSERT_EQ(stats["reasons"].size(), 1u) << stats.dump();
  EXPECT_EQ(stats["reasons"][0]["reason"], "large");
  EXPECT_EQ(stats["reasons"][0]["cases"], 2);
  EXPECT_EQ(stats["reasons"][0]["false_positive_rate"], 1.0);
  EXPECT_FALSE(stats["close_hours_median"].is_null());
  ASSERT_EQ(stats["bands"].size(), 11u);
  // The same figures as metrics, for alerting on a rule whose false positives climb.
  const std::string metrics = Call("GET", "/metrics", alice_).body;
  EXPECT_EQ(
      testing::MetricValue(metrics, R"(vigil_case_false_positive_rate_by_rule{rule="large"})"), 1.0)
      << metrics;
  EXPECT_EQ(testing::MetricValue(metrics, R"(vigil_cases{state="closed"})"), 1.0);
  EXPECT_EQ(testing::MetricValue(metrics, R"(vigil_cases{state="open"})"), 1.0);

  // A report draft for a suspicious closing only (four eyes: bob approves alice's closing).
  {
    const TestHttpResponse r = Call("GET", "/v1/cases/" + id + "/report", alice_);
    EXPECT_EQ(r.status, 409) << r.body;
  }
  const std::string other_id = listed["cases"][1]["id"];
  ASSERT_EQ(Call("POST", "/v1/cases/" + other_id + "/claim", alice_).status, 200);
  ASSERT_EQ(Call("POST", "/v1/cases/" + other_id + "/close", alice_,
                 R"({"outcome":"suspicious_reported","text":"funds moved on at once & in full"})")
                .status,
            200);
  ASSERT_EQ(Call("POST", "/v1/cases/" + other_id + "/approve", bob_).status, 200);
  const TestHttpResponse goaml = Call("GET", "/v1/cases/" + other_id + "/report", alice_);
  ASSERT_EQ(goaml.status, 200) << goaml.body;
  EXPECT_THAT(goaml.Header("Content-Type"), HasSubstr("application/xml"));
  EXPECT_THAT(goaml.Header("Content-Disposition"), HasSubstr(".goaml.xml"));
  EXPECT_THAT(goaml.body, HasSubstr("<report_code>STR</report_code>"));
  EXPECT_THAT(goaml.body, HasSubstr("<reason>funds moved on at once &amp; in full</reason>"));
  const std::string other_tx =
      Body(Call("GET", "/v1/cases/" + other_id, alice_))["alerts"][0]["transaction_id"];
  EXPECT_THAT(goaml.body, HasSubstr("<transactionnumber>" + other_tx + "</transactionnumber>"));
  EXPECT_THAT(goaml.body, HasSubstr("<currency_code_local>USD</currency_code_local>"));
  const TestHttpResponse html =
      Call("GET", "/v1/cases/" + other_id + "/report?format=html", alice_);
  ASSERT_EQ(html.status, 200);
  EXPECT_THAT(html.Header("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(html.body, HasSubstr("funds moved on at once &amp; in full"));
  EXPECT_EQ(Call("GET", "/v1/cases/" + other_id + "/report?format=pdf", alice_).status, 400);
}

TEST_F(VigilServerCasesTest, AClearedScreeningHitChangesLaterDecisionsUntilWithdrawn) {
  const std::string list = dir_ + "/list.csv";
  std::ofstream(list) << "id,name,aliases,type,countries,identifiers,list\n"
                         "T1,ACME SANCTIONED TRADING LLC,,entity,Iran,,TEST LIST\n";
  server_.reset();
  config_.screening.lists = {list};
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // 120 USD to a listed name: blocked by the screening alone.
  const auto pay = [&](const std::string& id) {
    const std::string body =
        absl::StrCat(R"({"id":")", id, R"(","timestamp":"2022-09-01T08:00:00Z",)",
                     R"("originator":{"account_id":"A1","bank_id":"B1","name":"Maria Lopez"},)",
                     R"("beneficiary":{"account_id":"A2","bank_id":"B2",)",
                     R"("name":"ACME SANCTIONED TRADING LLC"},)",
                     R"("amount":{"value":"120.00","currency":"USD"}})");
    const TestHttpResponse r = Call("POST", "/v1/score", scorer_, body);
    EXPECT_EQ(r.status, 200) << r.body;
    return Body(r);
  };
  ASSERT_EQ(pay("s1")["action"], "BLOCK");
  const Json listed = AwaitCases(1);
  ASSERT_EQ(listed["total"], 1) << listed.dump();
  const std::string id = listed["cases"][0]["id"];
  const uint64_t seq = Body(Call("GET", "/v1/cases/" + id, alice_))["alerts"][0]["sequence"];
  const std::string route = "/v1/cases/" + id + "/screening";
  const std::string until = FormatUtc(RealClock().Now() + std::chrono::hours(24 * 30));
  const std::string clear =
      absl::StrCat(R"({"sequence":)", seq, R"(,"hit":"TEST LIST:T1","verdict":"cleared",)",
                   R"("expires":")", until, R"(","text":"a namesake"})");
  // Only the holder reviews; the request must be whole.
  EXPECT_EQ(Call("POST", route, alice_, clear).status, 409);
  ASSERT_EQ(Call("POST", "/v1/cases/" + id + "/claim", alice_).status, 200);
  const auto field_of = [&](const std::string& body) {
    const TestHttpResponse r = Call("POST", route, alice_, body);
    EXPECT_EQ(r.status, 400) << r.body;
    return Body(r)["error"]["field"].get<std::string>();
  };
  EXPECT_EQ(field_of(absl::StrCat(R"({"sequence":)", seq, R"(,"hit":"TEST LIST:T1","text":"x"})")),
            "verdict");
  EXPECT_EQ(field_of(absl::StrCat(R"({"sequence":)", seq,
                                  R"(,"hit":"TEST LIST:T9","verdict":"false_match","text":"x"})")),
            "hit");
  EXPECT_EQ(field_of(absl::StrCat(R"({"sequence":)", seq,
                                  R"(,"hit":"TEST LIST:T1","verdict":"true_match",)",
                                  R"("expires":")", until, R"(","text":"x"})")),
            "expires");
  EXPECT_EQ(field_of(absl::StrCat(R"({"sequence":)", seq + 100,
                                  R"(,"hit":"TEST LIST:T1","verdict":"false_match","text":"x"})")),
            "sequence");
  const TestHttpResponse cleared = Call("POST", route, alice_, clear);
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  const Json timeline = Body(Call("GET", "/v1/cases/" + id, alice_))["timeline"];
  ASSERT_EQ(timeline.size(), 2u) << timeline.dump();
  EXPECT_EQ(timeline[1]["kind"], "review_hit");
  EXPECT_EQ(timeline[1]["party"], "account:A2");
  EXPECT_EQ(timeline[1]["verdict"], "cleared");
  const Json held = Body(Call("GET", "/v1/screening/clearances", alice_));
  ASSERT_EQ(held["clearances"].size(), 1u) << held.dump();
  EXPECT_EQ(held["clearances"][0]["case"], id);
  EXPECT_EQ(Call("GET", "/v1/screening/clearances", scorer_).status, 403);

  // The same payment again: allowed, the hit recorded as cleared.
  const Json next = pay("s2");
  EXPECT_EQ(next["action"], "ALLOW") << next.dump();
  bool recorded = false;
  for (const Json& r : next["reasons"]) {
    if (r["kind"] == "screening") {
      EXPECT_EQ(r.value("shadow", false), true) << r.dump();
      EXPECT_THAT(r["text"].get<std::string>(), HasSubstr("cleared for this party by " + id));
      recorded = true;
    }
  }
  EXPECT_TRUE(recorded) << next.dump();

  // Across a restart; then a true match withdraws it.
  server_.reset();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(pay("s3")["action"], "ALLOW");
  const TestHttpResponse matched =
      Call("POST", route, alice_,
           absl::StrCat(R"({"sequence":)", seq,
                        R"(,"hit":"TEST LIST:T1","verdict":"true_match","text":"confirmed"})"));
  ASSERT_EQ(matched.status, 200) << matched.body;
  EXPECT_EQ(pay("s4")["action"], "BLOCK");
  EXPECT_TRUE(Body(Call("GET", "/v1/screening/clearances", alice_))["clearances"].empty());
}

TEST_F(VigilServerCasesTest, AttachmentsAreBoundedRecordedAndCheckedAgainstTheLog) {
  ASSERT_EQ(Call("POST", "/v1/score", scorer_, Payment("p1", "A1", "5000.00", 1)).status, 200);
  const Json listed = AwaitCases(1);
  ASSERT_EQ(listed["total"], 1) << listed.dump();
  const std::string id = listed["cases"][0]["id"];
  ASSERT_EQ(Call("POST", "/v1/cases/" + id + "/claim", alice_).status, 200);
  const auto attach = [&](const std::string& query, const std::string& type,
                          const std::string& body, const std::string& token) {
    absl::StatusOr<TestHttpResponse> r =
        HttpOnce(server_->port(), "POST", "/v1/cases/" + id + "/attachments" + query, body,
                 Headers{{"Authorization", "Bearer " + token}, {"Content-Type", type}});
    EXPECT_OK(r);
    return r.ok() ? *r : TestHttpResponse{};
  };
  const std::string statement = "date,amount\n2022-09-01,5000.00\n";
  const TestHttpResponse added =
      attach("?name=statement.csv&text=bank%20statement", "text/csv", statement, alice_);
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(Body(added)["case"]["attachments"], 1);
  // Refused: another analyst while it is held, a path as a name, an unlisted type, too big.
  EXPECT_EQ(attach("?name=x.csv", "text/csv", statement, bob_).status, 409);
  EXPECT_EQ(Body(attach("?name=..%2Fx", "text/csv", statement, alice_))["error"]["field"], "name");
  EXPECT_EQ(Body(attach("?name=x.html", "text/html", "<b>", alice_))["error"]["field"],
            "Content-Type");
  EXPECT_EQ(Body(attach("?name=x.csv", "text/csv", "", alice_))["error"]["field"], "body");
  const Json timeline = Body(Call("GET", "/v1/cases/" + id, alice_))["timeline"];
  ASSERT_EQ(timeline.size(), 2u) << timeline.dump();
  EXPECT_EQ(timeline[1]["kind"], "attach");
  EXPECT_EQ(timeline[1]["file_name"], "statement.csv");
  EXPECT_EQ(timeline[1]["size"], statement.size());
  const std::string sha = timeline[1]["sha256"];
  EXPECT_EQ(sha, Sha256Hex(statement));
  const TestHttpResponse got = Call("GET", "/v1/cases/" + id + "/attachment?sha256=" + sha, bob_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.body, statement);
  EXPECT_EQ(got.Header("Content-Type"), "text/csv");
  EXPECT_THAT(got.Header("Content-Disposition"), HasSubstr("statement.csv"));
  EXPECT_THAT(got.Header("Content-Security-Policy"), HasSubstr("sandbox"));
  EXPECT_EQ(
      Call("GET", "/v1/cases/" + id + "/attachment?sha256=" + std::string(64, 'a'), bob_).status,
      404);
  EXPECT_EQ(Call("GET", "/v1/cases/" + id + "/attachment?sha256=xyz", bob_).status, 400);

  // Someone with the disk alters the stored bytes: the digest in the log gives it away.
  server_.reset();
  {
    KvStoreOptions options;
    options.path = config_.data_dir + "/features";
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    ASSERT_OK(store);
    ASSERT_OK((*store)->Put(cases::kCasesFamily, absl::StrCat("attachment/", id, "/", sha),
                            "date,amount\n2022-09-01,50.00\n"));
  }
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse altered =
      Call("GET", "/v1/cases/" + id + "/attachment?sha256=" + sha, alice_);
  EXPECT_EQ(altered.status, 500) << altered.body;
  EXPECT_THAT(altered.body, HasSubstr("attachment_altered"));
}

TEST_F(VigilServerCasesTest, AnAdminActsAsSupervisor) {
  absl::StatusOr<std::string> admin = AccessTokens::Create(config_.data_dir, Role::kAdmin, "ops");
  ASSERT_OK(admin);
  server_.reset();  // the token file is read at start
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_EQ(Call("POST", "/v1/score", scorer_, Payment("p1", "A1", "5000.00", 1)).status, 200);
  const Json listed = AwaitCases(1);
  ASSERT_EQ(listed["total"], 1) << listed.dump();
  const std::string id = listed["cases"][0]["id"];
  // Assigning is a supervisor's: the analyst may not, the admin may.
  EXPECT_EQ(Call("POST", "/v1/cases/" + id + "/assign", alice_, R"({"assignee":"token:x"})").status,
            403);
  const TestHttpResponse assigned =
      Call("POST", "/v1/cases/" + id + "/assign", *admin, R"({"assignee":"token:x"})");
  ASSERT_EQ(assigned.status, 200) << assigned.body;
  EXPECT_EQ(Body(assigned)["case"]["owner"], "token:x");
}

TEST_F(VigilServerCasesTest, TheWorkbenchIsServedWithItsSecurityHeaders) {
  absl::StatusOr<TestHttpResponse> page = HttpOnce(server_->port(), "GET", "/ui", "");
  ASSERT_OK(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->Header("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(page->body, HasSubstr("/ui/app.js"));
  EXPECT_THAT(page->Header("Content-Security-Policy"), HasSubstr("script-src 'self'"));
  EXPECT_THAT(page->Header("Content-Security-Policy"), HasSubstr("frame-ancestors 'none'"));
  EXPECT_EQ(page->Header("X-Content-Type-Options"), "nosniff");
  absl::StatusOr<TestHttpResponse> script = HttpOnce(server_->port(), "GET", "/ui/app.js", "");
  ASSERT_OK(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_THAT(script->Header("Content-Type"), HasSubstr("text/javascript"));
  EXPECT_GT(script->body.size(), 10'000u);
  const std::string etag = script->Header("ETag");
  ASSERT_FALSE(etag.empty());
  absl::StatusOr<TestHttpResponse> again =
      HttpOnce(server_->port(), "GET", "/ui/app.js", "", Headers{{"If-None-Match", etag}});
  ASSERT_OK(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  absl::StatusOr<TestHttpResponse> none = HttpOnce(server_->port(), "GET", "/ui/secrets", "");
  ASSERT_OK(none);
  EXPECT_EQ(none->status, 404);
}

TEST_F(VigilServerCasesTest, CasesCanBeTurnedOffAndTheirPolicyConfigured) {
  absl::StatusOr<ServeConfig> parsed = ServeConfig::Parse(
      "cases: {window_hours: 48, sla_hours: 12, four_eyes_block: false}\n", "c.yaml");
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->cases.window, std::chrono::hours(48));
  EXPECT_EQ(parsed->cases.sla, std::chrono::hours(12));
  EXPECT_FALSE(parsed->cases.four_eyes_block);
  EXPECT_TRUE(parsed->cases.four_eyes_suspicious);
  EXPECT_FALSE(ServeConfig::Parse("cases: {sla_hours: 0}\n", "c.yaml").ok());

  server_.reset();
  config_.cases.enabled = false;
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const TestHttpResponse off = Call("GET", "/v1/cases", alice_);
  EXPECT_EQ(off.status, 404);
  EXPECT_THAT(off.body, HasSubstr("cases.enabled is false"));
}

TEST_F(VigilServerCasesTest, WithoutNamedAnalystsCasesAreRefused) {
  server_.reset();
  config_.auth.mode = "none";
  ASSERT_NO_FATAL_FAILURE(StartServer());
  absl::StatusOr<TestHttpResponse> r = HttpOnce(server_->port(), "GET", "/v1/cases", "");
  ASSERT_OK(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_THAT(r->body, HasSubstr("named analysts"));
}

}  // namespace
}  // namespace vigil
